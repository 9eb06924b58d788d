/* Unit driver for libcollsel's MPI-free parts (runtime/libcollsel/rules.c, trees.c), built with
 * ASan + UBSan by tests/integration/test_libcollsel.py:
 *   libcollsel_rules trees SPEC
 *       lc_trees_load(SPEC): "trees ok <collective>=<crc> ..." (the loaded ones, in the
 *       MPI table's order) or "trees error: <line>"
 *   libcollsel_rules rules TREE.bin P[:Z] ...
 *       per P (and Z for a 3-axis tree) the rule list, "rules P Z <FROM:A/S/F,...>", after
 *       checking lc_rules_lookup against collsel_tree_decide at 0, UINT64_MAX, every cut and
 *       its neighbours and 10,000 pseudo-random sizes; a mismatch: "mismatch ..." and exit 1.
 * Exit 0, 1 on a mismatch or an error, 2 on bad usage. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lc_core.h"

static int same(const collsel_tree_choice *a, const collsel_tree_choice *b)
{
    return a->algorithm == b->algorithm && a->segsize == b->segsize && a->faninout == b->faninout;
}

static int check(const collsel_tree *tree, const struct lc_rules *r, int32_t p, int64_t z,
                 uint64_t m)
{
    collsel_tree_choice want;
    const collsel_tree_choice *got = &r->choices[lc_rules_lookup(r, m)];
    collsel_tree_error err = collsel_tree_axes(tree) == 3
                                 ? collsel_tree_decide3(tree, p, m, z, &want)
                                 : collsel_tree_decide(tree, p, m, &want);
    if (err || !same(got, &want)) {
        printf("mismatch P=%" PRId32 " z=%" PRId64 " m=%" PRIu64 ": rules %ld/%ld/%ld, tree %ld/%ld/%ld"
               " (error %d)\n", p, z, m, (long)got->algorithm, (long)got->segsize,
               (long)got->faninout, (long)want.algorithm, (long)want.segsize,
               (long)want.faninout, (int)err);
        return 1;
    }
    return 0;
}

static int rules_of(const collsel_tree *tree, const char *arg)
{
    char *end;
    long p = strtol(arg, &end, 10);
    int64_t z = *end == ':' ? strtoll(end + 1, &end, 10) : 0;
    struct lc_rules r;
    uint32_t n = collsel_tree_msg_cuts(tree, NULL, 0), k;
    uint64_t *cuts = malloc(((size_t)n + 1) * sizeof *cuts), state = 12345;
    char text[8192];
    int bad = 0, i;
    if (*end || p < 1 || p > INT32_MAX || !cuts) {
        fprintf(stderr, "bad P[:Z] '%s'\n", arg);
        free(cuts);
        return 2;
    }
    collsel_tree_msg_cuts(tree, cuts, n);
    if (lc_rules_resolve(tree, (int32_t)p, z, &r) != COLLSEL_TREE_OK) {
        printf("resolve failed P=%ld\n", p);
        free(cuts);
        return 1;
    }
    bad |= check(tree, &r, (int32_t)p, z, 0) | check(tree, &r, (int32_t)p, z, UINT64_MAX);
    for (k = 0; k < n; k++)
        bad |= check(tree, &r, (int32_t)p, z, cuts[k] - 1) | check(tree, &r, (int32_t)p, z, cuts[k])
               | check(tree, &r, (int32_t)p, z, cuts[k] + 1);
    for (i = 0; i < 10000; i++) {   /* xorshift64: sizes spread over 2^0 .. 2^40 */
        state ^= state << 13, state ^= state >> 7, state ^= state << 17;
        bad |= check(tree, &r, (int32_t)p, z, state >> (24 + state % 40));
    }
    for (k = 1; k < r.n_rules; k++)   /* merged: neighbours differ */
        bad |= same(&r.choices[r.choice_of[k]], &r.choices[r.choice_of[k - 1]]);
    lc_rules_format(&r, text, sizeof text);
    printf("rules %ld %" PRId64 " %s\n", p, z, text);
    lc_rules_free(&r);
    free(cuts);
    return bad;
}

int main(int argc, char **argv)
{
    int a, rc = 0;
    if (argc >= 3 && strcmp(argv[1], "trees") == 0) {
        collsel_treeset trees;
        char msg[1024];
        if (lc_trees_load(argv[2], &trees, msg, sizeof msg)) {
            printf("trees error: %s\n", msg);
            return 1;
        }
        printf("trees ok");
        for (a = 0; a < COLLSEL_MPI_NCOLL; a++) {
            if (trees.tree[a])
                printf(" %s=%08" PRIx32, collsel_mpi_coll_names[a], trees.crc[a]);
        }
        printf("\n");
        collsel_treeset_free(&trees);
        return 0;
    }
    if (argc >= 4 && strcmp(argv[1], "rules") == 0) {
        collsel_tree *tree;
        collsel_tree_error err = collsel_tree_load_file(argv[2], &tree);
        if (err) {
            printf("%s: %s\n", argv[2], collsel_tree_strerror(err));
            return 1;
        }
        for (a = 3; a < argc && rc != 2; a++)
            rc |= rules_of(tree, argv[a]);
        collsel_tree_free(tree);
        return rc;
    }
    fprintf(stderr, "usage: libcollsel_rules trees SPEC | rules TREE.bin P[:Z] ...\n");
    return 2;
}
