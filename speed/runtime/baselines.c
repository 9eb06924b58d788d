/* Baselines for bench_runtime, written from the facts in shared/reference/openmpi-mpich-
 * selection.md (sections 1.2 and 3.3), not from Open MPI source. */
#include "baselines.h"

/* Section 1.2: strict thresholds (P < x, m < y); segsize = faninout = 0 everywhere.
 * Ids: 1 basic_linear, 2 chain, 3 pipeline, 4 split_binary_tree, 5 binary_tree, 6 binomial,
 * 7 knomial, 8 scatter_allgather. */
int ompi41_bcast_ladder(int comm_size, size_t msg_size, int *segsize, int *faninout)
{
    int alg;
    size_t m = msg_size;
    if (comm_size < 4) {
        if (m < 32) alg = 3;
        else if (m < 256) alg = 5;
        else if (m < 512) alg = 3;
        else if (m < 1024) alg = 7;
        else if (m < 32768) alg = 1;
        else if (m < 131072) alg = 5;
        else if (m < 262144) alg = 2;
        else if (m < 524288) alg = 1;
        else if (m < 1048576) alg = 6;
        else alg = 5;
    } else if (comm_size < 8) {
        if (m < 64) alg = 5;
        else if (m < 128) alg = 6;
        else if (m < 2048) alg = 5;
        else if (m < 8192) alg = 6;
        else if (m < 1048576) alg = 1;
        else alg = 2;
    } else if (comm_size < 16) {
        if (m < 8) alg = 7;
        else if (m < 64) alg = 5;
        else if (m < 4096) alg = 7;
        else if (m < 16384) alg = 5;
        else if (m < 32768) alg = 6;
        else alg = 1;
    } else if (comm_size < 32) {
        if (m < 4096) alg = 7;
        else if (m < 1048576) alg = 6;
        else alg = 8;
    } else if (comm_size < 64) {
        alg = m < 2048 ? 6 : 7;
    } else if (comm_size < 128) {
        alg = 7;
    } else if (comm_size < 256) {
        if (m < 2) alg = 6;
        else if (m < 16384) alg = 5;
        else if (m < 32768) alg = 1;
        else if (m < 65536) alg = 5;
        else alg = 7;
    } else if (comm_size < 1024) {
        if (m < 16384) alg = 7;
        else if (m < 32768) alg = 4;
        else alg = 7;
    } else if (comm_size < 2048) {
        alg = m < 524288 ? 7 : 8;
    } else if (comm_size < 4096) {
        alg = m < 262144 ? 7 : 8;
    } else {
        if (m < 8192) alg = 7;
        else if (m < 16384) alg = 5;
        else if (m < 262144) alg = 7;
        else alg = 8;
    }
    *segsize = 0;
    *faninout = 0;
    return alg;
}

/* Section 3.3: scan in file order, stop at the first entry above the value; the answer is the
 * last entry passed, or the first entry when the value is below all of them. */
const struct com_rule *rules_com_block(const struct rules *r, int comm_size)
{
    const struct com_rule *best = &r->com_rules[0];
    int i;
    for (i = 0; i < r->n_com_rules; i++) {
        if (r->com_rules[i].comm_size > comm_size)
            break;
        best = &r->com_rules[i];
    }
    return best;
}

int rules_msg_scan(const struct com_rule *block, size_t msg_size, int *segsize, int *faninout)
{
    const struct msg_rule *best = &block->msg_rules[0];
    int i;
    for (i = 0; i < block->n_msg_rules; i++) {
        if (block->msg_rules[i].msg_size > msg_size)
            break;
        best = &block->msg_rules[i];
    }
    *segsize = best->segsize;
    *faninout = best->faninout;
    return best->algorithm;
}

int rules_scan(const struct rules *r, int comm_size, size_t msg_size, int *segsize,
               int *faninout)
{
    return rules_msg_scan(rules_com_block(r, comm_size), msg_size, segsize, faninout);
}
