/* Load a collsel tree blob and answer one query: query_tree TREE.bin P M [Z] */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include "collsel_tree.h"

int main(int argc, char **argv)
{
    collsel_tree *tree;
    collsel_tree_choice c;
    collsel_tree_error err;
    long long p, z = 0;
    unsigned long long m;
    char *end[3];
    if (argc != 4 && argc != 5) {
        fprintf(stderr, "usage: %s TREE.bin COMM_SIZE MSG_SIZE [Z]\n", argv[0]);
        return 2;
    }
    errno = 0;
    p = strtoll(argv[2], &end[0], 10);
    m = strtoull(argv[3], &end[1], 10);
    if (argc == 5)
        z = strtoll(argv[4], &end[2], 10);
    if (errno || *end[0] || *end[1] || argv[3][0] == '-' || (argc == 5 && *end[2]) || p < 1
        || p > INT32_MAX) {
        fprintf(stderr, "%s: COMM_SIZE must be 1..%" PRId32 ", MSG_SIZE and Z integers\n",
                argv[0], INT32_MAX);
        return 2;
    }
    err = collsel_tree_load_file(argv[1], &tree);
    if (err) {
        fprintf(stderr, "%s: %s\n", argv[1], collsel_tree_strerror(err));
        return 1;
    }
    err = argc == 5 ? collsel_tree_decide3(tree, (int32_t)p, m, z, &c)
                    : collsel_tree_decide(tree, (int32_t)p, m, &c);
    if (!err)
        printf("%" PRId32 " %" PRId32 " %" PRId32 "\n", c.algorithm, c.segsize, c.faninout);
    else
        fprintf(stderr, "query: %s\n", collsel_tree_strerror(err));
    collsel_tree_free(tree);
    return err ? 1 : 0;
}
