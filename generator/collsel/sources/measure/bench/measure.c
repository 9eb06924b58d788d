/* The measuring loops (measure.h). The harness's calls are PMPI_*; run_once makes the measured
 * ones. */
#include "measure.h"

#include <string.h>

#include "experiments.h"
#include "output.h"
#include "round_probe.h"
#include "timing.h"

/* The buffer holding the call's result (bcast: its one buffer). */
static unsigned char *result_buffer(const struct options *o, const struct bufs *bf)
{
    return COLLS[o->coll].data == D_BCAST ? bf->a : bf->b;
}

/* Bytes of this rank's result at the current size. */
static size_t result_bytes(const struct options *o, const struct bufs *bf, int rank, int nprocs)
{
    return coll_result_bytes(&COLLS[o->coll], &bf->shape, rank, nprocs);
}

static void prepare(const struct options *o, struct bufs *bf, int rank, int nprocs,
                    unsigned long long m)
{
    if (o->coll == COLL_NONE)   /* LMO experiments: data not checked */
        return;
    coll_shape(&COLLS[o->coll], m, nprocs, &bf->shape);
    coll_prepare(&COLLS[o->coll], bf->a, bf->b, &bf->shape, rank, nprocs, m);
}

/* The first wrong byte of this rank's result, -1 if none (reduce, gather: the root's only). */
static long verify(const struct options *o, const struct bufs *bf, int rank, int nprocs,
                   unsigned long long m)
{
    if (o->coll == COLL_NONE)
        return -1;
    const struct coll_spec *c = &COLLS[o->coll];
    const unsigned char *res = result_buffer(o, bf);
    if (c->root_only && c->data != D_SCATTER && rank != 0)
        return -1;
    for (size_t j = 0, n = result_bytes(o, bf, rank, nprocs); j < n; j++) {
        int want = coll_expected(c, j, &bf->shape, rank, nprocs, m);
        if (want >= 0 && res[j] != (unsigned)want)
            return (long)j;
    }
    return -1;
}

/* Abort (exit 5) when the call just made gave a wrong result; `method` names the paired-mode
 * method (NULL in the per-launch mode). --fault corrupt@M damages the last byte of one rank's
 * result first (test hook). */
static void check_result(const struct options *o, struct bufs *bf, int rank, int nprocs,
                         unsigned long long m, const char *method)
{
    size_t n = o->coll == COLL_NONE ? 0 : result_bytes(o, bf, rank, nprocs);
    if (o->fault == FAULT_CORRUPT && m == o->fault_size && n > 0 &&
        rank == coll_fault_rank(&COLLS[o->coll], nprocs))
        result_buffer(o, bf)[n - 1] ^= 0xffu;
    long bad = verify(o, bf, rank, nprocs, m);
    if (bad < 0)
        return;
    fprintf(stderr, "collsel_bench: rank %d: wrong result at byte %ld of a %llu-byte %s", rank,
            bad, m, COLLS[o->coll].name);
    if (method)
        fprintf(stderr, " (method %s)", method);
    fprintf(stderr, "\n");
    PMPI_Abort(MPI_COMM_WORLD, 5);
}

/* A hierarchical method (docs/formats/benchmark-output.md): measured calls on the group and
 * leaders communicators; the reduce's group result goes through bf->tmp on the leaders. */
static void run_hier(const struct options *o, struct bufs *bf, int count, const struct method *mt)
{
    if (o->coll == COLL_BCAST) {
        if (mt->leaders != MPI_COMM_NULL)
            BENCH_CHECK(MPI_Bcast(bf->a, count, MPI_BYTE, 0, mt->leaders));
        BENCH_CHECK(MPI_Bcast(bf->a, count, MPI_BYTE, 0, mt->group));
        return;
    }
    BENCH_CHECK(MPI_Reduce(bf->a, bf->tmp, count, MPI_UNSIGNED_CHAR, MPI_SUM, 0, mt->group));
    if (mt->leaders != MPI_COMM_NULL)
        BENCH_CHECK(MPI_Reduce(bf->tmp, bf->b, count, MPI_UNSIGNED_CHAR, MPI_SUM, 0,
                               mt->leaders));
}

/* One measured call; its MPI error code (the per-method communicators return errors, see
 * forcing.c; experiments, hierarchical methods and the per-launch mode abort instead). */
