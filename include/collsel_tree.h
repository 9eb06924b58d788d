/* collsel_tree: load a collsel decision-tree blob and answer "which algorithm?" in O(depth).
 *
 * A blob is written by `collsel emit --target blob TREE.json` (or embedded in C by
 * `--target c-array`). The library validates the whole blob once at load time, then answers
 * queries without allocating, locking or checking anything again. A corrupted or hostile blob
 * gives an error code, never a crash, a hang or a read outside the buffer.
 *
 * ------------------------------------------------------------------------------------------
 * API, version 2.0.0 (COLLSEL_TREE_VERSION_MAJOR/MINOR/PATCH below; 1.1.0 added
 * collsel_tree_msg_cuts() and collsel_tree_method(); 1.2.0 blob format 2 with hierarchical
 * methods and the algorithm family: collsel_tree_format(), collsel_tree_family(),
 * collsel_tree_hier(); 1.3.0 collsel_tree_refused(), which 2.0.0 removes: which algorithm an
 * MPI refuses at which comm_size is that MPI release's fact, not the decoder's, and the runtimes
 * read it from their MPI's table, runtime/collsel_mpi_table.h).
 *
 * Naming. Every identifier starts with collsel_tree_ (types, functions) or COLLSEL_TREE_
 * (macros, error codes). The query functions are named as in the C that `collsel build` /
 * `collsel emit --target c` generates (<prefix>_decide, <prefix>_decide3):
 *   collsel_tree_decide(tree, comm_size, msg_size, &choice)      2-axis trees
 *   collsel_tree_decide3(tree, comm_size, msg_size, z, &choice)  3-axis trees
 *
 * Types. The handle is opaque (collsel_tree). Query arguments have fixed widths on every data
 * model (LP64, LLP64, ILP32): comm_size int32_t (>= 1), msg_size uint64_t (bytes), z int64_t
 * (a numeric z's value, or a category's index in tree.json order). The decision's fields are
 * int32_t. Counts are uint32_t.
 *
 * Errors. Functions that can fail return a collsel_tree_error: COLLSEL_TREE_OK (0) on success,
 * a positive code otherwise, and then leave no partial result to use (*tree is set to NULL by
 * the loaders; *choice is unspecified after a failed query). collsel_tree_strerror() takes any
 * int (a collsel_tree_error converts to int implicitly) and returns one line of text, never NULL;
 * values that are no error code (negative, or >= COLLSEL_TREE_NERRORS) give the fixed text
 * "unknown collsel_tree error". Queries fail only on their arguments (NULL pointers,
 * comm_size < 1, the wrong number of axes), never because of the blob, which was validated at
 * load. The accessors (collsel_tree_axes() ...) do not fail; on a NULL tree they return 0 ("").
 *
 * Memory and threads. collsel_tree_load_file() allocates the handle and a copy of the file
 * (one block, released by collsel_tree_free()). collsel_tree_load_buffer() allocates nothing:
 * the handle lives in caller-owned collsel_tree_storage and refers to the caller's bytes.
 * Queries allocate nothing and only read the handle, so any number of threads may query one
 * loaded tree at once.
 *
 * Versions. COLLSEL_TREE_VERSION_MAJOR/MINOR/PATCH are the version of this API (the header);
 * collsel_tree_version() returns the version of the library linked, as
 * COLLSEL_TREE_VERSION = MAJOR * 10000 + MINOR * 100 + PATCH (1.0.0 -> 10000), so a program
 * can check at run time that it was linked against the API it was compiled for
 * (collsel_tree_version() / 10000 == COLLSEL_TREE_VERSION_MAJOR). A new major version may
 * change or remove declarations; a minor version only adds. COLLSEL_TREE_FORMAT_VERSION is the
 * newest version of the blob format, independent of the API version: the loader accepts formats
 * 1 to that version, and rejects others with COLLSEL_TREE_EVERSION.
 *
 * ------------------------------------------------------------------------------------------
 * Blob format, version 2 (version 1 differs where marked [v1], version 3 where marked [v3]; the
 * emitter writes 3 for a tree with tree.json's `beyond`, 2 otherwise). All integers
 * little-endian, no padding, no alignment requirement.
 *
 *   offset  size      field
 *   0       4         magic "CSLT" (0x43 0x53 0x4C 0x54)
 *   4       1         format version = 2 [v1: 1] [v3: 3]
 *   5       1         A = number of axes: 2 (comm_size, msg_size) or 3 (+ z)
 *   6       1         split mode: 0 = balanced, 1 = replicate (see "Descent" below)
 *   7       1         W = bytes per node: 2 or 4
 *   8       4         u32 N = node count, >= 1 (W = 2 needs N <= 32768)
 *   12      2         u16 M = method count, >= 1 (W = 2 needs M <= 32768)
 *   14      1         algorithm family: 0 = Open MPI coll/tuned ids, 1 = MPICH ids [v1: 0,
 *                     read as COLLSEL_TREE_FAMILY_UNKNOWN]
 *   15      1         reserved, 0
 *   16      16        collective name: 1-16 printable ASCII bytes (0x21-0x7E), NUL-padded
 *   [v3: 32 4         u32 beyond_above, 1..2^31 - 2: every comm_size > beyond_above decides
 *                     algorithm 0 (defer to the MPI; segsize, faninout 0); every later
 *                     offset below moves by 4]
 *   32      4 * A     axis records, one per axis:
 *                       u8  kind: 0 = linear, 1 = log2, 2 = category
 *                       u8  reserved, 0
 *                       u16 n = number of cells, >= 1
 *                     axis 0 (comm_size) is linear, axis 1 (msg_size) is log2,
 *                     axis 2 (z) is linear or category
 *   ...     cuts      for each axis in order, its n - 1 cuts, strictly increasing:
 *                       axis 0: u32 each; axis 1: u64 each; axis 2 linear: s64 each;
 *                       axis 2 category: nothing (cut k is k + 1: the category index is the
 *                       cell, values beyond either end take the edge category)
 *                     cell of a value v = number of cuts <= v (cut k-1 is the smallest value
 *                     in cell k; the edge cells extend to every P >= 1, m >= 0 and z)
 *   ...     12 * M    methods: u16 algorithm, u16 faninout, u32 segsize (<= 2^31 - 1),
 *                     u16 groups, u8 inner, u8 outer. groups 0: a flat method (inner, outer
 *                     0). groups G in 2..9999: the hierarchical method (Open MPI family only;
 *                     algorithm, faninout, segsize 0; inner, outer coll/tuned ids 0..9): G
 *                     groups of consecutive ranks, inner algorithm inside the groups, outer
 *                     among the group leaders; decided as algorithm COLLSEL_TREE_HIER_BASE +
 *                     G * 100 + inner * 10 + outer (collsel_tree_hier() takes it apart)
 *                     [v1: 8 * M, the first three fields only]
 *   ...     W * N     nodes in breadth-first order, node 0 the root. One unsigned W-byte word:
 *                       top bit set   -> leaf; the other bits are its method index (< M)
 *                       top bit clear -> internal; the other bits are its first child's index.
 *                     The children of a node are contiguous; the first children of the
 *                     internal nodes, in index order, are 1, 1 + c0, 1 + c0 + c1, ... where ci
 *                     is the child count of the i-th internal node, and the last range ends at
 *                     N (so every node but the root has exactly one parent, and every child
 *                     index is greater than its parent's).
 *   ...     4         CRC-32 (IEEE 802.3 / zlib: reflected polynomial 0xEDB88320, initial
 *                     value and final XOR 0xFFFFFFFF) of every preceding byte
 *
 * Descent. Split positions are not stored: a node's split follows from its box of cells,
 * exactly as `collsel build` chooses it. The root's box is [0, n) on every axis ([0, S) in
 * replicate mode).
 *   balanced:  an axis of a box [lo, hi) with hi - lo >= 2 splits at mid = lo + (hi-lo+1)/2;
 *              narrower axes do not split.
 *   replicate: boxes live on a grid of S = 2^k builder cells per axis, S the smallest power
 *              of two >= every n; builder cell b holds cell (b * n) / S. A box [lo, hi) with
 *              hi - lo >= 2 splits every axis at builder mid = lo + (hi - lo) / 2, which is
 *              cell boundary ((mid - 1) * n) / S + 1 (a child can be empty).
 *   A value in cell c goes to the high half when c >= boundary (balanced: the boundary is
 *   mid); an axis that does not split keeps its box. The child index is the first child plus
 *   one bit per split axis, axis 0 the most significant bit, 1 = high half.
 *   An internal node must split at least one axis and have exactly 2^(split axes) children.
 * ------------------------------------------------------------------------------------------
 */
