/* The model-fitting experiments timed like a collective (`collsel model fit`, `model lmo-fit`):
 * nbft, bcast-gather (Nuriyev et al. 2022, section 5), and the LMO collectives lmo-scan and
 * lmo-binomial (Lastovetsky & Rychkov 2009); the LMO point-to-point experiments: lmo.c. */
#ifndef EXPERIMENTS_H
#define EXPERIMENTS_H

#include "bench.h"

/* Experiments timed on the root alone (other ranks contribute 0 to the max). */
int experiment_root_timed(const struct options *o);
/* One repetition of o->experiment (lmo-scan / lmo-binomial: of o->lmo_kind) with `count` bytes:
 * the measured calls. */
void experiment_run(const struct options *o, struct bufs *bf, int count);

#endif
