/* dec_fixed_all: one call of each given collective at each given message size m, each on a
 * communicator of its own (MPI_Comm_dup, in argument order: collsel_coll_probe.c names
 * communicators by that order), with 1-byte elements (MPI_BYTE; MPI_UNSIGNED_CHAR and MPI_SUM
 * for the reductions), root 0 and equal counts, so that the quantity
 * Open MPI's fixed decision computes is m (docs/guide/collectives.md, "What m means"):
 * one rank's block for allgather(v), alltoall(v), gather, scatter, reduce_scatter_block; the
 * vector for allreduce, bcast, reduce, scan, exscan; the sum of the counts for reduce_scatter
 * (m split over the ranks, the first m % P one byte more); barrier has none (give m = 0).
 *
 *   dec_fixed_all COLLECTIVE:M[,M...] [COLLECTIVE:M[,M...] ...]
 *
 * Every rank checks its own result and, at the end, prints one line on stdout:
 *   "done rank=R calls=N failures=F"
 * and one "FAIL <collective> m=M rank=R" line per wrong result before it. Nothing else is
 * called between the collectives (no reduction of the verdicts), so that a trace of the
 * collectives holds exactly the calls asked for.
 */
#define _POSIX_C_SOURCE 200809L    /* strdup */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef unsigned char byte;

static int rank, size;

/* At most 6: a sum over up to 42 ranks stays below 256 (Debian's Open MPI 4.1.4 adds
 * MPI_UNSIGNED_CHAR with saturation in op/avx: 57 + 88 + 119 gives 255, not 8). */
static byte val(int r, long i) { return (byte)((r * 3 + i) % 7); }
static byte val2(int from, int to, long i) { return (byte)(from * 31 + to * 17 + i * 7 + 1); }

/* sum of val(r, i) over r in [lo, hi) */
static byte sum(int lo, int hi, long i)
{
    unsigned s = 0;
    for (int r = lo; r < hi; r++)
        s += val(r, i);
    return (byte)s;
}

static void *xmalloc(size_t n) { void *p = malloc(n ? n : 1); if (!p) abort(); return p; }

