/* COLLSEL_TREES: libcollsel's rule over the shared blob-set loader (runtime/collsel_treeset.c):
 * a blob goes to the slot of its collective; blobs of collectives libcollsel does not know are
 * skipped, so one directory can hold trees for other tools too. */
#include "lc_core.h"

#include <string.h>

static int32_t slot_of(const collsel_tree *tree, const char *path, char *msg, size_t msg_size)
{
    int32_t c;
    (void)path, (void)msg, (void)msg_size;
    for (c = 0; c < COLLSEL_MPI_NCOLL; c++)
        if (strcmp(collsel_tree_collective(tree), collsel_mpi_blob_name(c)) == 0)
            return c;
    return COLLSEL_TREESET_SKIP;
}

int lc_trees_load(const char *spec, collsel_treeset *trees, char *msg, size_t msg_size)
{
    static const collsel_treeset_rule rule = {"libcollsel", "COLLSEL_TREES", collsel_mpi_coll_names,
                                              slot_of};
    return collsel_treeset_load(spec, &rule, trees, msg, msg_size);
}
