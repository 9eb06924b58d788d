/* --probe REPS[:CAP_US] (paired mode): the run-time library's probe (collsel_probe.c, one
 * implementation) on MPI_COMM_WORLD before every round, outside the timed calls; each method
 * line of a size ends with the median of the size's round figures. */
#ifndef ROUND_PROBE_H
#define ROUND_PROBE_H

#include "bench.h"

/* 1 when `key` is --probe (*rc: 0, or a usage error's exit code), else 0. */
int round_probe_option(const char *key, const char *val, int rank, int *rc);
int round_probe_active(void);                     /* --probe given */
/* All ranks, once: the probe on MPI_COMM_WORLD and room for max_reps round figures; 0 or 2. */
int round_probe_start(long max_reps, int rank);
void round_probe_run(long r);                     /* all ranks, before round r of a size */
void round_probe_header(FILE *out);               /* `#@probe=` */
void round_probe_field(void);                     /* rank 0: " probe_us" of a method line */
void round_probe_rounds_line(unsigned long long m);   /* rank 0: `#@probe_rounds.M=` */
void round_probe_stop(void);

#endif
