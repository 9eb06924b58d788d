/* Time (timing.h): ReproMPI's method, see docs/formats/benchmark-output.md. */
#include "timing.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "experiments.h"

/* Two-sided 95 % Student t quantile for df degrees of freedom: table up to 30, then the
 * Cornish-Fisher expansion around the normal quantile (error < 1e-4 there). */
static double t975(long df)
{
    static const double table[31] = {
        0, 12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228,
        2.201, 2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086,
        2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042};
    if (df < 1)
        return INFINITY;
    if (df <= 30)
        return table[df];
    const double z = 1.959964, d = (double)df;
    return z + (z * z * z + z) / (4 * d) + (5 * pow(z, 5) + 16 * z * z * z + 3 * z) / (96 * d * d);
}

double timing_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double timing_median(double *v, long n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

void timing_stats(const double *t, long n, double *scratch, struct stats *s)
{
    double sum = 0, sq = 0;
    for (long i = 0; i < n; i++)
        sum += t[i];
    s->mean = sum / n;
    for (long i = 0; i < n; i++)
        sq += (t[i] - s->mean) * (t[i] - s->mean);
    s->stdev = n > 1 ? sqrt(sq / (n - 1)) : 0;
    s->ci = n > 1 ? t975(n - 1) * s->stdev / sqrt((double)n) : INFINITY;
    memcpy(scratch, t, (size_t)n * sizeof *t);
    s->median = timing_median(scratch, n);
    s->min = scratch[0];
    s->max = scratch[n - 1];
    s->n = n;
    s->mean *= 1e6, s->median *= 1e6, s->min *= 1e6, s->max *= 1e6;
    s->stdev *= 1e6, s->ci *= 1e6;
}

long timing_first_batch(const struct options *o, double first)
{
    long batch = o->min_reps;
    if (first > 0 && batch > (long)(o->time_cap / first))
        batch = (long)(o->time_cap / first) < 2 ? 2 : (long)(o->time_cap / first);
    return batch;
}

/* The reps the CI target needs (CI shrinks as 1/sqrt(n)), bounded by the remaining time and
 * reps; at least one, at most doubling. */
long timing_next_batch(const struct options *o, long n, double spent, int met, double ratio)
{
    if ((n >= o->min_reps && met) || n >= o->max_reps || spent >= o->time_cap)
        return 0;
    double need = n * ratio * ratio - n;
    double per_rep = spent / n;
    double afford = (o->time_cap - spent) / (per_rep > 0 ? per_rep : 1e-9);
    if (need > afford) need = afford;
    if (need > n) need = n;
    if (need > o->max_reps - n) need = o->max_reps - n;
    return need < 1 ? 1 : (long)ceil(need);
}

void timing_collect(struct samples *sp, long from, long count, int global, int rank)
{
    BENCH_CHECK(PMPI_Reduce(sp->local + from, sp->maxed + from, (int)count, MPI_DOUBLE, MPI_MAX,
                            0, MPI_COMM_WORLD));
    if (global) {
        BENCH_CHECK(PMPI_Reduce(sp->starts + from, sp->minstart + from, (int)count, MPI_DOUBLE,
                                MPI_MIN, 0, MPI_COMM_WORLD));
        if (rank == 0)
            for (long i = from; i < from + count; i++)
                sp->maxed[i] -= sp->minstart[i];
    }
}

int timing_global_clock(const struct options *o, int nprocs)
{
    if (experiment_root_timed(o) || o->experiment == EXP_LMO)
        return 0;   /* experiments are timed on the root's clock (paper section 6.1) */
    if (o->runtime != RUNTIME_AUTO)
        return o->runtime == RUNTIME_GLOBAL;
    MPI_Comm node;
    int node_size = 0;
    BENCH_CHECK(PMPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL,
                                     &node));
    BENCH_CHECK(PMPI_Comm_size(node, &node_size));
    BENCH_CHECK(PMPI_Comm_free(&node));
    return node_size == nprocs;
}
