/* An MPI program that knows nothing of libcollsel (test_libcollsel_all.py runs it with and
 * without LD_PRELOAD=libcollsel.so): the 14 collectives on MPI_COMM_WORLD, each result checked
 * on every rank locally (the program makes no collective call of its own, so every collective
 * in a trace is a checked one). Each rank prints one line per call:
 *   check <collective> m=<m> <variant> ok|FAIL
 * Modes:
 *   libcollsel_all sizes COLL:M,M,... ...  each collective at m bytes as the benchmark calls it
 *                                          (1-byte elements, root 0, MPI_SUM, equal counts;
 *                                          m is the trees' m: reduce_scatter's total, the
 *                                          block elsewhere; barrier: m = 0)
 *   libcollsel_all cases M                 every collective at M elements per block in variants:
 *                                          root P-1, MPI_INT, MPI_IN_PLACE, a non-commutative
 *                                          user op (a op b = a), unequal counts (allgatherv,
 *                                          reduce_scatter); then MPI_Allreduce and MPI_Bcast on
 *                                          an inter-communicator (P >= 2); under MPI 4,
 *                                          MPI_Bcast_c and MPI_Allreduce_c (M <= 64)
 *   libcollsel_all comms N                 N communicators made (MPI_Comm_dup), one collective
 *                                          on each (the 14 in turn, m = 64 bytes), freed; with
 *                                          libcollsel loaded (dlsym) rank 0 prints
 *                                          counts <before|after> shadows_live=.. shadows_made=..
 *                                          states_live=.. state_bytes=..
 * Exit 0 when every check passed on this rank. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "collsel_pmpi.h"

static int rank, size, failures;
static MPI_Op take_left;   /* a op b = a: associative, not commutative */

enum variant { PLAIN = 0, ROOT_LAST = 1, INTS = 2, IN_PLACE = 4, LEFT = 8, UNEVEN = 16 };

struct call {
    const char *coll;
    MPI_Comm comm;
    long n;              /* elements per block (reduce_scatter: the total) */
    MPI_Datatype type;   /* MPI_UNSIGNED_CHAR or MPI_INT */
    int root, in_place, left, uneven;
};

static void check(const char *coll, long m, const char *variant, int ok)
{
    printf("check %s m=%ld %s %s\n", coll, m, variant, ok ? "ok" : "FAIL");
    failures += !ok;
}

static void left_fn(void *in, void *inout, int *len, MPI_Datatype *type)
{
    int size_of = 0;
    MPI_Type_size(*type, &size_of);
    memcpy(inout, in, (size_t)*len * (size_t)size_of);
}

/* rank s's element i for rank d: small, so a sum over 4 ranks fits an unsigned char */
static int datum(int s, int d, long i)
{
    return (int)((s * 61L + d * 29L + i) % 7L);
}

/* the reduction over ranks from..to of datum(s, d, i) */
static int reduced(const struct call *c, int from, int to, int d, long i)
{
    int s, sum = 0;
    if (c->left)
        return datum(from, d, i);
    for (s = from; s <= to; s++)
        sum += datum(s, d, i);
    return sum;
}

/* buffers of int or unsigned char elements */
static void put(const struct call *c, void *buf, long i, int v)
{
    if (c->type == MPI_INT)
        ((int *)buf)[i] = v;
    else
        ((unsigned char *)buf)[i] = (unsigned char)v;
}

static int get(const struct call *c, const void *buf, long i)
{
    return c->type == MPI_INT ? ((const int *)buf)[i] : ((const unsigned char *)buf)[i];
}

static void *buffer(long elements)
{
    void *b = calloc((size_t)elements + 1, sizeof(int));
    if (!b)
        MPI_Abort(MPI_COMM_WORLD, 3);
    return b;
}

/* counts and displacements of a v-call: n each, or (uneven) n + 2d for rank d */
static long layout(const struct call *c, int *counts, int *displs)
{
    long at = 0;
    int d;
    for (d = 0; d < size; d++) {
        counts[d] = (int)(c->n + (c->uneven ? 2 * d : 0));
        displs[d] = (int)at;
        at += counts[d];
    }
    return at;
}