#ifndef COLLSEL_TREE_H
#define COLLSEL_TREE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Version of this API; collsel_tree_version() returns the linked library's COLLSEL_TREE_VERSION. */
#define COLLSEL_TREE_VERSION_MAJOR 2
#define COLLSEL_TREE_VERSION_MINOR 0
#define COLLSEL_TREE_VERSION_PATCH 0
#define COLLSEL_TREE_VERSION                                                                   \
    (COLLSEL_TREE_VERSION_MAJOR * 10000 + COLLSEL_TREE_VERSION_MINOR * 100                    \
     + COLLSEL_TREE_VERSION_PATCH)

/* Newest blob format this library reads (byte 4 of a blob); formats 1 (flat methods, family
 * unknown) and 2 are read too. Format 3 is format 2 with a u32 beyond_above after the header:
 * a tree that defers to the MPI (algorithm 0) at every comm_size > beyond_above (tree.json's
 * `beyond`); collsel writes it only for such trees, format 2 otherwise. */
#define COLLSEL_TREE_FORMAT_VERSION 3

/* Algorithm families (blob byte 14; collsel_tree_family()). */
#define COLLSEL_TREE_FAMILY_OPENMPI 0
#define COLLSEL_TREE_FAMILY_MPICH 1
#define COLLSEL_TREE_FAMILY_UNKNOWN 255

