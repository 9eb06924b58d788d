/* bench_runtime TREE.bin: decision time over the same 10^6 random (P, m) queries of
 * (a) the compiled decision function (`collsel emit --target c-fast`, prefix bench_bcast_fast:
 * O(1) cells + cell table), (a0) the if/else ladder of `collsel build`/`emit --target c`
 * (prefix bench_bcast),
 * (b) collsel_tree_decide on the blob of the same tree, (b') the same decision by the tree
 * descent alone, without the load-time cell table (collsel_tree_internal_decide, the path of
 * trees too large for the table), (c) Open MPI 4.1's fixed bcast ladder,
 * (d) Open MPI's dynamic-rules linear scan over rules made from the same tree. Prints the
 * median over ROUNDS alternating rounds, and each as a ratio to (c). Run by `make bench-runtime`.
 */
#define _POSIX_C_SOURCE 199309L
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "baselines.h"
#include "collsel_tree.h"
#include "collsel_tree_internal.h"
#include "decision.h"
#include "fast/decision.h"

#define N_QUERIES 1000000
#define ROUNDS 9
#define P_MIN 2
#define P_MAX 16
#define LOG2_M_MAX 22.0

enum { COMPILED_FAST, COMPILED, RUNTIME, DESCENT, LADDER, SCAN, SCAN_MSG, N_KINDS };
static const char *const NAMES[N_KINDS] = {
    "(a) compiled function (collsel emit --target c-fast)",
    "(a0) compiled if/else ladder (collsel emit --target c)",
    "(b) runtime collsel_tree_decide (blob)",
    "(b') runtime, tree descent only (no cell table)",
    "(c) Open MPI 4.1 fixed bcast ladder",
    "(d) dynamic-rules linear scan (comm block + msg rule)",
    "(d') dynamic-rules msg-rule scan, comm block cached"};

static int qp[N_QUERIES];
static size_t qm[N_QUERIES];
static const struct com_rule *qblock[N_QUERIES];

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);   /* CPU time: robust to preemption */
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static uint64_t rng_state = 0x9E3779B97F4A7C15ull;
static uint64_t next(void)   /* xorshift64*, fixed seed: the same queries every run */
{
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return rng_state * 0x2545F4914F6CDD1Dull;
}

static uint32_t rd32(const unsigned char *p) { return p[0] | p[1] << 8 | p[2] << 16 | (uint32_t)p[3] << 24; }
static uint64_t rd64(const unsigned char *p) { return rd32(p) | (uint64_t)rd32(p + 4) << 32; }

/* Rules with the tree's decisions: one comm block per P cell, one rule per m cell, with equal
 * neighbours merged (as a rules file writer would). Cuts are read from the blob's header. */
static struct rules make_rules(const unsigned char *blob, const collsel_tree *t)
{
    uint32_t np = blob[32 + 2] | blob[32 + 3] << 8, nm = blob[36 + 2] | blob[36 + 3] << 8, i, j;
    const unsigned char *pc = blob + 40, *mc = pc + 4 * (np - 1);
    struct com_rule *com = calloc(np, sizeof *com);
    struct rules r = {0, com};
    for (i = 0; i < np; i++) {
        struct msg_rule *msg = calloc(nm, sizeof *msg);
        int n = 0;
        int p = i == 0 ? 1 : (int)rd32(pc + 4 * (i - 1));
        for (j = 0; j < nm; j++) {
            size_t m = j == 0 ? 0 : (size_t)rd64(mc + 8 * (j - 1));
            collsel_tree_choice c;
            if (collsel_tree_decide(t, p, m, &c))
                exit(1);
            if (n && msg[n - 1].algorithm == c.algorithm && msg[n - 1].segsize == c.segsize
                && msg[n - 1].faninout == c.faninout)
                continue;
            msg[n].msg_size = m;
            msg[n].algorithm = c.algorithm;
            msg[n].segsize = c.segsize;
            msg[n].faninout = c.faninout;
            n++;
        }
        if (r.n_com_rules && com[r.n_com_rules - 1].n_msg_rules == n
            && !memcmp(com[r.n_com_rules - 1].msg_rules, msg, n * sizeof *msg)) {
            free(msg);
            continue;
        }
        com[r.n_com_rules].comm_size = p;
        com[r.n_com_rules].n_msg_rules = n;
        com[r.n_com_rules].msg_rules = msg;
        r.n_com_rules++;
    }
    return r;
}

