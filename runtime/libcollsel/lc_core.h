/* libcollsel internals without MPI (rules.c, trees.c): what a tree decides for one communicator,
 * and the trees COLLSEL_TREES names. Not installed; the unit driver
 * tests/integration/libcollsel_rules.c tests them without MPI. */
#ifndef LC_CORE_H
#define LC_CORE_H

#include <stddef.h>
#include <stdint.h>

#include "collsel_tree.h"
#include "collsel_treeset.h"

/* The collectives (enum collsel_mpi_coll, COLLSEL_MPI_NCOLL), their names and their blob names
 * (collsel_mpi_coll_names, collsel_mpi_blob_name()) are the generated MPI table's. */
#include "collsel_mpi_table.h"

/* ---- rules.c ---- */

/* A tree's decisions for one comm_size (and z) over every message size, merged: rule k covers
 * msg_size in [from[k], from[k + 1]) (the last one up to UINT64_MAX) and chooses
 * choices[choice_of[k]]; from[0] = 0 and neighbouring rules choose different choices. The
 * choices are distinct, in order of first use. One heap block (lc_rules_free). */
struct lc_rules {
    uint32_t n_rules;
    uint32_t n_choices;
    uint64_t *from;
    uint32_t *choice_of;
    collsel_tree_choice *choices;
    size_t bytes;                 /* size of the block */
};

/* The rules of `tree` at comm_size (>= 1) and z (3-axis trees only). Returns COLLSEL_TREE_OK,
 * the query's error, or COLLSEL_TREE_ENOMEM; *out is then empty (n_rules 0). */
collsel_tree_error lc_rules_resolve(const collsel_tree *tree, int32_t comm_size, int64_t z,
                                    struct lc_rules *out);

/* Index into out->choices for msg_size: a binary search over `from`, no allocation. */
uint32_t lc_rules_lookup(const struct lc_rules *rules, uint64_t msg_size);

/* "FROM:ALG/SEG/FAN,..." into buf (truncated to size, always terminated). */
void lc_rules_format(const struct lc_rules *rules, char *buf, size_t size);

/* One COLLSEL_TRACE line (printf format, '\n' added) on stderr in one write(2) call, so the
 * lines of ranks sharing a terminal or file never interleave mid-line; cut at 2 KiB. */
void lc_trace(const char *format, ...) __attribute__((format(printf, 1, 2)));

void lc_rules_free(struct lc_rules *rules);

/* ---- trees.c ---- */

/* The trees of COLLSEL_TREES (the shared loader, runtime/collsel_treeset.h), slot c holding
 * collective c (enum collsel_mpi_coll); blobs of collectives libcollsel does not know skipped.
 * 0 on success; else 1 with one line in msg naming the file and what is wrong, and nothing
 * loaded. Released with collsel_treeset_free(). */
int lc_trees_load(const char *spec, collsel_treeset *trees, char *msg, size_t msg_size);

#endif
