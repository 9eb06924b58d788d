/* The lookup alone: what libcollsel does per call once a communicator's rules are resolved
 * (lc_rules_lookup: a binary search over the message-size rule list), timed over 10^6 random
 * sizes m = 2^U(0,22), against the tree query it replaces (collsel_tree_decide). No MPI.
 *   lookup rules=N ns_per_lookup=X tree_decide_ns=Y
 * Usage: lookup TREE.bin P */
#define _POSIX_C_SOURCE 200809L
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "lc_core.h"

#define N 1000000

static double now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return ts.tv_sec * 1e9 + ts.tv_nsec;
}

int main(int argc, char **argv)
{
    collsel_tree *tree;
    struct lc_rules rules;
    uint64_t *m = malloc(N * sizeof *m), state = 88172645463325252ULL, sink = 0;
    double t0, rules_ns, tree_ns;
    int i;
    if (argc != 3 || collsel_tree_load_file(argv[1], &tree) != COLLSEL_TREE_OK
        || lc_rules_resolve(tree, atoi(argv[2]), 0, &rules) != COLLSEL_TREE_OK) {
        fprintf(stderr, "usage: lookup TREE.bin P (a valid 2-axis tree)\n");
        return 2;
    }
    for (i = 0; i < N; i++) {   /* xorshift64 */
        state ^= state << 13, state ^= state >> 7, state ^= state << 17;
        m[i] = (uint64_t)1 << (state % 23);
    }
    t0 = now_ns();
    for (i = 0; i < N; i++)
        sink += lc_rules_lookup(&rules, m[i]);
    rules_ns = (now_ns() - t0) / N;
    t0 = now_ns();
    for (i = 0; i < N; i++) {
        collsel_tree_choice c;
        collsel_tree_decide(tree, atoi(argv[2]), m[i], &c);
        sink += (uint64_t)c.algorithm;
    }
    tree_ns = (now_ns() - t0) / N;
    printf("lookup rules=%u ns_per_lookup=%.2f tree_decide_ns=%.2f (checksum %llu)\n",
           rules.n_rules, rules_ns, tree_ns, (unsigned long long)sink);
    lc_rules_free(&rules);
    collsel_tree_free(tree);
    free(m);
    return 0;
}
