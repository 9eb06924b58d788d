/* Time: the clock, the statistics of a point's repetitions, when to stop repeating, and how a
 * repetition's time is taken over ranks (global clock or local durations). */
#ifndef TIMING_H
#define TIMING_H

#include "bench.h"

/* Seconds on CLOCK_MONOTONIC: one clock for all processes of a node, so starts and ends of
 * different ranks on one node can be compared. */
double timing_now(void);
/* Median of v[0..n), n >= 1; sorts v in place. */
double timing_median(double *v, long n);
/* Statistics of n samples (seconds in, microseconds out); `scratch` holds n doubles. */
void timing_stats(const double *t, long n, double *scratch, struct stats *s);
/* A point's first batch: --min-reps, but a point whose single call (or round) already costs
 * more than the time cap still gets two timed repetitions (a spread needs two). */
long timing_first_batch(const struct options *o, double first);
/* Rank 0: how many more repetitions after n, 0 = stop. `met`: the CI target holds (for every
 * method); `ratio`: CI / (rel_ci * mean) (the largest over methods). */
long timing_next_batch(const struct options *o, long n, double spent, int met, double ratio);
/* Rank 0: the slowest rank's time of repetitions [from, from + count) (all ranks call it). */
void timing_collect(struct samples *sp, long from, long count, int global, int rank);
/* Whether a repetition's time is latest end minus earliest start (one clock: all ranks on one
 * node, or --runtime global) rather than the slowest rank's own duration; all ranks call it. */
int timing_global_clock(const struct options *o, int nprocs);

#endif