/* Run `coll` at m on comm; 1 when this rank's result is right. */
static int run(const char *coll, long m, MPI_Comm comm)
{
    int ok = 1, P = size;
    long i;
    if (!strcmp(coll, "barrier")) {
        return MPI_Barrier(comm) == MPI_SUCCESS;
    }
    if (!strcmp(coll, "bcast")) {
        byte *b = xmalloc(m);
        for (i = 0; i < m; i++) b[i] = rank == 0 ? val(0, i) : 0;
        MPI_Bcast(b, (int)m, MPI_BYTE, 0, comm);
        for (i = 0; i < m; i++) ok &= b[i] == val(0, i);
        free(b);
        return ok;
    }
    if (!strcmp(coll, "allreduce") || !strcmp(coll, "reduce") || !strcmp(coll, "scan")
        || !strcmp(coll, "exscan")) {
        byte *s = xmalloc(m), *r = xmalloc(m);
        for (i = 0; i < m; i++) { s[i] = val(rank, i); r[i] = 0; }
        if (!strcmp(coll, "allreduce"))
            MPI_Allreduce(s, r, (int)m, MPI_UNSIGNED_CHAR, MPI_SUM, comm);
        else if (!strcmp(coll, "reduce"))
            MPI_Reduce(s, r, (int)m, MPI_UNSIGNED_CHAR, MPI_SUM, 0, comm);
        else if (!strcmp(coll, "scan"))
            MPI_Scan(s, r, (int)m, MPI_UNSIGNED_CHAR, MPI_SUM, comm);
        else
            MPI_Exscan(s, r, (int)m, MPI_UNSIGNED_CHAR, MPI_SUM, comm);
        int lo = 0, hi = P;                               /* the ranks summed here */
        if (!strcmp(coll, "scan")) hi = rank + 1;
        if (!strcmp(coll, "exscan")) hi = rank;
        int checked = !strcmp(coll, "reduce") ? rank == 0   /* the root's result only */
                      : hi > 0;                              /* exscan: rank 0's undefined */
        for (i = 0; checked && i < m; i++) ok &= r[i] == sum(lo, hi, i);
        free(s); free(r);
        return ok;
    }
    if (!strcmp(coll, "reduce_scatter") || !strcmp(coll, "reduce_scatter_block")) {
        int block = !strcmp(coll, "reduce_scatter_block");
        int *counts = xmalloc(sizeof(int) * P);
        long total = 0, off = 0;
        for (int r = 0; r < P; r++) {
            counts[r] = block ? (int)m : (int)(m / P + (r < m % P));
            if (r < rank) off += counts[r];
            total += counts[r];
        }
        byte *s = xmalloc(total), *out = xmalloc(counts[rank]);
        for (i = 0; i < total; i++) s[i] = val(rank, i);
        if (block)
            MPI_Reduce_scatter_block(s, out, (int)m, MPI_UNSIGNED_CHAR, MPI_SUM, comm);
        else
            MPI_Reduce_scatter(s, out, counts, MPI_UNSIGNED_CHAR, MPI_SUM, comm);
        for (i = 0; i < counts[rank]; i++) ok &= out[i] == sum(0, P, off + i);
        free(s); free(out); free(counts);
        return ok;
    }
    if (!strcmp(coll, "allgather") || !strcmp(coll, "allgatherv") || !strcmp(coll, "gather")) {
        byte *s = xmalloc(m), *r = xmalloc(m * P);
        int *counts = xmalloc(sizeof(int) * P), *displs = xmalloc(sizeof(int) * P);
        for (int q = 0; q < P; q++) { counts[q] = (int)m; displs[q] = (int)(q * m); }
        for (i = 0; i < m; i++) s[i] = val(rank, i);
        memset(r, 0, m * P);
        if (!strcmp(coll, "allgather"))
            MPI_Allgather(s, (int)m, MPI_BYTE, r, (int)m, MPI_BYTE, comm);
        else if (!strcmp(coll, "allgatherv"))
            MPI_Allgatherv(s, (int)m, MPI_BYTE, r, counts, displs, MPI_BYTE, comm);
        else
            MPI_Gather(s, (int)m, MPI_BYTE, r, (int)m, MPI_BYTE, 0, comm);
        if (strcmp(coll, "gather") || rank == 0)
            for (int q = 0; q < P; q++)
                for (i = 0; i < m; i++) ok &= r[q * m + i] == val(q, i);
        free(s); free(r); free(counts); free(displs);
        return ok;
    }
    if (!strcmp(coll, "scatter")) {
        byte *s = xmalloc(m * P), *r = xmalloc(m);
        for (int q = 0; q < P; q++)
            for (i = 0; i < m; i++) s[q * m + i] = val(q, i);
        MPI_Scatter(s, (int)m, MPI_BYTE, r, (int)m, MPI_BYTE, 0, comm);
        for (i = 0; i < m; i++) ok &= r[i] == val(rank, i);
        free(s); free(r);
        return ok;
    }
    if (!strcmp(coll, "alltoall") || !strcmp(coll, "alltoallv")) {
        byte *s = xmalloc(m * P), *r = xmalloc(m * P);
        int *counts = xmalloc(sizeof(int) * P), *displs = xmalloc(sizeof(int) * P);
        for (int q = 0; q < P; q++) {
            counts[q] = (int)m; displs[q] = (int)(q * m);
            for (i = 0; i < m; i++) s[q * m + i] = val2(rank, q, i);
        }
        memset(r, 0, m * P);
        if (!strcmp(coll, "alltoall"))
            MPI_Alltoall(s, (int)m, MPI_BYTE, r, (int)m, MPI_BYTE, comm);
        else
            MPI_Alltoallv(s, counts, displs, MPI_BYTE, r, counts, displs, MPI_BYTE, comm);
        for (int q = 0; q < P; q++)
            for (i = 0; i < m; i++) ok &= r[q * m + i] == val2(q, rank, i);
        free(s); free(r); free(counts); free(displs);
        return ok;
    }
    fprintf(stderr, "dec_fixed_all: unknown collective %s\n", coll);
    MPI_Abort(MPI_COMM_WORLD, 2);
    return 0;
}

int main(int argc, char **argv)
{
    int calls = 0, failures = 0;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    for (int a = 1; a < argc; a++) {
        char *spec = strdup(argv[a]), *colon = strchr(spec, ':');
        if (!colon) {
            fprintf(stderr, "dec_fixed_all: %s: expected COLLECTIVE:M[,M...]\n", argv[a]);
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
        *colon = '\0';
        for (char *m = strtok(colon + 1, ","); m; m = strtok(NULL, ",")) {
            MPI_Comm comm;
            MPI_Comm_dup(MPI_COMM_WORLD, &comm);
            if (!run(spec, atol(m), comm)) {
                printf("FAIL %s m=%s rank=%d\n", spec, m, rank);
                failures++;
            }
            calls++;
            MPI_Comm_free(&comm);
        }
        free(spec);
    }
    printf("done rank=%d calls=%d failures=%d\n", rank, calls, failures);
    MPI_Finalize();
    return 0;
}