static int run_vector(const struct call *c, void *sb, void *rb)
{
    long i;
    int ok = 1, reduce = strcmp(c->coll, "reduce") == 0, ex = strcmp(c->coll, "exscan") == 0;
    int last = strcmp(c->coll, "scan") == 0 ? rank : ex ? rank - 1 : size - 1;
    MPI_Op op = c->left ? take_left : MPI_SUM;
    int n = (int)c->n;
    for (i = 0; i < c->n; i++)
        put(c, sb, i, datum(rank, 0, i)), put(c, rb, i, datum(rank, 0, i));
    if (c->in_place && (!reduce || rank == c->root))
        sb = MPI_IN_PLACE;
    if (reduce)
        MPI_Reduce(sb, rb, n, c->type, op, c->root, c->comm);
    else if (strcmp(c->coll, "allreduce") == 0)
        MPI_Allreduce(sb, rb, n, c->type, op, c->comm);
    else if (ex)
        MPI_Exscan(sb, rb, n, c->type, op, c->comm);
    else
        MPI_Scan(sb, rb, n, c->type, op, c->comm);
    if ((reduce && rank != c->root) || last < 0)
        return 1;   /* no result here (exscan's rank 0: undefined) */
    for (i = 0; i < c->n; i++)
        ok &= get(c, rb, i) == reduced(c, 0, last, 0, i);
    return ok;
}

static int run_gathers(const struct call *c, void *sb, void *rb, int *counts, int *displs)
{
    long i, total = layout(c, counts, displs);
    int ok = 1, s, n = (int)c->n, all = c->coll[0] == 'a', mine = counts[rank];
    int result_here = all || rank == c->root;
    for (i = 0; i < mine; i++) {
        put(c, sb, i, datum(rank, 0, i));
        put(c, rb, displs[rank] + i, datum(rank, 0, i));
    }
    if (c->in_place && result_here)
        sb = MPI_IN_PLACE;
    if (strcmp(c->coll, "allgather") == 0)
        MPI_Allgather(sb, n, c->type, rb, n, c->type, c->comm);
    else if (strcmp(c->coll, "allgatherv") == 0)
        MPI_Allgatherv(sb, mine, c->type, rb, counts, displs, c->type, c->comm);
    else
        MPI_Gather(sb, n, c->type, rb, n, c->type, c->root, c->comm);
    (void)total;
    for (s = 0; s < size && result_here; s++)
        for (i = 0; i < counts[s]; i++)
            ok &= get(c, rb, displs[s] + i) == datum(s, 0, i);
    return ok;
}

static int run_scatter(const struct call *c, void *sb, void *rb)
{
    long i;
    int ok = 1, d, n = (int)c->n;
    for (d = 0; d < size && rank == c->root; d++)
        for (i = 0; i < n; i++)
            put(c, sb, d * c->n + i, datum(c->root, d, i));
    MPI_Scatter(sb, n, c->type, c->in_place && rank == c->root ? MPI_IN_PLACE : rb, n, c->type,
                c->root, c->comm);
    if (c->in_place && rank == c->root)
        return 1;   /* the root's block stays in its send buffer */
    for (i = 0; i < n; i++)
        ok &= get(c, rb, i) == datum(c->root, rank, i);
    return ok;
}

static int run_alltoall(const struct call *c, void *sb, void *rb, int *counts, int *displs)
{
    long i;
    int ok = 1, d, s, n = (int)c->n;
    void *data = c->in_place ? rb : sb;
    layout(c, counts, displs);
    for (d = 0; d < size; d++)
        for (i = 0; i < n; i++)
            put(c, data, d * c->n + i, datum(rank, d, i));
    if (c->in_place)
        sb = MPI_IN_PLACE;
    if (strcmp(c->coll, "alltoall") == 0)
        MPI_Alltoall(sb, n, c->type, rb, n, c->type, c->comm);
    else
        MPI_Alltoallv(sb, counts, displs, c->type, rb, counts, displs, c->type, c->comm);
    for (s = 0; s < size; s++)
        for (i = 0; i < n; i++)
            ok &= get(c, rb, s * c->n + i) == datum(s, rank, i);
    return ok;
}

/* reduce_scatter(_block): rank s's element j of the whole vector is datum(s, 0, j); rank r
 * gets the reduction of its block */
static int run_reduce_scatter(const struct call *c, void *sb, void *rb, int *counts,
                              int *displs)
{
    long i, total;
    int ok = 1, block = strcmp(c->coll, "reduce_scatter_block") == 0;
    MPI_Op op = c->left ? take_left : MPI_SUM;
    if (block) {
        total = layout(c, counts, displs);
    } else {   /* the total n as the benchmark splits it: n / P, one more for the first n % P */
        int d;
        for (d = 0, total = 0; d < size; total += counts[d++]) {
            counts[d] = (int)(c->n / size + (d < c->n % size)) + (c->uneven ? 2 * d : 0);
            displs[d] = (int)total;
        }
    }
    for (i = 0; i < total; i++)
        put(c, c->in_place ? rb : sb, i, datum(rank, 0, i));
    if (c->in_place)
        sb = MPI_IN_PLACE;
    if (block)
        MPI_Reduce_scatter_block(sb, rb, counts[0], c->type, op, c->comm);
    else
        MPI_Reduce_scatter(sb, rb, counts, c->type, op, c->comm);
    for (i = 0; i < counts[rank]; i++)
        ok &= get(c, rb, i) == reduced(c, 0, size - 1, 0, displs[rank] + i);
    return ok;
}

