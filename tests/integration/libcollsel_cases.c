/* An MPI program that knows nothing of libcollsel (tests/integration/test_libcollsel.py runs it
 * with and without LD_PRELOAD=libcollsel.so): MPI_Bcast and MPI_Reduce over roots, datatypes,
 * operations (a non-commutative user op among them), MPI_IN_PLACE, sub-communicators,
 * MPI_COMM_SELF and an inter-communicator, each result checked; then N communicators made, used
 * and freed. Rank 0 prints one line per case,
 *   case <name> ok|FAIL
 * and, when libcollsel is loaded (found with dlsym, so the program runs without it), its counts
 * before and after the N communicators:
 *   counts <before|after> shadows_live=L shadows_made=M states_live=S state_bytes=B
 * Usage: libcollsel_cases [N]   (N default 100). Exit 0 when every case passed. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "collsel_pmpi.h"

static int rank, size, failures;

static void report(const char *name, int ok)
{
    int all = 0;
    MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
    if (rank == 0)
        printf("case %s %s\n", name, all ? "ok" : "FAIL");
    failures += !all;
}

static int value(int r, long i)
{
    return (int)((r * 7919L + i * 13L) % 1009L) - 500;
}

/* bcast of n elements of `type` (MPI_BYTE, MPI_DOUBLE or a strided int vector) from root */
static int bcast_case(MPI_Comm comm, long n, int root, int kind)
{
    int me, ok = 1;
    long i;
    MPI_Comm_rank(comm, &me);
    if (kind == 0) {
        unsigned char *b = malloc((size_t)n + 1);
        for (i = 0; i < n; i++)
            b[i] = me == root ? (unsigned char)(i * 31 + n) : 0;
        MPI_Bcast(b, (int)n, MPI_BYTE, root, comm);
        for (i = 0; i < n; i++)
            ok &= b[i] == (unsigned char)(i * 31 + n);
        free(b);
    } else if (kind == 1) {
        double *b = malloc(((size_t)n + 1) * sizeof *b);
        for (i = 0; i < n; i++)
            b[i] = me == root ? (double)value(root, i) / 4.0 : 0.0;
        MPI_Bcast(b, (int)n, MPI_DOUBLE, root, comm);
        for (i = 0; i < n; i++)
            ok &= b[i] == (double)value(root, i) / 4.0;
        free(b);
    } else {   /* every other int of 2n: a non-contiguous type */
        MPI_Datatype strided;
        int *b = malloc((2 * (size_t)n + 1) * sizeof *b);
        MPI_Type_vector((int)n, 1, 2, MPI_INT, &strided);
        MPI_Type_commit(&strided);
        for (i = 0; i < 2 * n; i++)
            b[i] = me == root || i % 2 ? value(root, i) : 0;
        MPI_Bcast(b, 1, strided, root, comm);
        for (i = 0; i < 2 * n; i++)
            ok &= b[i] == value(root, i);
        MPI_Type_free(&strided);
        free(b);
    }
    return ok;
}

/* 2x2 integer matrices mod 1000: associative, not commutative */
static void matmul(void *in, void *inout, int *len, MPI_Datatype *type)
{
    int *a = in, *b = inout, k;
    (void)type;
    for (k = 0; k < *len; k++, a += 4, b += 4) {
        int c[4];
        c[0] = (a[0] * b[0] + a[1] * b[2]) % 1000;
        c[1] = (a[0] * b[1] + a[1] * b[3]) % 1000;
        c[2] = (a[2] * b[0] + a[3] * b[2]) % 1000;
        c[3] = (a[2] * b[1] + a[3] * b[3]) % 1000;
        memcpy(b, c, sizeof c);
    }
}

static void matrix_of(int r, long k, int *m)
{
    m[0] = (r + 2 + (int)k) % 7 + 1;
    m[1] = (r * 3 + (int)k) % 5;
    m[2] = (r + 1) % 4;
    m[3] = (r * 5 + 1 + (int)k) % 9;
}

static int sum_of(int nprocs, long i)
{
    int r, s = 0;
    for (r = 0; r < nprocs; r++)
        s += value(r, i);
    return s;
}

/* reduce of n ints: op 0 MPI_SUM, 1 MPI_MAX, 2 MPI_SUM in place at the root, 3 the
 * non-commutative matrix product (n matrices), 4 a commutative user sum */
static void usersum(void *in, void *inout, int *len, MPI_Datatype *type)
{
    int *a = in, *b = inout, k;
    (void)type;
    for (k = 0; k < *len; k++)
        b[k] += a[k];
}