/* Hierarchical methods as decisions: algorithm = HIER_BASE + G * 100 + inner * 10 + outer. */
#define COLLSEL_TREE_HIER_BASE 1000000
#define COLLSEL_TREE_HIER_MAX_GROUPS 9999
/* Largest blob collsel_tree_load_file() accepts. */
#define COLLSEL_TREE_MAX_FILE_SIZE (64u << 20)

typedef enum collsel_tree_error {
    COLLSEL_TREE_OK = 0,
    COLLSEL_TREE_EINVAL,     /* NULL argument, or comm_size < 1 */
    COLLSEL_TREE_EIO,        /* cannot open or read the file */
    COLLSEL_TREE_ENOMEM,     /* out of memory (file loading only) */
    COLLSEL_TREE_ETOOBIG,    /* file larger than COLLSEL_TREE_MAX_FILE_SIZE */
    COLLSEL_TREE_ETRUNCATED, /* fewer bytes than the header declares */
    COLLSEL_TREE_ESIZE,      /* more bytes than the header declares */
    COLLSEL_TREE_EMAGIC,     /* not a collsel tree blob */
    COLLSEL_TREE_EVERSION,   /* unsupported format version */
    COLLSEL_TREE_EHEADER,    /* bad axis count, split mode, node width, counts, name */
    COLLSEL_TREE_EAXIS,      /* bad axis kind or cell count */
    COLLSEL_TREE_ECHECKSUM,  /* CRC-32 mismatch */
    COLLSEL_TREE_ECUTS,      /* axis cuts not strictly increasing */
    COLLSEL_TREE_EMETHOD,    /* method segsize > INT32_MAX, or a bad hierarchical record */
    COLLSEL_TREE_ENODE,      /* method index out of range, or the node layout is not a tree */
    COLLSEL_TREE_EDIMS,      /* query with the wrong number of axes for this tree */
    COLLSEL_TREE_NERRORS     /* number of codes above (not an error code) */
} collsel_tree_error;

/* A loaded tree (opaque). */
typedef struct collsel_tree collsel_tree;

/* Caller-owned memory for collsel_tree_load_buffer(): no allocation in that case. It also holds
 * the lookup tables built at load (about 3 KB): comm_size/msg_size cell buckets, a jump table over
 * the first levels of 2-axis balanced trees, and the method of every cell for 2-axis trees of at
 * most 2048 cells and 256 methods (their queries then read no tree node at all). */
typedef struct collsel_tree_storage {
    union {
        uint64_t words[384];
        void *pointer;
    } opaque;
} collsel_tree_storage;