static int run_once(const struct options *o, struct bufs *bf, unsigned long long m, MPI_Comm comm,
                    int k)
{
    if (k >= 0 && o->methods[k].groups)
        run_hier(o, bf, (int)m, &o->methods[k]);
    else if (o->experiment != EXP_NONE)
        experiment_run(o, bf, (int)m);
    else
        return COLLS[o->coll].call(bf->a, bf->b, &bf->shape, comm);
    return MPI_SUCCESS;
}

/* All ranks: whether a call of method k failed on any rank (its communicator returns errors);
 * the per-launch mode stops at once, as BENCH_CHECK would. */
static int failed_anywhere(int rc, int k)
{
    int bad = rc != MPI_SUCCESS, any = 0;
    BENCH_CHECK(PMPI_Allreduce(&bad, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD));
    if (k < 0)
        BENCH_CHECK(rc);
    return any;
}

/* Warm-up on `comm`; the first call is also checked for a correct result. Further warm-up
 * calls only while cheap: rank 0's first duration, returned to all ranks, decides. A method
 * whose first call fails (k >= 0) gets *failed = 1 and no more calls. */
static double warm_up(const struct options *o, const struct forcing *fs, struct bufs *bf,
                      int rank, int nprocs, unsigned long long m, MPI_Comm comm, int k,
                      int *failed)
{
    prepare(o, bf, rank, nprocs, m);
    BENCH_CHECK(PMPI_Barrier(MPI_COMM_WORLD));
    forcing_select(o, fs, k, 1);
    double first = timing_now();
    int rc = run_once(o, bf, m, comm, k);
    first = timing_now() - first;
    forcing_select(o, fs, k, 0);
    if ((*failed = failed_anywhere(rc, k)) != 0)
        return 0;
    check_result(o, bf, rank, nprocs, m, k >= 0 ? o->methods[k].alg : NULL);
    BENCH_CHECK(PMPI_Bcast(&first, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD));
    long extra = o->warmup > 1 ? o->warmup - 1 : 0;
    if (first > 0 && extra > (long)(0.1 * o->time_cap / first))
        extra = (long)(0.1 * o->time_cap / first);
    forcing_select(o, fs, k, 1);
    for (long w = 0; w < extra && rc == MPI_SUCCESS; w++)
        rc = run_once(o, bf, m, comm, k);
    forcing_select(o, fs, k, 0);
    *failed = failed_anywhere(rc, k);
    return first;
}

/* Repetition i: one call after a barrier, this rank's start and end (global) or duration.
 * k: the paired-mode method, -1 in the per-launch mode. Returns the call's error code. */
static int timed_call(const struct options *o, const struct forcing *fs, struct bufs *bf,
                      int rank, int global, unsigned long long m, MPI_Comm comm, int k,
                      struct samples *sp, long i)
{
    BENCH_CHECK(PMPI_Barrier(MPI_COMM_WORLD));
    forcing_select(o, fs, k, 1);
    double t0 = timing_now();
    int rc = run_once(o, bf, m, comm, k);
    double t1 = timing_now();
    forcing_select(o, fs, k, 0);
    if (k < 0)
        BENCH_CHECK(rc);
    sp->starts[i] = t0;
    sp->local[i] = global ? t1 : t1 - t0;   /* end time, or duration */
    if (experiment_root_timed(o) && rank != 0)
        sp->local[i] = 0;                   /* the root's time only */
    return rc;
}

void measure_point(const struct options *o, const struct forcing *fs, struct bufs *bf,
                   struct samples *sp, int rank, int nprocs, int global, unsigned long long m,
                   struct stats *out)
{
    int failed = 0;
    double first = warm_up(o, fs, bf, rank, nprocs, m, MPI_COMM_WORLD, -1, &failed);
    long n = 0, batch = timing_first_batch(o, first);
    struct stats st = {0, 0, 0, 0, 0, 0, 0};
    double start = timing_now();
    while (batch > 0) {
        for (long i = n; i < n + batch; i++)
            timed_call(o, fs, bf, rank, global, m, MPI_COMM_WORLD, -1, sp, i);
        timing_collect(sp, n, batch, global, rank);
        n += batch;
        long next = 0;
        if (rank == 0) {
            timing_stats(sp->maxed, n, sp->scratch, &st);
            next = timing_next_batch(o, n, timing_now() - start, st.ci <= o->rel_ci * st.mean,
                                     st.ci / (o->rel_ci * st.mean));
        }
        BENCH_CHECK(PMPI_Bcast(&next, 1, MPI_LONG, 0, MPI_COMM_WORLD));
        batch = next;
    }
    *out = st;
}