static int reduce_case(MPI_Comm comm, long n, int root, int which)
{
    int me, nprocs, ok = 1, width = which == 3 ? 4 : 1;
    long i;
    int *s = malloc(((size_t)n * width + 1) * sizeof *s);
    int *r = malloc(((size_t)n * width + 1) * sizeof *r);
    MPI_Op op = MPI_SUM;
    MPI_Datatype type = MPI_INT;
    MPI_Comm_rank(comm, &me);
    MPI_Comm_size(comm, &nprocs);
    for (i = 0; i < n; i++) {
        if (which == 3)
            matrix_of(me, i, s + 4 * i);
        else
            s[i] = value(me, i);
        r[i] = -1;
    }
    if (which == 1)
        op = MPI_MAX;
    if (which == 3) {
        MPI_Type_contiguous(4, MPI_INT, &type);
        MPI_Type_commit(&type);
        MPI_Op_create(matmul, 0, &op);
    }
    if (which == 4)
        MPI_Op_create(usersum, 1, &op);
    if (which == 2 && me == root)
        MPI_Reduce(MPI_IN_PLACE, s, (int)n, type, op, root, comm);
    else
        MPI_Reduce(s, r, (int)n, type, op, root, comm);
    if (which == 2 && me == root)
        memcpy(r, s, (size_t)n * sizeof *r);
    for (i = 0; i < n && me == root; i++) {
        if (which == 3) {
            int want[4], next[4], k, len = 1;
            matrix_of(0, i, want);
            for (k = 1; k < nprocs; k++) {   /* rank order: M0 * M1 * ... */
                matrix_of(k, i, next);
                matmul(want, next, &len, NULL);
                memcpy(want, next, sizeof want);
            }
            ok &= memcmp(want, r + 4 * i, sizeof want) == 0;
        } else if (which == 1) {
            int k, want = value(0, i);
            for (k = 1; k < nprocs; k++)
                want = value(k, i) > want ? value(k, i) : want;
            ok &= r[i] == want;
        } else {
            ok &= r[i] == sum_of(nprocs, i);
        }
    }
    if (which == 3) {
        MPI_Type_free(&type);
        MPI_Op_free(&op);
    }
    if (which == 4)
        MPI_Op_free(&op);
    free(s);
    free(r);
    return ok;
}

static void print_counts(const char *when)
{
    void (*get)(collsel_pmpi_counts *);
    collsel_pmpi_counts c;
    *(void **)&get = dlsym(RTLD_DEFAULT, "collsel_pmpi_counts_get");
    if (!get || rank != 0)
        return;
    get(&c);
    printf("counts %s shadows_live=%lld shadows_made=%lld states_live=%lld state_bytes=%lld\n",
           when, (long long)c.shadows_live, (long long)c.shadows_made, (long long)c.states_live,
           (long long)c.state_bytes);
}

int main(int argc, char **argv)
{
    static const long sizes[] = {0, 1, 100, 3000, 70000};
    long comms = argc > 1 ? atol(argv[1]) : 100, k;
    int s, root, kind, which, ok;
    char name[96];
    MPI_Comm half, inter;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);

    for (kind = 0; kind < 3; kind++)
        for (root = 0; root < size; root += size - 1 > 0 ? size - 1 : 1) {
            ok = 1;
            for (s = 0; s < 5; s++)
                ok &= bcast_case(MPI_COMM_WORLD, sizes[s], root, kind);
            snprintf(name, sizeof name, "bcast-type%d-root%d", kind, root);
            report(name, ok);
        }
    /* MPI_IN_PLACE (which 2) at root 0 only: Debian's MPICH 4.0.2 (ch4:ucx) crashes in its
     * device-level reduce for an in-place reduce of >= 3000 bytes at another root, with or
     * without libcollsel (not with MPIR_CVAR_DEVICE_COLLECTIVES=none) */
    for (which = 0; which < 5; which++)
        for (root = 0; root < size && !(which == 2 && root > 0);
             root += size - 1 > 0 ? size - 1 : 1) {
            ok = 1;
            for (s = 0; s < 5; s++)
                ok &= reduce_case(MPI_COMM_WORLD, sizes[s] / (which == 3 ? 16 : 4), root,
                                  which);
            snprintf(name, sizeof name, "reduce-op%d-root%d", which, root);
            report(name, ok);
        }

    /* halves (sizes differ when size is odd: another P, and P = 1 for size 3 or 2) */
    MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &half);
    ok = 1;
    for (s = 0; s < 5; s++) {
        ok &= bcast_case(half, sizes[s], 0, 0);
        ok &= reduce_case(half, sizes[s] / 4, 0, 0);
    }
    report("split-halves", ok);
    ok = bcast_case(MPI_COMM_SELF, 100, 0, 0);
    ok &= reduce_case(MPI_COMM_SELF, 25, 0, 0);
    report("comm-self", ok);
    if (size >= 2) {   /* even ranks' leader 0, odd ranks' leader 1; bcast from world rank 0 */
        int got = -1, side = rank % 2;
        MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, side ? 0 : 1, 77, &inter);
        if (side == 0)
            got = rank == 0 ? 4242 : -1;
        MPI_Bcast(&got, 1, MPI_INT, side ? 0 : rank == 0 ? MPI_ROOT : MPI_PROC_NULL, inter);
        report("intercomm-bcast", side == 0 || got == 4242);
        MPI_Comm_free(&inter);
    }
    MPI_Comm_free(&half);

    print_counts("before");
    ok = 1;
    for (k = 0; k < comms; k++) {
        MPI_Comm c;
        MPI_Comm_dup(MPI_COMM_WORLD, &c);
        ok &= bcast_case(c, 1 + k % 5000, 0, 0);
        ok &= reduce_case(c, 1 + k % 1000, 0, 0);
        MPI_Comm_free(&c);
    }
    snprintf(name, sizeof name, "communicators-%ld", comms);
    report(name, ok);
    print_counts("after");
    MPI_Finalize();
    return failures ? 1 : 0;
}
