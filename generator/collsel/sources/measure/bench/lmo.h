/* --experiment lmo (Lastovetsky & Rychkov 2009; `collsel model lmo-fit`): round-trips rt0 and
 * rt between every pair and one-to-two o2t for every triplet and root of it, non-overlapping
 * ones at once (--schedule parallel) or one at a time (serial), each timed on its sender. */
#ifndef LMO_H
#define LMO_H

#include "bench.h"

/* One experiment: `root` sends to a (and b, one-to-two), the peers reply empty. `index`: its
 * place in the canonical output order of its kind. */
struct lmo_group {
    int root, a, b, index;
};

/* Which experiments run at once: groups[start[r] .. start[r + 1]) form round r. */
struct lmo_rounds {
    struct lmo_group *groups;
    int *start;
    int ngroups, nrounds;
};

struct lmo_schedule {
    struct lmo_rounds pairs;        /* round-trips, index = lexicographic pair number */
    struct lmo_rounds triplets;     /* one-to-two, root = first member, index = triplet number */
    int ntriplets;
};

/* The rounds of n processes (every rank computes the same). */
void lmo_schedule_make(int n, int serial, struct lmo_schedule *sc, int rank);
void lmo_schedule_free(struct lmo_schedule *sc);
/* rt0 once, then rt and o2t at every size; rank 0 prints the lines in canonical order. */
void lmo_measure(const struct options *o, const struct lmo_schedule *sc, struct bufs *bf,
                 struct samples *sp, int rank, int nprocs);

#endif
