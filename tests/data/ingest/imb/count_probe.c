/* PMPI probe (written for collsel, not third-party): prints, once per (call, P, count), what IMB-MPI1
   (or osu_<coll>) passes to each collective on rank 0, i.e. what its size column means.
   See PROVENANCE here and in ../osu/. */
#include <mpi.h>
#include <stdio.h>
static int seen(const char *what, int p, long n) {
    static char log[4096][64]; static int k = 0; char key[64]; int me, i;
    PMPI_Comm_rank(MPI_COMM_WORLD, &me); if (me) return 1;
    snprintf(key, sizeof key, "%s %d %ld", what, p, n);
    for (i = 0; i < k; i++) if (!__builtin_strcmp(log[i], key)) return 1;
    if (k < 4096) __builtin_strcpy(log[k++], key); return 0;
}
static void say(const char *what, MPI_Comm c, long n, MPI_Datatype t) {
    int p, s; PMPI_Comm_size(c, &p); PMPI_Type_size(t, &s);
    if (!seen(what, p, n)) fprintf(stderr, "SHIM %s P=%d bytes_arg=%ld\n", what, p, n * s);
}
int MPI_Reduce_scatter(const void *a, void *b, const int *rc, MPI_Datatype t, MPI_Op o, MPI_Comm c) {
    int p, i; long sum = 0; PMPI_Comm_size(c, &p); for (i = 0; i < p; i++) sum += rc[i];
    say("Reduce_scatter(sum of recvcounts)", c, sum, t); return PMPI_Reduce_scatter(a, b, rc, t, o, c); }
int MPI_Reduce_scatter_block(const void *a, void *b, int rc, MPI_Datatype t, MPI_Op o, MPI_Comm c) {
    say("Reduce_scatter_block(recvcount)", c, rc, t); return PMPI_Reduce_scatter_block(a, b, rc, t, o, c); }
int MPI_Allgather(const void *a, int sc, MPI_Datatype st, void *b, int rc, MPI_Datatype rt, MPI_Comm c) {
    say("Allgather(sendcount)", c, sc, st); return PMPI_Allgather(a, sc, st, b, rc, rt, c); }
int MPI_Allgatherv(const void *a, int sc, MPI_Datatype st, void *b, const int *rc, const int *d, MPI_Datatype rt, MPI_Comm c) {
    int p, i; long sum = 0; PMPI_Comm_size(c, &p); for (i = 0; i < p; i++) sum += rc[i];
    say("Allgatherv(sendcount)", c, sc, st); say("Allgatherv(sum of recvcounts)", c, sum, rt);
    return PMPI_Allgatherv(a, sc, st, b, rc, d, rt, c); }
int MPI_Alltoall(const void *a, int sc, MPI_Datatype st, void *b, int rc, MPI_Datatype rt, MPI_Comm c) {
    say("Alltoall(sendcount)", c, sc, st); return PMPI_Alltoall(a, sc, st, b, rc, rt, c); }
int MPI_Alltoallv(const void *a, const int *sc, const int *sd, MPI_Datatype st, void *b, const int *rc, const int *rd, MPI_Datatype rt, MPI_Comm c) {
    say("Alltoallv(sendcounts[0])", c, sc[0], st); return PMPI_Alltoallv(a, sc, sd, st, b, rc, rd, rt, c); }
int MPI_Gather(const void *a, int sc, MPI_Datatype st, void *b, int rc, MPI_Datatype rt, int r, MPI_Comm c) {
    say("Gather(sendcount)", c, sc, st); return PMPI_Gather(a, sc, st, b, rc, rt, r, c); }
int MPI_Scatter(const void *a, int sc, MPI_Datatype st, void *b, int rc, MPI_Datatype rt, int r, MPI_Comm c) {
    say("Scatter(recvcount)", c, rc, rt); return PMPI_Scatter(a, sc, st, b, rc, rt, r, c); }
int MPI_Scan(const void *a, void *b, int n, MPI_Datatype t, MPI_Op o, MPI_Comm c) {
    say("Scan(count)", c, n, t); return PMPI_Scan(a, b, n, t, o, c); }
int MPI_Exscan(const void *a, void *b, int n, MPI_Datatype t, MPI_Op o, MPI_Comm c) {
    say("Exscan(count)", c, n, t); return PMPI_Exscan(a, b, n, t, o, c); }
int MPI_Allreduce(const void *a, void *b, int n, MPI_Datatype t, MPI_Op o, MPI_Comm c) {
    say("Allreduce(count)", c, n, t); return PMPI_Allreduce(a, b, n, t, o, c); }