/* The decision: Open MPI coll/tuned algorithm id (0..65535; a hierarchical method: see
 * COLLSEL_TREE_HIER_BASE and collsel_tree_hier()), segment size in bytes (0 = none;
 * 0..INT32_MAX), fan-in/out (0..65535).
 * algorithm 0 means "no override, let the MPI decide": the tree defers to the MPI's own decision
 * there (Open MPI: coll/tuned's fixed decision; MPICH: its own selection), so the caller should
 * force nothing (segsize and faninout are then 0). Ids 1.. name the algorithm to force. */
typedef struct collsel_tree_choice {
    int32_t algorithm;
    int32_t segsize;
    int32_t faninout;
} collsel_tree_choice;

/* COLLSEL_TREE_VERSION of the library linked (10000 for 1.0.0). */
uint32_t collsel_tree_version(void);

/* Reads and validates a blob file; on success *tree must be released with collsel_tree_free().
 * On failure *tree is NULL (when tree is not NULL). */
collsel_tree_error collsel_tree_load_file(const char *path, collsel_tree **tree);

/* Validates `size` bytes at `data` and makes *tree refer to them (not copied: `data` must stay
 * valid and unchanged while the tree is used) with its state in `storage`. Allocates nothing;
 * collsel_tree_free() on such a tree does nothing. On failure *tree is NULL. */
collsel_tree_error collsel_tree_load_buffer(const void *data, size_t size,
                                            collsel_tree_storage *storage, collsel_tree **tree);

/* Releases a tree from collsel_tree_load_file(); does nothing for NULL or a buffer-loaded tree. */
void collsel_tree_free(collsel_tree *tree);

/* Decision for a communicator of comm_size (>= 1) processes and msg_size bytes; 2-axis trees
 * (COLLSEL_TREE_EDIMS for a 3-axis tree). */
collsel_tree_error collsel_tree_decide(const collsel_tree *tree, int32_t comm_size,
                                       uint64_t msg_size, collsel_tree_choice *choice);

/* The same for 3-axis trees (COLLSEL_TREE_EDIMS for a 2-axis tree); for a category axis z is the
 * category index in tree.json order, and values beyond either end take the edge category. */
collsel_tree_error collsel_tree_decide3(const collsel_tree *tree, int32_t comm_size,
                                        uint64_t msg_size, int64_t z, collsel_tree_choice *choice);

int collsel_tree_axes(const collsel_tree *tree);                 /* 2 or 3 */
uint32_t collsel_tree_node_count(const collsel_tree *tree);
uint32_t collsel_tree_method_count(const collsel_tree *tree);
const char *collsel_tree_collective(const collsel_tree *tree);   /* e.g. "bcast" */

/* Since 1.1.0. The msg_size cuts (axis 1) in increasing order: copies the first
 * min(count, capacity) of them to `cuts` (which may be NULL when capacity is 0) and returns their
 * count (the axis's cells - 1; 0 for a NULL tree). Cut k is the smallest msg_size of cell k + 1,
 * so for a fixed comm_size (and z) a decision can change only at a cut. */
uint32_t collsel_tree_msg_cuts(const collsel_tree *tree, uint64_t *cuts, uint32_t capacity);

/* Since 1.1.0. Method record `index` (0 <= index < collsel_tree_method_count()) as a decision;
 * COLLSEL_TREE_EINVAL for a NULL argument or an index out of range. */
collsel_tree_error collsel_tree_method(const collsel_tree *tree, uint32_t index,
                                       collsel_tree_choice *choice);

/* Since 1.2.0. The blob's format version (1 or 2; 0 for NULL) and algorithm family
 * (COLLSEL_TREE_FAMILY_OPENMPI or _MPICH; _UNKNOWN for format 1 and NULL). */
int collsel_tree_format(const collsel_tree *tree);
int collsel_tree_family(const collsel_tree *tree);

/* Since 1.2.0. 1 when the choice is a hierarchical method, its parts then stored through the
 * non-NULL pointers (G groups, inner and outer algorithm); 0 for a flat choice or NULL. */
int collsel_tree_hier(const collsel_tree_choice *choice, int32_t *groups, int32_t *inner,
                      int32_t *outer);

/* One line describing an error code (never NULL); any int is accepted, values that are no code
 * give "unknown collsel_tree error". */
const char *collsel_tree_strerror(int error);

#ifdef __cplusplus
}
#endif

#endif