/* One call of c, checked: 1 when the result is right on this rank. */
static int run(const struct call *c)
{
    long elements = (c->n + 2L * size) * size;
    void *sb = buffer(elements), *rb = buffer(elements);
    int *counts = buffer(size), *displs = buffer(size), ok = 1;
    long i;
    const char *k = c->coll;
    if (strcmp(k, "bcast") == 0) {
        for (i = 0; i < c->n; i++)
            put(c, sb, i, rank == c->root ? datum(c->root, 0, i) : 0);
        MPI_Bcast(sb, (int)c->n, c->type, c->root, c->comm);
        for (i = 0; i < c->n; i++)
            ok &= get(c, sb, i) == datum(c->root, 0, i);
    } else if (strcmp(k, "barrier") == 0) {
        MPI_Barrier(c->comm);
    } else if (strcmp(k, "reduce") == 0 || strcmp(k, "allreduce") == 0
               || strcmp(k, "scan") == 0 || strcmp(k, "exscan") == 0) {
        ok = run_vector(c, sb, rb);
    } else if (strcmp(k, "allgather") == 0 || strcmp(k, "allgatherv") == 0
               || strcmp(k, "gather") == 0) {
        ok = run_gathers(c, sb, rb, counts, displs);
    } else if (strcmp(k, "scatter") == 0) {
        ok = run_scatter(c, sb, rb);
    } else if (strcmp(k, "alltoall") == 0 || strcmp(k, "alltoallv") == 0) {
        ok = run_alltoall(c, sb, rb, counts, displs);
    } else if (strcmp(k, "reduce_scatter") == 0 || strcmp(k, "reduce_scatter_block") == 0) {
        ok = run_reduce_scatter(c, sb, rb, counts, displs);
    } else {
        fprintf(stderr, "libcollsel_all: unknown collective %s\n", k);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    free(sb), free(rb), free(counts), free(displs);
    return ok;
}

static const char *const ALL[] = {"bcast", "reduce", "allreduce", "allgather", "allgatherv",
                                  "alltoall", "alltoallv", "barrier", "exscan", "gather",
                                  "reduce_scatter", "reduce_scatter_block", "scan", "scatter"};
#define N_ALL ((int)(sizeof ALL / sizeof *ALL))

static int is_reduction(const char *coll)
{
    return strstr(coll, "reduce") || strstr(coll, "scan");
}

static int is_rooted(const char *coll)
{
    return !strcmp(coll, "bcast") || !strcmp(coll, "reduce") || !strcmp(coll, "gather")
           || !strcmp(coll, "scatter");
}

static int has_in_place(const char *coll)
{
    return strcmp(coll, "bcast") && strcmp(coll, "barrier") && strcmp(coll, "alltoallv");
}

/* sizes mode: "COLL:M,M,..." */
static void sizes(const char *spec)
{
    char coll[64];
    const char *colon = strchr(spec, ':'), *p;
    if (!colon || (size_t)(colon - spec) >= sizeof coll)
        MPI_Abort(MPI_COMM_WORLD, 2);
    memcpy(coll, spec, (size_t)(colon - spec));
    coll[colon - spec] = '\0';
    for (p = colon + 1; *p; p += *p == ',') {
        char *end;
        long m = strtol(p, &end, 10);
        struct call c = {coll, MPI_COMM_WORLD, m, MPI_UNSIGNED_CHAR, 0, 0, 0, 0};
        check(coll, m, "plain", run(&c));
        p = end;
    }
}

static const char *variant_name(int v)
{
    static char name[64];
    snprintf(name, sizeof name, "%s%s%s%s%s", v & ROOT_LAST ? "root-last," : "",
             v & INTS ? "int," : "uchar,", v & IN_PLACE ? "in-place," : "",
             v & LEFT ? "noncommutative," : "", v & UNEVEN ? "uneven," : "");
    name[strlen(name) - 1] = '\0';
    return name;
}

static void cases(long n)
{
    static const int variants[] = {PLAIN, ROOT_LAST, INTS, INTS | ROOT_LAST, IN_PLACE,
                                   IN_PLACE | ROOT_LAST | INTS, LEFT, LEFT | INTS | IN_PLACE,
                                   UNEVEN};
    int k, v;
    for (k = 0; k < N_ALL; k++)
        for (v = 0; v < (int)(sizeof variants / sizeof *variants); v++) {
            int f = variants[v];
            const char *coll = ALL[k];
            struct call c = {coll, MPI_COMM_WORLD, n, f & INTS ? MPI_INT : MPI_UNSIGNED_CHAR,
                             f & ROOT_LAST ? size - 1 : 0, !!(f & IN_PLACE), !!(f & LEFT),
                             !!(f & UNEVEN)};
            if ((f & ROOT_LAST && !is_rooted(coll)) || (f & IN_PLACE && !has_in_place(coll))
                || (f & LEFT && !is_reduction(coll))
                || (f & UNEVEN && strcmp(coll, "allgatherv") && strcmp(coll, "reduce_scatter")))
                continue;
            check(coll, n, variant_name(f), run(&c));
        }
#if MPI_VERSION >= 4
    {   /* MPI 4's large-count variants (what mpi4py calls), 1-byte elements */
        unsigned char b[64] = {0}, sum[64] = {0};
        int ok = 1, s;
        long i;
        for (i = 0; i < n && i < 64; i++)
            b[i] = rank == 0 ? (unsigned char)datum(0, 0, i) : 0;
        MPI_Bcast_c(b, (MPI_Count)n, MPI_UNSIGNED_CHAR, 0, MPI_COMM_WORLD);
        for (i = 0; i < n && i < 64; i++)
            ok &= b[i] == datum(0, 0, i);
        check("bcast", n, "large-count", ok);
        for (i = 0; i < n && i < 64; i++)
            b[i] = (unsigned char)datum(rank, 0, i);
        MPI_Allreduce_c(b, sum, (MPI_Count)n, MPI_UNSIGNED_CHAR, MPI_SUM, MPI_COMM_WORLD);
        for (ok = 1, i = 0; i < n && i < 64; i++) {
            int want = 0;
            for (s = 0; s < size; s++)
                want += datum(s, 0, i);
            ok &= sum[i] == want;
        }
        check("allreduce", n, "large-count", ok);
    }
#endif
    if (size >= 2) {   /* an inter-communicator: even ranks and odd ranks */
        MPI_Comm half, inter;
        int x = rank + 1, sum = 0, b = rank == 0 ? 42 : 0, ok;
        MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &half);
        MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, 1 - rank % 2, 7, &inter);
        MPI_Allreduce(&x, &sum, 1, MPI_INT, MPI_SUM, inter);
        for (ok = 0, x = 0; x < size; x++)   /* the other group's sum */
            ok += x % 2 != rank % 2 ? x + 1 : 0;
        check("allreduce", 4, "inter", sum == ok);
        MPI_Bcast(&b, 1, MPI_INT, rank == 0 ? MPI_ROOT : rank % 2 ? 0 : MPI_PROC_NULL, inter);
        check("bcast", 4, "inter", rank % 2 == 0 || b == 42);
        MPI_Comm_free(&inter);
        MPI_Comm_free(&half);
    }
}

