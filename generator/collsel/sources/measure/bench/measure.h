/* The measuring loops: warm-up with the reference check, timed repetitions after a barrier until
 * the CI target, per launch (the algorithm set from outside) or paired (every method of
 * --methods in shuffled rounds). Rank 0 prints each size's lines as soon as they are done. */
#ifndef MEASURE_H
#define MEASURE_H

#include "bench.h"
#include "forcing.h"

/* One point on MPI_COMM_WORLD until the CI target: its statistics on rank 0. */
void measure_point(const struct options *o, const struct forcing *fs, struct bufs *bf,
                   struct samples *sp, int rank, int nprocs, int global, unsigned long long m,
                   struct stats *out);
/* Per-launch mode: one collective on MPI_COMM_WORLD, its line. */
void measure_single(const struct options *o, const struct forcing *fs, struct bufs *bf,
                    struct samples *sp, int rank, int nprocs, int global, unsigned long long m);
/* Paired mode: all methods of --methods at size m, interleaved in rounds shuffled by `rng` (the
 * same on all ranks); their lines, and the raw repetitions into `raw` when not NULL. */
void measure_paired(const struct options *o, const struct forcing *fs, struct bufs *bf,
                    struct samples *sp, int rank, int nprocs, int global, unsigned long long m,
                    uint64_t *rng, FILE *raw);

#endif
