/* What rank 0 prints (docs/formats/benchmark-output.md): `#@key=value` header lines, the
 * column line, one line per point (per method in paired mode) flushed at once, --raw's file;
 * and --capabilities. */
#ifndef OUTPUT_H
#define OUTPUT_H

#include "bench.h"
#include "forcing.h"

/* --capabilities: one JSON object on stdout, what collsel checks a sweep against before
 * launching (benchmark_program.capabilities reads it, shipped as capabilities.json). */
void output_capabilities(void);
/* Every rank's MPI_Get_processor_name, gathered to rank 0 and joined as "h0,h1,..." in rank
 * order (NULL on the other ranks); all ranks call it. */
char *output_rank_hosts(int rank, int nprocs);
/* Rank 0 opens --raw FILE; all ranks learn whether it worked (2 if not). */
int output_open_raw(const struct options *o, int rank, FILE **raw);
/* Rank 0, before measuring: the header and column lines on stdout, and into `raw` (NULL: no
 * --raw) its header and column line. pair_rounds, triplet_rounds: --experiment lmo's. */
void output_start(const struct options *o, const struct forcing *fs, int nprocs, int global,
                  const char *rank_hosts, int pair_rounds, int triplet_rounds, FILE *raw);
/* Rank 0: the line of one point (per-launch mode). */
void output_point(unsigned long long m, const struct stats *st, double rel_ci);
/* Rank 0: the lines of size m in paired mode (the methods alive, `#@unusable.M=` before them,
 * the probe's rounds after), and its n rounds of repetitions into `raw` when not NULL. */
void output_size(const struct options *o, const struct samples *sp, long n,
                 unsigned long long m, const int *dead, const struct stats *st, FILE *raw);
/* Rank 0: one line of an LMO experiment. */
void output_lmo_line(enum lmo_kind kind, int root, int a, int b, unsigned long long m,
                     const struct stats *st, double rel_ci);

#endif