static long run(int kind, const collsel_tree *t, const struct rules *r)
{
    long sum = 0;
    int i, seg, fan;
    collsel_tree_choice c;
    switch (kind) {
    case COMPILED_FAST:
        for (i = 0; i < N_QUERIES; i++)
            sum += bench_bcast_fast_decide(qp[i], qm[i], &seg, &fan) * 7 + seg + fan;
        break;
    case COMPILED:
        for (i = 0; i < N_QUERIES; i++)
            sum += bench_bcast_decide(qp[i], qm[i], &seg, &fan) * 7 + seg + fan;
        break;
    case RUNTIME:
        for (i = 0; i < N_QUERIES; i++) {
            collsel_tree_decide(t, qp[i], qm[i], &c);
            sum += c.algorithm * 7 + c.segsize + c.faninout;
        }
        break;
    case DESCENT:
        for (i = 0; i < N_QUERIES; i++) {
            collsel_tree_internal_decide(t, COLLSEL_TREE_PATH_DESCENT, qp[i], qm[i], 0, &c);
            sum += c.algorithm * 7 + c.segsize + c.faninout;
        }
        break;
    case LADDER:
        for (i = 0; i < N_QUERIES; i++)
            sum += ompi41_bcast_ladder(qp[i], qm[i], &seg, &fan) * 7 + seg + fan;
        break;
    case SCAN:
        for (i = 0; i < N_QUERIES; i++)
            sum += rules_scan(r, qp[i], qm[i], &seg, &fan) * 7 + seg + fan;
        break;
    default:
        for (i = 0; i < N_QUERIES; i++)
            sum += rules_msg_scan(qblock[i], qm[i], &seg, &fan) * 7 + seg + fan;
    }
    return sum;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
    collsel_tree *t;
    static unsigned char blob[1 << 20];
    static collsel_tree_storage storage;
    size_t size;
    FILE *f;
    struct rules r;
    double ns[N_KINDS][ROUNDS], med[N_KINDS];
    long sums[N_KINDS];
    int i, k, round, err;
    if (argc != 2 || !(f = fopen(argv[1], "rb"))) {
        fprintf(stderr, "usage: bench_runtime TREE.bin\n");
        return 2;
    }
    size = fread(blob, 1, sizeof blob, f);
    fclose(f);
    if ((err = collsel_tree_load_buffer(blob, size, &storage, &t)) != 0) {
        fprintf(stderr, "%s: %s\n", argv[1], collsel_tree_strerror(err));
        return 1;
    }
    r = make_rules(blob, t);
    for (i = 0; i < N_QUERIES; i++) {
        qp[i] = P_MIN + (int)(next() % (P_MAX - P_MIN + 1));
        qm[i] = (size_t)exp2((next() >> 11) * 0x1.0p-53 * LOG2_M_MAX);
        qblock[i] = rules_com_block(&r, qp[i]);
    }
    /* (a), (a0), (b), (b'), (d), (d') are the same tree: they must agree on every query */
    for (i = 0; i < N_QUERIES; i++) {
        int s1, f1, s2, f2, a1 = bench_bcast_decide(qp[i], qm[i], &s1, &f1);
        int a2 = rules_scan(&r, qp[i], qm[i], &s2, &f2), s3, f3;
        int a3 = bench_bcast_fast_decide(qp[i], qm[i], &s3, &f3);
        collsel_tree_choice c, d;
        collsel_tree_decide(t, qp[i], qm[i], &c);
        collsel_tree_internal_decide(t, COLLSEL_TREE_PATH_DESCENT, qp[i], qm[i], 0, &d);
        if (a1 != c.algorithm || s1 != c.segsize || f1 != c.faninout || a2 != a1 || s2 != s1
            || f2 != f1 || a3 != a1 || s3 != s1 || f3 != f1 || d.algorithm != c.algorithm
            || d.segsize != c.segsize || d.faninout != c.faninout) {
            fprintf(stderr, "disagreement at P=%d m=%zu\n", qp[i], qm[i]);
            return 1;
        }
    }
    for (k = 0; k < N_KINDS; k++)
        sums[k] = run(k, t, &r);   /* warm-up */
    for (round = 0; round < ROUNDS; round++)
        for (k = 0; k < N_KINDS; k++) {
            int kind = (k + round) % N_KINDS;   /* rotate the order every round */
            double t0 = now();
            long s = run(kind, t, &r);
            ns[kind][round] = (now() - t0) * 1e9 / N_QUERIES;
            if (s != sums[kind])
                return 1;
        }
    for (k = 0; k < N_KINDS; k++) {
        qsort(ns[k], ROUNDS, sizeof(double), cmp);
        med[k] = ns[k][ROUNDS / 2];
    }
    printf("bench-runtime: %d random queries, P uniform in [%d, %d], m = 2^U(0, %.0f) bytes; "
           "median of %d rounds (order rotated)\n", N_QUERIES, P_MIN, P_MAX, LOG2_M_MAX, ROUNDS);
    printf("%-56s %12s %10s %10s\n", "decision", "ns/decision", "min..max", "x ladder");
    for (k = 0; k < N_KINDS; k++)
        printf("%-56s %12.2f %4.1f..%-5.1f %10.2f\n", NAMES[k], med[k], ns[k][0],
               ns[k][ROUNDS - 1], med[k] / med[LADDER]);
    printf("tree: %u nodes, %u methods; blob %zu bytes, %.2f bytes per node (node array %u bytes, "
           "%u per node); cell table: %s; rules: %d comm blocks\n", collsel_tree_node_count(t),
           collsel_tree_method_count(t), size, (double)size / collsel_tree_node_count(t),
           collsel_tree_node_count(t) * blob[7], blob[7],
           collsel_tree_internal_has_cell_table(t) ? "yes" : "no", r.n_com_rules);
    printf("answer checksums:");
    for (k = 0; k < N_KINDS; k++)
        printf(" %ld", sums[k]);
    printf("\n");
    return 0;
}
