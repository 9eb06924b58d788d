/* Load a collsel tree blob and answer one query: query_tree TREE.bin P M [Z] */
#include <stdio.h>
#include <stdlib.h>
#include "collsel_tree.h"

int main(int argc, char **argv)
{
    collsel_tree *tree;
    collsel_tree_choice c;
    int err;
    if (argc != 4 && argc != 5) {
        fprintf(stderr, "usage: %s TREE.bin COMM_SIZE MSG_SIZE [Z]\n", argv[0]);
        return 2;
    }
    err = collsel_tree_load_file(argv[1], &tree);
    if (err) {
        fprintf(stderr, "%s: %s\n", argv[1], collsel_tree_strerror(err));
        return 1;
    }
    err = argc == 5 ? collsel_tree_query3(tree, atoi(argv[2]), strtoull(argv[3], NULL, 10),
                                          atol(argv[4]), &c)
                    : collsel_tree_query(tree, atoi(argv[2]), strtoull(argv[3], NULL, 10), &c);
    if (!err)
        printf("%d %d %d\n", c.algorithm, c.segsize, c.faninout);
    else
        fprintf(stderr, "query: %s\n", collsel_tree_strerror(err));
    collsel_tree_free(tree);
    return err ? 1 : 0;
}
