/* collsel_treeset: a set of tree blobs named by one specification, at most one tree per
 * collective, read and validated once. Shared by libcollsel (COLLSEL_TREES) and the Open MPI
 * component (coll_collsel_trees), which differ only in the rule of which trees they take
 * (collsel_treeset_rule). Private to the runtime: not installed, no MPI.
 *
 * The specification is a directory (every file in it whose name ends in ".bin", in name order)
 * or a ':'-separated list of files (empty entries ignored). Each file is read into a buffer the
 * set owns and loaded with collsel_tree_load_buffer() into the set's storage, so the blob's
 * CRC-32 (its last 4 bytes) stays at hand for ranks to compare. */
#ifndef COLLSEL_TREESET_H
#define COLLSEL_TREESET_H

#include <stddef.h>
#include <stdint.h>

#include "collsel_mpi_table.h"
#include "collsel_tree.h"

/* Slots: one per collective of the MPI table (collsel_mpi_table.h), slot c for collective c. */
#define COLLSEL_TREESET_SLOTS COLLSEL_MPI_NCOLL
/* Files one specification may name (a directory's *.bin files included). */
#define COLLSEL_TREESET_MAX_FILES 64

/* What a rule answers for a loaded tree: a slot (0 .. COLLSEL_TREESET_SLOTS - 1), or one of: */
#define COLLSEL_TREESET_SKIP (-1)      /* not the caller's: left out, silently */
#define COLLSEL_TREESET_REFUSE (-2)    /* refused: the rule wrote one line into msg */

typedef struct collsel_treeset {
    const collsel_tree *tree[COLLSEL_TREESET_SLOTS];   /* NULL: no tree for the slot */
    uint32_t crc[COLLSEL_TREESET_SLOTS];               /* the blob's own CRC-32 */
    unsigned char *blob[COLLSEL_TREESET_SLOTS];
    collsel_tree_storage storage[COLLSEL_TREESET_SLOTS];
} collsel_treeset;

/* The slot of `tree` (a valid blob read from `path`), or SKIP, or REFUSE with one line in msg
 * (the path first). */
typedef int32_t (*collsel_treeset_slot_fn)(const collsel_tree *tree, const char *path,
                                           char *msg, size_t msg_size);

/* Who loads the set, for its messages, and which trees it takes. */
typedef struct collsel_treeset_rule {
    const char *user;                   /* "libcollsel": "no tree of a collective USER serves" */
    const char *spec_name;              /* "COLLSEL_TREES": "SPEC_NAME names no file" */
    const char *const *slot_names;      /* COLLSEL_TREESET_SLOTS names: "a second NAME tree" */
    collsel_treeset_slot_fn slot_of;
} collsel_treeset_rule;

/* Loads every blob `spec` names into `set`. 0 on success (at least one tree taken); else 1 with
 * one line in msg naming the file and what is wrong, and `set` empty. */
int collsel_treeset_load(const char *spec, const collsel_treeset_rule *rule,
                         collsel_treeset *set, char *msg, size_t msg_size);

/* Releases a loaded set (an empty or freed one too). */
void collsel_treeset_free(collsel_treeset *set);

#endif
