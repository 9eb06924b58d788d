/* coll/collsel: its rule over the shared blob-set loader (runtime/collsel_treeset.c): one tree
 * per collective, 2 axes (P, m), Open MPI algorithm ids this Open MPI has, flat methods; any
 * other blob is refused, which keeps the component out (it cannot serve part of what it was
 * given). */
#include "coll_collsel.h"

#include <stdio.h>
#include <string.h>

static int collective_of(const collsel_tree *tree)
{
    const char *name = collsel_tree_collective(tree);
    int c;
    for (c = 0; c < COLLSEL_MPI_NCOLL; c++)
        if (0 == strcmp(name, collsel_mpi_blob_name(c)))
            return c;
    return -1;
}

/* Every method is a flat coll/tuned algorithm of this collective (0: defer). */
static int check_methods(const char *path, int coll, const collsel_tree *tree, char *msg,
                         size_t msg_size)
{
    uint32_t k, n = collsel_tree_method_count(tree);
    for (k = 0; k < n; k++) {
        collsel_tree_choice c;
        collsel_tree_method(tree, k, &c);
        if (collsel_tree_hier(&c, NULL, NULL, NULL)) {
            snprintf(msg, msg_size, "%s: the %s tree has a hierarchical method, which coll/collsel "
                     "does not run (use libcollsel for it)", path, collsel_mpi_coll_names[coll]);
            return 1;
        }
        if (c.algorithm < 0 || c.algorithm > collsel_mpi_ompi_max_algorithm[coll]) {
            snprintf(msg, msg_size, "%s: the %s tree names algorithm %ld, which is no coll/tuned "
                     "%s algorithm of Open MPI 4.1 (1..%ld)", path, collsel_mpi_coll_names[coll],
                     (long)c.algorithm, collsel_mpi_coll_names[coll],
                     (long)collsel_mpi_ompi_max_algorithm[coll]);
            return 1;
        }
    }
    return 0;
}

static int32_t slot_of(const collsel_tree *tree, const char *path, char *msg, size_t msg_size)
{
    int coll = collective_of(tree);
    if (coll < 0)
        snprintf(msg, msg_size, "%s: a tree of '%s', which is none of the 14 collectives", path,
                 collsel_tree_collective(tree));
    else if (collsel_tree_family(tree) == COLLSEL_TREE_FAMILY_MPICH)
        snprintf(msg, msg_size, "%s: a tree of MPICH algorithms (build it from an Open MPI table)",
                 path);
    else if (collsel_tree_axes(tree) != 2)
        snprintf(msg, msg_size, "%s: a 3-axis tree; coll/collsel decides on (P, m) only", path);
    else if (!check_methods(path, coll, tree, msg, msg_size))
        return coll;
    return COLLSEL_TREESET_REFUSE;
}

int mca_coll_collsel_trees_load(const char *spec, collsel_treeset *trees, char *msg,
                                size_t msg_size)
{
    static const collsel_treeset_rule rule = {"coll/collsel", "coll_collsel_trees",
                                              collsel_mpi_coll_names, slot_of};
    return collsel_treeset_load(spec, &rule, trees, msg, msg_size);
}
