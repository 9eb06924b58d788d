/* Baselines for bench_runtime: Open MPI 4.1's fixed bcast decision and a dynamic-rules scan. */
#ifndef COLLSEL_BENCH_BASELINES_H
#define COLLSEL_BENCH_BASELINES_H

#include <stddef.h>

/* Open MPI 4.1 coll/tuned fixed bcast decision (algorithm id; segsize = faninout = 0). */
int ompi41_bcast_ladder(int comm_size, size_t msg_size, int *segsize, int *faninout);

/* Open MPI 4.1 dynamic rules: comm-size blocks, each with message-size rules, ascending. */
struct msg_rule {
    size_t msg_size;
    int algorithm, faninout, segsize;
};
struct com_rule {
    int comm_size;
    int n_msg_rules;
    const struct msg_rule *msg_rules;
};
struct rules {
    int n_com_rules;
    const struct com_rule *com_rules;
};

/* The block of the largest comm_size <= P (the first block when P is below all). */
const struct com_rule *rules_com_block(const struct rules *r, int comm_size);
/* The rule of the largest msg_size <= m in a block. */
int rules_msg_scan(const struct com_rule *block, size_t msg_size, int *segsize, int *faninout);
/* Both scans, as a per-call lookup would do when the communicator size changes every call. */
int rules_scan(const struct rules *r, int comm_size, size_t msg_size, int *segsize,
               int *faninout);

#endif