void measure_single(const struct options *o, const struct forcing *fs, struct bufs *bf,
                    struct samples *sp, int rank, int nprocs, int global, unsigned long long m)
{
    struct stats st;
    measure_point(o, fs, bf, sp, rank, nprocs, global, m, &st);
    if (rank == 0)
        output_point(m, &st, o->rel_ci);
}

/* splitmix64 (Steele et al. 2014): a tiny PRNG whose stream depends only on the seed, so all
 * ranks shuffle alike without communicating. */
static uint64_t splitmix64(uint64_t *state)
{
    uint64_t z = (*state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

/* order = a uniformly shuffled 0..n-1 (Fisher-Yates; rejection sampling avoids modulo bias). */
static void shuffle(int *order, int n, uint64_t *state)
{
    for (int k = 0; k < n; k++)
        order[k] = k;
    for (int i = n - 1; i > 0; i--) {
        uint64_t bound = (uint64_t)i + 1, limit = UINT64_MAX - UINT64_MAX % bound, x;
        do
            x = splitmix64(state);
        while (x >= limit);
        int j = (int)(x % bound), t = order[i];
        order[i] = order[j];
        order[j] = t;
    }
}

/* Rank 0: statistics of every usable method (dead[k] == 0) over rounds [0, n); whether all
 * meet the CI target and the largest CI / target ratio. */
static int method_stats(const struct options *o, struct samples *sp, long n, const int *dead,
                        struct stats *st, double *ratio)
{
    int nm = o->nmethods, met = 1;
    *ratio = 0;
    for (int k = 0; k < nm; k++) {
        if (dead[k])
            continue;
        for (long r = 0; r < n; r++)
            sp->column[r] = sp->maxed[r * nm + k];
        timing_stats(sp->column, n, sp->scratch, &st[k]);
        met &= st[k].ci <= o->rel_ci * st[k].mean;
        double q = st[k].ci / (o->rel_ci * st[k].mean);
        if (!(q <= *ratio))
            *ratio = q;
    }
    return met;
}

/* A method whose call fails (MPI error on its communicator) is unusable at this size: no more
 * calls of it, no line, listed in `#@unusable.M=`; the others go on. */
void measure_paired(const struct options *o, const struct forcing *fs, struct bufs *bf,
                    struct samples *sp, int rank, int nprocs, int global, unsigned long long m,
                    uint64_t *rng, FILE *raw)
{
    int nm = o->nmethods, dead[MAX_METHODS], failed[MAX_METHODS], alive = 0;
    struct stats st[MAX_METHODS];
    double round_first = 0, ratio = 0;
    for (int k = 0; k < nm; k++) {
        round_first += warm_up(o, fs, bf, rank, nprocs, m, o->methods[k].comm, k, &dead[k]);
        alive += !dead[k];
    }
    long n = 0, batch = alive ? timing_first_batch(o, round_first) : 0;
    int met = 0;
    double start = timing_now();
    while (batch > 0) {
        memset(failed, 0, sizeof failed);
        for (long r = n; r < n + batch; r++) {
            round_probe_run(r);
            shuffle(sp->order + r * nm, nm, rng);
            for (int j = 0; j < nm; j++) {
                int k = sp->order[r * nm + j];
                if (!dead[k] && !failed[k])
                    failed[k] = timed_call(o, fs, bf, rank, global, m, o->methods[k].comm, k,
                                           sp, r * nm + k) != MPI_SUCCESS;
                else
                    sp->local[r * nm + k] = sp->starts[r * nm + k] = 0;
            }
        }
        BENCH_CHECK(PMPI_Allreduce(MPI_IN_PLACE, failed, nm, MPI_INT, MPI_MAX, MPI_COMM_WORLD));
        for (int k = 0; k < nm; k++) {
            alive -= failed[k] && !dead[k];
            dead[k] |= failed[k];
        }
        timing_collect(sp, n * nm, batch * nm, global, rank);
        n += batch;
        long next = 0;
        if (rank == 0 && alive) {
            met = method_stats(o, sp, n, dead, st, &ratio);
            next = timing_next_batch(o, n, timing_now() - start, met, ratio);
        }
        BENCH_CHECK(PMPI_Bcast(&next, 1, MPI_LONG, 0, MPI_COMM_WORLD));
        batch = next;
    }
    if (rank == 0)
        output_size(o, sp, n, m, dead, st, raw);
}
