/* Private to the collsel_tree library, its tests and its benchmark: not installed, not part of
 * the API (include/collsel_tree.h), may change in any release.
 *
 * collsel_tree_decide() answers a 2-axis tree from the cell table built at load when the tree
 * has one (2-axis trees of at most 2048 cells and 256 methods), so on such trees the tree
 * descent itself is used only at load. collsel_tree_internal_decide() answers one query by a
 * chosen path, so tests can check every path on every tree against `collsel query`. */
#ifndef COLLSEL_TREE_INTERNAL_H
#define COLLSEL_TREE_INTERNAL_H

#include "collsel_tree.h"

#ifdef __cplusplus
extern "C" {
#endif

enum collsel_tree_path {
    /* collsel_tree_decide() or collsel_tree_decide3(), by the tree's axis count */
    COLLSEL_TREE_PATH_PUBLIC = 0,
    /* the query's descent when there is no cell table: 2-axis balanced trees by the specialised
     * walk (jump table, fixed trip count, one copy per node width), all others by the generic
     * walk (as PATH_GENERIC) */
    COLLSEL_TREE_PATH_DESCENT = 1,
    /* the generic walk (any axis count and split mode), which also fills the cell table */
    COLLSEL_TREE_PATH_GENERIC = 2
};

/* The decision for (comm_size, msg_size[, z]) by `path`, on a tree of either axis count (z is
 * ignored for 2-axis trees). Errors as collsel_tree_decide3(), except that the axis count is
 * never wrong; COLLSEL_TREE_EINVAL for an unknown path. */
collsel_tree_error collsel_tree_internal_decide(const collsel_tree *tree,
                                                enum collsel_tree_path path, int32_t comm_size,
                                                uint64_t msg_size, int64_t z,
                                                collsel_tree_choice *choice);

/* 1 if the tree was loaded with a cell table (collsel_tree_decide() reads no node), else 0. */
int collsel_tree_internal_has_cell_table(const collsel_tree *tree);

#ifdef __cplusplus
}
#endif

#endif