static void print_counts(const char *when)
{
    void (*get_counts)(collsel_pmpi_counts *) =
        (void (*)(collsel_pmpi_counts *))dlsym(RTLD_DEFAULT, "collsel_pmpi_counts_get");
    collsel_pmpi_counts k;
    if (!get_counts || rank != 0)
        return;
    get_counts(&k);
    printf("counts %s shadows_live=%lld shadows_made=%lld states_live=%lld state_bytes=%lld\n",
           when, (long long)k.shadows_live, (long long)k.shadows_made,
           (long long)k.states_live, (long long)k.state_bytes);
}

static void comms(long n)
{
    long i;
    int ok = 1;
    print_counts("before");
    for (i = 0; i < n; i++) {
        MPI_Comm dup;
        const char *coll = ALL[i % N_ALL];
        struct call c = {coll, MPI_COMM_NULL, strcmp(coll, "barrier") ? 64 : 0,
                         MPI_UNSIGNED_CHAR, 0, 0, 0, 0};
        MPI_Comm_dup(MPI_COMM_WORLD, &dup);
        c.comm = dup;
        ok &= run(&c);
        MPI_Comm_free(&dup);
    }
    print_counts("after");
    check("all", 64, "communicators", ok);
}

int main(int argc, char **argv)
{
    int a;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Op_create(left_fn, 0, &take_left);
    if (argc >= 2 && strcmp(argv[1], "sizes") == 0) {
        for (a = 2; a < argc; a++)
            sizes(argv[a]);
    } else if (argc == 3 && strcmp(argv[1], "cases") == 0) {
        cases(atol(argv[2]));
    } else if (argc == 3 && strcmp(argv[1], "comms") == 0) {
        comms(atol(argv[2]));
    } else {
        if (rank == 0)
            fprintf(stderr, "usage: libcollsel_all sizes COLL:M,M.. | cases M | comms N\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    MPI_Op_free(&take_left);
    MPI_Finalize();
    return failures != 0;
}
