/* collsel_tree: loader, validator and query of collsel tree blobs (format in collsel_tree.h). */
#include "collsel_tree.h"
#include "collsel_tree_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define HEADER_SIZE 32u
#define BEYOND_SIZE 4u       /* format 3: u32 beyond_above after the 32-byte header */
#define AXIS_RECORD 4u
#define METHOD_SIZE_V1 8u    /* u16 algorithm, u16 faninout, u32 segsize */
#define METHOD_SIZE_V2 12u   /* + u16 groups, u8 inner, u8 outer */
#define CRC_SIZE 4u
#define MAX_AXES 3
/* A box halves at every level (both modes), so depth <= 16 for n <= 65535 cells an axis. */
#define MAX_DEPTH 17
#define STACK_SIZE (1 + MAX_DEPTH * 7)
/* O(1) cell lookup, filled at load: comm_size below SMALL_P by a direct table; larger values by
 * bit length L (1..64): the cuts of bit length L are cuts[start[L] .. start[L + 1]), all smaller
 * cuts are <= v and all larger ones > v, so cell(v) = start[L] + (cuts <= v in bucket L), counted
 * by `scan` branch-free compares (scan = the largest bucket population). */
#define SMALL_P 64u
#define N_BUCKETS 66
/* 2-axis balanced trees: the node reached after the first JUMP_LEVELS levels, indexed by the
 * cells' path bits (2 per level), filled at load, so a query skips those dependent loads. */
#define JUMP_LEVELS 3
#define JUMP_SIZE (1u << (2 * JUMP_LEVELS))
/* 2-axis trees with at most CELL_TABLE cells and 256 methods: the method of every cell, filled
 * at load by descending the tree once per cell, so a query is two cell lookups and one load. */
#define CELL_TABLE 2048u

enum { KIND_LINEAR = 0, KIND_LOG2 = 1, KIND_CATEGORY = 2 };
enum { SPLIT_BALANCED = 0, SPLIT_REPLICATE = 1 };

struct cell_lut {
    uint16_t start[N_BUCKETS];
    uint16_t n_cuts;
    uint16_t scan;
};

struct collsel_tree {
    struct cell_lut lut[2];           /* axes 0 and 1 */
    uint16_t small_p[SMALL_P];        /* cell of comm_size v < SMALL_P */
    uint32_t max_depth;               /* deepest leaf (root = 0), set by check_tree */
    uint32_t jump[JUMP_SIZE];         /* 2-axis balanced only, see build_jump */
    unsigned char cell_method[CELL_TABLE];   /* used when has_table, see build_cell_table */
    unsigned char has_table;
    const unsigned char *cuts[MAX_AXES];
    const unsigned char *methods;
    const unsigned char *nodes;
    uint32_t n_cells[MAX_AXES];
    uint32_t n_nodes;
    uint32_t n_methods;
    uint32_t leaf_bit;     /* 0x8000 or 0x80000000 */
    uint32_t log2_size;    /* replicate: S = 1 << log2_size */
    unsigned char n_axes;
    unsigned char kind[MAX_AXES];
    unsigned char split_mode;
    unsigned char width;
    unsigned char owned;   /* allocated by collsel_tree_load_file */
    unsigned char format;  /* blob format version, 1, 2 or 3 */
    unsigned char family;  /* COLLSEL_TREE_FAMILY_* (format 1: unknown) */
    uint32_t method_size;  /* bytes per method record, by format */
    uint32_t header_size;  /* HEADER_SIZE, + BEYOND_SIZE in format 3 */
    uint32_t beyond_above; /* format 3: comm_size > it defers (algorithm 0); 0: none */
    const struct refusal *refusal;   /* this collective's, see find_refusal; NULL: none */
    char name[17];
};

typedef char storage_is_big_enough[sizeof(struct collsel_tree) <= sizeof(collsel_tree_storage)
                                   ? 1 : -1];

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
static uint16_t rd16(const unsigned char *p) { uint16_t v; memcpy(&v, p, 2); return v; }
static uint32_t rd32(const unsigned char *p) { uint32_t v; memcpy(&v, p, 4); return v; }
static uint64_t rd64(const unsigned char *p) { uint64_t v; memcpy(&v, p, 8); return v; }
#else
static uint16_t rd16(const unsigned char *p) { return (uint16_t)(p[0] | (unsigned)p[1] << 8); }
static uint32_t rd32(const unsigned char *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}
static uint64_t rd64(const unsigned char *p) { return rd32(p) | (uint64_t)rd32(p + 4) << 32; }
#endif

/* CRC-32 (IEEE 802.3, reflected 0xEDB88320), one table entry per byte value. */
static const uint32_t crc_table[256] = {
    0x00000000u, 0x77073096u, 0xee0e612cu, 0x990951bau, 0x076dc419u, 0x706af48fu,
    0xe963a535u, 0x9e6495a3u, 0x0edb8832u, 0x79dcb8a4u, 0xe0d5e91eu, 0x97d2d988u,
    0x09b64c2bu, 0x7eb17cbdu, 0xe7b82d07u, 0x90bf1d91u, 0x1db71064u, 0x6ab020f2u,
    0xf3b97148u, 0x84be41deu, 0x1adad47du, 0x6ddde4ebu, 0xf4d4b551u, 0x83d385c7u,
    0x136c9856u, 0x646ba8c0u, 0xfd62f97au, 0x8a65c9ecu, 0x14015c4fu, 0x63066cd9u,
    0xfa0f3d63u, 0x8d080df5u, 0x3b6e20c8u, 0x4c69105eu, 0xd56041e4u, 0xa2677172u,
    0x3c03e4d1u, 0x4b04d447u, 0xd20d85fdu, 0xa50ab56bu, 0x35b5a8fau, 0x42b2986cu,
    0xdbbbc9d6u, 0xacbcf940u, 0x32d86ce3u, 0x45df5c75u, 0xdcd60dcfu, 0xabd13d59u,
    0x26d930acu, 0x51de003au, 0xc8d75180u, 0xbfd06116u, 0x21b4f4b5u, 0x56b3c423u,
    0xcfba9599u, 0xb8bda50fu, 0x2802b89eu, 0x5f058808u, 0xc60cd9b2u, 0xb10be924u,
    0x2f6f7c87u, 0x58684c11u, 0xc1611dabu, 0xb6662d3du, 0x76dc4190u, 0x01db7106u,
    0x98d220bcu, 0xefd5102au, 0x71b18589u, 0x06b6b51fu, 0x9fbfe4a5u, 0xe8b8d433u,
    0x7807c9a2u, 0x0f00f934u, 0x9609a88eu, 0xe10e9818u, 0x7f6a0dbbu, 0x086d3d2du,
    0x91646c97u, 0xe6635c01u, 0x6b6b51f4u, 0x1c6c6162u, 0x856530d8u, 0xf262004eu,
    0x6c0695edu, 0x1b01a57bu, 0x8208f4c1u, 0xf50fc457u, 0x65b0d9c6u, 0x12b7e950u,
    0x8bbeb8eau, 0xfcb9887cu, 0x62dd1ddfu, 0x15da2d49u, 0x8cd37cf3u, 0xfbd44c65u,
    0x4db26158u, 0x3ab551ceu, 0xa3bc0074u, 0xd4bb30e2u, 0x4adfa541u, 0x3dd895d7u,
    0xa4d1c46du, 0xd3d6f4fbu, 0x4369e96au, 0x346ed9fcu, 0xad678846u, 0xda60b8d0u,
    0x44042d73u, 0x33031de5u, 0xaa0a4c5fu, 0xdd0d7cc9u, 0x5005713cu, 0x270241aau,
    0xbe0b1010u, 0xc90c2086u, 0x5768b525u, 0x206f85b3u, 0xb966d409u, 0xce61e49fu,
    0x5edef90eu, 0x29d9c998u, 0xb0d09822u, 0xc7d7a8b4u, 0x59b33d17u, 0x2eb40d81u,
    0xb7bd5c3bu, 0xc0ba6cadu, 0xedb88320u, 0x9abfb3b6u, 0x03b6e20cu, 0x74b1d29au,
    0xead54739u, 0x9dd277afu, 0x04db2615u, 0x73dc1683u, 0xe3630b12u, 0x94643b84u,
    0x0d6d6a3eu, 0x7a6a5aa8u, 0xe40ecf0bu, 0x9309ff9du, 0x0a00ae27u, 0x7d079eb1u,
    0xf00f9344u, 0x8708a3d2u, 0x1e01f268u, 0x6906c2feu, 0xf762575du, 0x806567cbu,
    0x196c3671u, 0x6e6b06e7u, 0xfed41b76u, 0x89d32be0u, 0x10da7a5au, 0x67dd4accu,
    0xf9b9df6fu, 0x8ebeeff9u, 0x17b7be43u, 0x60b08ed5u, 0xd6d6a3e8u, 0xa1d1937eu,
    0x38d8c2c4u, 0x4fdff252u, 0xd1bb67f1u, 0xa6bc5767u, 0x3fb506ddu, 0x48b2364bu,
    0xd80d2bdau, 0xaf0a1b4cu, 0x36034af6u, 0x41047a60u, 0xdf60efc3u, 0xa867df55u,
    0x316e8eefu, 0x4669be79u, 0xcb61b38cu, 0xbc66831au, 0x256fd2a0u, 0x5268e236u,
    0xcc0c7795u, 0xbb0b4703u, 0x220216b9u, 0x5505262fu, 0xc5ba3bbeu, 0xb2bd0b28u,
    0x2bb45a92u, 0x5cb36a04u, 0xc2d7ffa7u, 0xb5d0cf31u, 0x2cd99e8bu, 0x5bdeae1du,
    0x9b64c2b0u, 0xec63f226u, 0x756aa39cu, 0x026d930au, 0x9c0906a9u, 0xeb0e363fu,
    0x72076785u, 0x05005713u, 0x95bf4a82u, 0xe2b87a14u, 0x7bb12baeu, 0x0cb61b38u,
    0x92d28e9bu, 0xe5d5be0du, 0x7cdcefb7u, 0x0bdbdf21u, 0x86d3d2d4u, 0xf1d4e242u,
    0x68ddb3f8u, 0x1fda836eu, 0x81be16cdu, 0xf6b9265bu, 0x6fb077e1u, 0x18b74777u,
    0x88085ae6u, 0xff0f6a70u, 0x66063bcau, 0x11010b5cu, 0x8f659effu, 0xf862ae69u,
    0x616bffd3u, 0x166ccf45u, 0xa00ae278u, 0xd70dd2eeu, 0x4e048354u, 0x3903b3c2u,
    0xa7672661u, 0xd06016f7u, 0x4969474du, 0x3e6e77dbu, 0xaed16a4au, 0xd9d65adcu,
    0x40df0b66u, 0x37d83bf0u, 0xa9bcae53u, 0xdebb9ec5u, 0x47b2cf7fu, 0x30b5ffe9u,
    0xbdbdf21cu, 0xcabac28au, 0x53b39330u, 0x24b4a3a6u, 0xbad03605u, 0xcdd70693u,
    0x54de5729u, 0x23d967bfu, 0xb3667a2eu, 0xc4614ab8u, 0x5d681b02u, 0x2a6f2b94u,
    0xb40bbe37u, 0xc30c8ea1u, 0x5a05df1bu, 0x2d02ef8du
};

static uint32_t crc32_ieee(const unsigned char *p, size_t n)
{
    uint32_t crc = 0xFFFFFFFFu;
    size_t i;
    for (i = 0; i < n; i++)
        crc = (crc >> 8) ^ crc_table[(crc ^ p[i]) & 0xFFu];
    return crc ^ 0xFFFFFFFFu;
}

static size_t cut_width(int axis, int kind)
{
    if (kind == KIND_CATEGORY)
        return 0;
    return axis == 0 ? 4 : 8;
}

static uint32_t node_word(const struct collsel_tree *t, uint32_t i)
{
    return t->width == 2 ? rd16(t->nodes + 2 * (size_t)i) : rd32(t->nodes + 4 * (size_t)i);
}

/* ---- validation ------------------------------------------------------------------------ */

static collsel_tree_error check_header(const unsigned char *b, size_t size,
                                       struct collsel_tree *t, size_t *expected)
{
    size_t pos, a;
    uint32_t s;
    int i, seen_nul = 0;

    if (size < 8)
        return size >= 4 && memcmp(b, "CSLT", 4) != 0 ? COLLSEL_TREE_EMAGIC
                                                       : COLLSEL_TREE_ETRUNCATED;
    if (memcmp(b, "CSLT", 4) != 0)
        return COLLSEL_TREE_EMAGIC;
    if (b[4] < 1 || b[4] > COLLSEL_TREE_FORMAT_VERSION)
        return COLLSEL_TREE_EVERSION;
    t->format = b[4];
    t->method_size = t->format == 1 ? METHOD_SIZE_V1 : METHOD_SIZE_V2;
    t->header_size = HEADER_SIZE + (t->format == 3 ? BEYOND_SIZE : 0u);
    if (size < t->header_size)
        return COLLSEL_TREE_ETRUNCATED;
    /* format 3: the largest comm_size the tree decides at, 1..INT32_MAX - 1 */
    t->beyond_above = t->format == 3 ? rd32(b + HEADER_SIZE) : 0u;
    if (t->format == 3 && (t->beyond_above < 1 || t->beyond_above >= (uint32_t)INT32_MAX))
        return COLLSEL_TREE_EHEADER;
    t->n_axes = b[5];
    t->split_mode = b[6];
    t->width = b[7];
    t->n_nodes = rd32(b + 8);
    t->n_methods = rd16(b + 12);
    /* format 1: bytes 14-15 reserved; formats 2, 3: byte 14 the family, byte 15 reserved */
    t->family = t->format == 1 ? COLLSEL_TREE_FAMILY_UNKNOWN : b[14];
    if ((t->n_axes != 2 && t->n_axes != 3) || t->split_mode > SPLIT_REPLICATE
        || (t->width != 2 && t->width != 4) || b[15] != 0
        || (t->format == 1 ? b[14] != 0 : b[14] > COLLSEL_TREE_FAMILY_MPICH))
        return COLLSEL_TREE_EHEADER;
    t->leaf_bit = t->width == 2 ? 0x8000u : 0x80000000u;
    if (t->n_nodes < 1 || t->n_methods < 1 || t->n_nodes > t->leaf_bit
        || t->n_methods > t->leaf_bit)
        return COLLSEL_TREE_EHEADER;
    for (i = 0; i < 16; i++) {
        unsigned char ch = b[16 + i];
        if (ch == 0)
            seen_nul = 1;
        else if (seen_nul || ch < 0x21 || ch > 0x7E)
            return COLLSEL_TREE_EHEADER;
        t->name[i] = (char)ch;
    }
    t->name[16] = 0;
    if (t->name[0] == 0)
        return COLLSEL_TREE_EHEADER;

    pos = t->header_size;
    if (size < pos + AXIS_RECORD * t->n_axes)
        return COLLSEL_TREE_ETRUNCATED;
    for (i = 0; i < t->n_axes; i++) {
        const unsigned char *r = b + pos + AXIS_RECORD * (size_t)i;
        int kind = r[0];
        int ok = i == 0 ? kind == KIND_LINEAR : i == 1 ? kind == KIND_LOG2
                                                       : kind == KIND_LINEAR || kind == KIND_CATEGORY;
        if (!ok || r[1] != 0 || rd16(r + 2) == 0)
            return COLLSEL_TREE_EAXIS;
        t->kind[i] = (unsigned char)kind;
        t->n_cells[i] = rd16(r + 2);
    }
    pos += AXIS_RECORD * t->n_axes;
    /* Every term is bounded (< 2^16 * 8 or < 2^31 * 4), so no size_t overflow on 32-bit hosts
     * beyond the node term, which is checked on its own. */
    for (i = 0; i < t->n_axes; i++) {
        t->cuts[i] = NULL;
        pos += (size_t)(t->n_cells[i] - 1) * cut_width(i, t->kind[i]);
    }
    pos += (size_t)t->method_size * t->n_methods;
    if ((uint64_t)t->n_nodes * t->width > (uint64_t)(SIZE_MAX - pos - CRC_SIZE))
        return COLLSEL_TREE_ETRUNCATED;
    a = pos + (size_t)t->n_nodes * t->width + CRC_SIZE;
    *expected = a;
    s = 0;
    for (i = 0; i < t->n_axes; i++)
        if (t->n_cells[i] > s)
            s = t->n_cells[i];
    t->log2_size = 0;
    while ((1u << t->log2_size) < s)
        t->log2_size++;
    return COLLSEL_TREE_OK;
}

/* A method record: segsize <= INT32_MAX; format 2: a flat record has groups, inner and outer 0;
 * a hierarchical one (groups 2..COLLSEL_TREE_HIER_MAX_GROUPS, inner and outer 0..9, Open MPI
 * family only) has algorithm, faninout and segsize 0. 0 when valid. */
static int check_method(const struct collsel_tree *t, const unsigned char *m)
{
    uint32_t groups;
    if (rd32(m + 4) > (uint32_t)INT32_MAX)
        return 1;
    if (t->format == 1)
        return 0;
    groups = rd16(m + 8);
    if (groups == 0)
        return m[10] != 0 || m[11] != 0;
    return groups < 2 || groups > COLLSEL_TREE_HIER_MAX_GROUPS || m[10] > 9 || m[11] > 9
           || t->family != COLLSEL_TREE_FAMILY_OPENMPI || rd16(m) != 0 || rd16(m + 2) != 0
           || rd32(m + 4) != 0;
}

static collsel_tree_error check_cuts(struct collsel_tree *t, const unsigned char *b)
{
    size_t pos = t->header_size + AXIS_RECORD * (size_t)t->n_axes;
    int i;
    uint32_t k;
    for (i = 0; i < t->n_axes; i++) {
        size_t w = cut_width(i, t->kind[i]);
        const unsigned char *c = b + pos;
        t->cuts[i] = c;
        for (k = 1; w && k + 1 < t->n_cells[i]; k++) {
            int sorted = i == 0   ? rd32(c + 4 * (k - 1)) < rd32(c + 4 * k)
                         : i == 1 ? rd64(c + 8 * (k - 1)) < rd64(c + 8 * k)
                                  : (int64_t)rd64(c + 8 * (k - 1)) < (int64_t)rd64(c + 8 * k);
            if (!sorted)
                return COLLSEL_TREE_ECUTS;
        }
        pos += (size_t)(t->n_cells[i] - 1) * w;
    }
    t->methods = b + pos;
    for (k = 0; k < t->n_methods; k++)
        if (check_method(t, t->methods + t->method_size * (size_t)k))
            return COLLSEL_TREE_EMETHOD;
    t->nodes = t->methods + (size_t)t->method_size * t->n_methods;
    return COLLSEL_TREE_OK;
}

/* Pass 1, index order: leaves name a method; first children of internal nodes are > their
 * node, strictly increasing, start at 1 and stay < N, so their ranges partition [1, N). */
static collsel_tree_error check_layout(const struct collsel_tree *t)
{
    uint32_t i, prev = 0, mask = t->leaf_bit - 1;
    if (t->n_nodes > 1 && (node_word(t, 0) & t->leaf_bit))
        return COLLSEL_TREE_ENODE;
    for (i = 0; i < t->n_nodes; i++) {
        uint32_t w = node_word(t, i);
        if (w & t->leaf_bit) {
            if ((w & mask) >= t->n_methods)
                return COLLSEL_TREE_ENODE;
            continue;
        }
        w &= mask;
        if (w <= i || w >= t->n_nodes || (prev == 0 ? w != 1 : w <= prev))
            return COLLSEL_TREE_ENODE;
        prev = w;
    }
    return COLLSEL_TREE_OK;
}

/* ---- the split rule ("Descent" in collsel_tree.h) ----------------------------------------
 * Written once, here: validation (check_tree), the load-time tables (build_jump, and
 * build_cell_table through descend) and every query path (descend2_balanced_w2/w4, descend)
 * call these. They are inline and branch-free, so in the query loops, where the split mode is a
 * constant, they compile to a few adds, shifts and compares. One axis of a box is [lo, lo + len)
 * in cells (balanced mode) or in builder cells of the 2^log2_size grid (replicate mode). */

/* The root's box on axis d: every cell, or the whole builder grid. */
static inline uint32_t root_len(const struct collsel_tree *t, int d)
{
    return t->split_mode == SPLIT_REPLICATE ? 1u << t->log2_size : t->n_cells[d];
}

/* An axis of a box splits when it spans 2 or more (builder) cells. */
static inline uint32_t axis_splits(uint32_t len) { return len >= 2; }

/* Size of the low half of an axis of len >= 2 (builder) cells, so the split is at
 * mid = lo + low_half: balanced (len + 1) / 2, the low half being the larger one; replicate
 * len / 2, len being a power of two (equal halves). */
static inline uint32_t low_half(unsigned mode, uint32_t len)
{
    return (len + (mode == SPLIT_BALANCED)) >> 1;
}

/* Keeps the high half (high = 1) or the low half (high = 0) of an axis, branch-free. Balanced,
 * on an axis that does not split (len = 1, high = 0), the box stays. */
static inline void keep_half(unsigned mode, uint32_t *lo, uint32_t *len, uint32_t high)
{
    uint32_t h = low_half(mode, *len);
    *lo += h & (0u - high);
    /* high ? len - h : h; in replicate mode both halves have h */
    *len = mode == SPLIT_REPLICATE ? h : (*len + 1 - high) >> 1;
}

/* One level on one axis for a value in cell c: keeps the half holding c and returns 1 if that is
 * the high half (0 on an axis that does not split). The high half starts at cell mid
 * (balanced), or at cell ((mid - 1) * n) / S + 1 (replicate: n the axis' cells, S = 2^log2_size). */
static inline uint32_t descend_axis(unsigned mode, uint32_t *lo, uint32_t *len, uint32_t c,
                                    uint32_t n, uint32_t log2_size)
{
    uint32_t mid = *lo + low_half(mode, *len);
    uint32_t boundary = mode == SPLIT_REPLICATE
                            ? (uint32_t)(((uint64_t)(mid - 1) * n) >> log2_size) + 1 : mid;
    uint32_t high = c >= boundary;
    keep_half(mode, lo, len, high);
    return high;
}

/* A child's rank among its siblings, axis by axis: one more bit (1 = high half) for an axis that
 * splits, axis 0 the most significant. */
static inline uint32_t child_rank(uint32_t rank, uint32_t splits, uint32_t high)
{
    return (rank << splits) | high;
}

/* descend_axis() on the next axis of a box, its bit appended to the child rank so far. */
static inline uint32_t rank_step(unsigned mode, uint32_t rank, uint32_t *lo, uint32_t *len,
                                 uint32_t c, uint32_t n, uint32_t log2_size)
{
    uint32_t splits = axis_splits(*len);
    return child_rank(rank, splits, descend_axis(mode, lo, len, c, n, log2_size));
}

/* ---- validation, continued ---------------------------------------------------------------- */

struct box {
    uint32_t node, depth;
    uint32_t lo[MAX_AXES], len[MAX_AXES];
};

/* Children of internal node i according to the layout: up to the next internal node's first
 * child, or N. The scans over all internal nodes add up to O(N). */
static uint32_t implied_children(const struct collsel_tree *t, uint32_t i, uint32_t first)
{
    uint32_t j;
    for (j = i + 1; j < t->n_nodes; j++) {
        uint32_t w = node_word(t, j);
        if (!(w & t->leaf_bit))
            return w - first;
    }
    return t->n_nodes - first;
}

/* Pass 2, depth first from the root: each internal node's child count, derived from its box as
 * the query derives it, equals the count the layout implies; boxes shrink, so depth is bounded. */
static collsel_tree_error check_tree(struct collsel_tree *t)
{
    struct box stack[STACK_SIZE];
    int top = 0, d, n_axes = t->n_axes;
    uint32_t visited = 0;
    stack[0].node = 0;
    stack[0].depth = 0;
    for (d = 0; d < n_axes; d++) {
        stack[0].lo[d] = 0;
        stack[0].len[d] = root_len(t, d);
    }
    while (top >= 0) {
        struct box b = stack[top--];
        uint32_t w = node_word(t, b.node), first, count, path, n_paths = 1u << n_axes;
        uint32_t splits[MAX_AXES], split_bits = 0;
        int n_split = 0;
        if (++visited > t->n_nodes)
            return COLLSEL_TREE_ENODE;
        if (w & t->leaf_bit) {
            if (b.depth > t->max_depth)
                t->max_depth = b.depth;
            continue;
        }
        first = w & (t->leaf_bit - 1);
        for (d = 0; d < n_axes; d++) {
            splits[d] = axis_splits(b.len[d]);
            n_split += (int)splits[d];
            split_bits |= splits[d] << (n_axes - 1 - d);
        }
        if (n_split == 0 || b.depth + 1 >= MAX_DEPTH)
            return COLLSEL_TREE_ENODE;
        count = 1u << n_split;
        if (implied_children(t, b.node, first) != count || top + (int)count >= STACK_SIZE)
            return COLLSEL_TREE_ENODE;
        /* every path: one bit per axis (axis 0 first), 1 = high half; none on an axis that does
         * not split. Its child is the one a query taking that path reaches. */
        for (path = 0; path < n_paths; path++) {
            struct box c = b;
            uint32_t rank = 0;
            if (path & ~split_bits)
                continue;
            for (d = 0; d < n_axes; d++) {
                uint32_t high = path >> (n_axes - 1 - d) & 1;
                rank = child_rank(rank, splits[d], high);
                if (splits[d])
                    keep_half(t->split_mode, &c.lo[d], &c.len[d], high);
            }
            c.node = first + rank;
            c.depth = b.depth + 1;
            stack[++top] = c;
        }
    }
    return visited == t->n_nodes ? COLLSEL_TREE_OK : COLLSEL_TREE_ENODE;
}

/* Bucket of a value: its bit length, with 0 and 1 sharing bucket 1 (no branch on v == 0). */
static unsigned bit_length(uint64_t v) { return 64u - (unsigned)__builtin_clzll(v | 1u); }

/* Load time: bucket starts and scan widths for axes 0 and 1 (cuts already checked sorted). */
static void build_luts(struct collsel_tree *t)
{
    int a;
    uint32_t k, v;
    for (a = 0; a < 2; a++) {
        struct cell_lut *l = &t->lut[a];
        uint32_t n = t->n_cells[a] - 1, L;
        k = 0;
        l->n_cuts = (uint16_t)n;
        l->scan = 0;
        for (L = 0; L < N_BUCKETS; L++) {
            uint32_t s = k;
            while (k < n && bit_length(a == 0 ? rd32(t->cuts[0] + 4 * (size_t)k)
                                              : rd64(t->cuts[1] + 8 * (size_t)k)) <= L)
                k++;
            l->start[L] = (uint16_t)s;
            if (k - s > l->scan)
                l->scan = (uint16_t)(k - s);
        }
    }
    /* direct table for small comm sizes: number of cuts <= v */
    for (v = 0, k = 0; v < SMALL_P; v++) {
        while (k < t->n_cells[0] - 1 && rd32(t->cuts[0] + 4 * (size_t)k) <= v)
            k++;
        t->small_p[v] = (uint16_t)k;
    }
}

/* Load time, 2-axis balanced trees: jump[code] = the node reached from the root by the path
 * bits in code (level d in bits 2 (J-1-d) + 1 (axis 0) and 2 (J-1-d) (axis 1)), staying at a
 * leaf reached earlier. Codes that no query produces (a high bit on an axis that does not
 * split) are walked as if that bit were 0, so they stay inside the validated tree. */
static void build_jump(struct collsel_tree *t)
{
    uint32_t code, level;
    int d;
    for (code = 0; code < JUMP_SIZE; code++) {
        uint32_t node = 0, lo[2] = {0, 0}, len[2];
        len[0] = t->n_cells[0];
        len[1] = t->n_cells[1];
        for (level = 0; level < JUMP_LEVELS; level++) {
            uint32_t w = node_word(t, node), rank = 0;
            if (w & t->leaf_bit)
                break;
            for (d = 0; d < 2; d++) {
                uint32_t splits = axis_splits(len[d]);
                uint32_t high = (code >> (2 * (JUMP_LEVELS - 1 - level) + 1 - d)) & splits;
                rank = child_rank(rank, splits, high);
                keep_half(SPLIT_BALANCED, &lo[d], &len[d], high);
            }
            node = (w & (t->leaf_bit - 1)) + rank;
        }
        t->jump[code] = node;
    }
}

static uint32_t descend(const struct collsel_tree *t, const uint32_t *c);

/* Load time, small 2-axis trees: the leaf method of every cell (comm_size cell major), found by
 * the generic descent. */
static void build_cell_table(struct collsel_tree *t)
{
    uint32_t c[MAX_AXES] = {0, 0, 0};
    if (t->n_axes != 2 || t->n_methods > 256
        || (uint64_t)t->n_cells[0] * t->n_cells[1] > CELL_TABLE)
        return;
    for (c[0] = 0; c[0] < t->n_cells[0]; c[0]++)
        for (c[1] = 0; c[1] < t->n_cells[1]; c[1]++)
            t->cell_method[c[0] * t->n_cells[1] + c[1]] = (unsigned char)descend(t, c);
    t->has_table = 1;
}

/* ---- refusals --------------------------------------------------------------------------- */

/* Open MPI 4.1.4's refusals (core/fallbacks.py: the FALLBACKS entries whose `runs` is None): the
 * forced algorithm fails the call, MPI_ERR_UNSUPPORTED_OPERATION, at every comm_size outside
 * [runs_from, runs_below) (`runs_only`). One entry per collective at most, keyed by the blob's
 * collective name; tests/runtime/test_runtime_refusals.py compares the table with
 * core/fallbacks.py. */
struct refusal {
    const char *collective;
    int32_t algorithm;
    int32_t runs_from, runs_below;
};

static const struct refusal REFUSALS[] = {
    {"allgather", 6, 2, 3},    /* two_procs, coll_base_allgather.c:614-616 */
    {"allgatherv", 5, 2, 3},   /* two_procs, coll_base_allgatherv.c:510-512 */
    {"alltoall", 5, 2, 3},     /* two_procs, coll_base_alltoall.c:540-542 */
    {"barrier", 5, 2, 3},      /* two_procs, coll_base_barrier.c:299-301 */
};

/* The refusal of the tree's collective, looked up once at load so a query compares two ints:
 * Open MPI ids only (an MPICH tree's ids are another numbering; format 1 holds Open MPI's). */
static const struct refusal *find_refusal(const struct collsel_tree *t)
{
    size_t i;
    if (t->family == COLLSEL_TREE_FAMILY_MPICH)
        return NULL;
    for (i = 0; i < sizeof REFUSALS / sizeof REFUSALS[0]; i++)
        if (strcmp(REFUSALS[i].collective, t->name) == 0)
            return &REFUSALS[i];
    return NULL;
}

static collsel_tree_error validate(const unsigned char *b, size_t size, struct collsel_tree *t)
{
    size_t expected = 0;
    collsel_tree_error err = check_header(b, size, t, &expected);
    if (err)
        return err;
    if (size < expected)
        return COLLSEL_TREE_ETRUNCATED;
    if (size > expected)
        return COLLSEL_TREE_ESIZE;
    if (crc32_ieee(b, size - CRC_SIZE) != rd32(b + size - CRC_SIZE))
        return COLLSEL_TREE_ECHECKSUM;
    if ((err = check_cuts(t, b)) != 0 || (err = check_layout(t)) != 0)
        return err;
    if ((err = check_tree(t)) != 0)
        return err;
    build_luts(t);
    if (t->n_axes == 2 && t->split_mode == SPLIT_BALANCED)
        build_jump(t);
    build_cell_table(t);
    t->refusal = find_refusal(t);
    return COLLSEL_TREE_OK;
}

/* ---- loading ---------------------------------------------------------------------------- */

collsel_tree_error collsel_tree_load_buffer(const void *data, size_t size,
                                            collsel_tree_storage *storage, collsel_tree **tree)
{
    struct collsel_tree t;
    collsel_tree_error err;
    if (tree)
        *tree = NULL;
    if (!data || !storage || !tree)
        return COLLSEL_TREE_EINVAL;
    memset(&t, 0, sizeof t);
    err = validate((const unsigned char *)data, size, &t);
    if (err)
        return err;
    memcpy(storage, &t, sizeof t);
    *tree = (struct collsel_tree *)(void *)storage;
    return COLLSEL_TREE_OK;
}

collsel_tree_error collsel_tree_load_file(const char *path, collsel_tree **tree)
{
    FILE *f;
    long len;
    unsigned char *mem;
    struct collsel_tree *t;
    size_t head = (sizeof(struct collsel_tree) + 15) / 16 * 16;
    collsel_tree_error err;
    if (tree)
        *tree = NULL;
    if (!path || !tree)
        return COLLSEL_TREE_EINVAL;
    f = fopen(path, "rb");
    if (!f)
        return COLLSEL_TREE_EIO;
    /* a first read tells a directory or unreadable file (EIO) from a big one (ETOOBIG) */
    if (getc(f) == EOF && ferror(f)) {
        fclose(f);
        return COLLSEL_TREE_EIO;
    }
    if (fseek(f, 0, SEEK_END) != 0 || (len = ftell(f)) < 0 || fseek(f, 0, SEEK_SET) != 0) {
        fclose(f);
        return COLLSEL_TREE_EIO;
    }
    if ((unsigned long)len > COLLSEL_TREE_MAX_FILE_SIZE) {
        fclose(f);
        return COLLSEL_TREE_ETOOBIG;
    }
    mem = (unsigned char *)malloc(head + (size_t)len + 1);
    if (!mem) {
        fclose(f);
        return COLLSEL_TREE_ENOMEM;
    }
    /* one byte more than expected: a file that grew since ftell is caught as too long */
    if (fread(mem + head, 1, (size_t)len + 1, f) != (size_t)len || ferror(f)) {
        fclose(f);
        free(mem);
        return COLLSEL_TREE_EIO;
    }
    fclose(f);
    t = (struct collsel_tree *)(void *)mem;
    memset(t, 0, sizeof *t);
    err = validate(mem + head, (size_t)len, t);
    if (err) {
        free(mem);
        return err;
    }
    t->owned = 1;
    *tree = t;
    return COLLSEL_TREE_OK;
}

void collsel_tree_free(collsel_tree *tree)
{
    if (tree && tree->owned)
        free(tree);
}

/* ---- query ------------------------------------------------------------------------------ */

/* Number of cuts <= v via the load-time buckets: bucket start plus a fixed-length branch-free
 * count within the bucket (indexes past the bucket are masked out, and clamped to stay inside
 * the cut array). */
static inline uint32_t cell_p(const struct collsel_tree *t, uint32_t v)
{
    const struct cell_lut *l = &t->lut[0];
    uint32_t L, s, e, c, j, last;
    if (v < SMALL_P)
        return t->small_p[v];
    L = bit_length(v);
    s = l->start[L];
    e = l->start[L + 1];
    last = l->n_cuts ? l->n_cuts - 1u : 0u;
    for (c = s, j = 0; j < l->scan; j++) {
        uint32_t i = s + j, in = i < e;
        i = in ? i : last;
        c += in & (rd32(t->cuts[0] + 4 * (size_t)i) <= v);
    }
    return c;
}

static inline uint32_t cell_m(const struct collsel_tree *t, uint64_t v)
{
    const struct cell_lut *l = &t->lut[1];
    uint32_t L = bit_length(v), s = l->start[L], e = l->start[L + 1], c = s, j;
    uint32_t last = l->n_cuts ? l->n_cuts - 1u : 0u;
    for (j = 0; j < l->scan; j++) {
        uint32_t i = s + j, in = i < e;
        i = in ? i : last;
        c += in & (rd64(t->cuts[1] + 8 * (size_t)i) <= v);
    }
    return c;
}

/* Number of cuts <= v: a branch-free binary search over the strictly increasing cuts. */
static uint32_t cell_s64(const unsigned char *cuts, uint32_t n_cuts, int64_t v)
{
    uint32_t base = 0, n = n_cuts;
    if (n == 0)
        return 0;
    while (n > 1) {
        uint32_t half = n / 2;
        base = (int64_t)rd64(cuts + 8 * (size_t)(base + half)) <= v ? base + half : base;
        n -= half;
    }
    return base + ((int64_t)rd64(cuts + 8 * (size_t)base) <= v);
}

/* Two axes, balanced splits, nodes of W bytes. The first JUMP_LEVELS levels compute path bits
 * only (no node loads), then jump[] gives the node. The loop then runs exactly max_depth steps
 * for every query (a leaf stays where it is: select, not branch), so its exit is always
 * predicted. Each level is rank_step() on both axes, as in descend(). */
#define DESCEND2_BALANCED(NAME, READ, W, LEAF)                                                  \
    static uint32_t NAME(const struct collsel_tree *t, uint32_t c0, uint32_t c1)               \
    {                                                                                           \
        uint32_t lo0 = 0, len0 = t->n_cells[0], lo1 = 0, len1 = t->n_cells[1], k, code = 0;   \
        uint32_t node, w;                                                                       \
        for (k = 0; k < JUMP_LEVELS; k++) {                                                     \
            uint32_t b0 = descend_axis(SPLIT_BALANCED, &lo0, &len0, c0, 0, 0);                  \
            uint32_t b1 = descend_axis(SPLIT_BALANCED, &lo1, &len1, c1, 0, 0);                  \
            code = (code << 2) | (b0 << 1) | b1;                                                \
        }                                                                                       \
        node = t->jump[code];                                                                   \
        w = READ(t->nodes + (size_t)W * node);                                                  \
        for (k = t->max_depth; k > JUMP_LEVELS; k--) {                                          \
            uint32_t leaf = w >= LEAF;                                                          \
            uint32_t rank = rank_step(SPLIT_BALANCED, 0, &lo0, &len0, c0, 0, 0);                \
            rank = rank_step(SPLIT_BALANCED, rank, &lo1, &len1, c1, 0, 0);                      \
            node ^= (node ^ (w + rank)) & (leaf - 1u); /* mask, not a branch */                 \
            w = READ(t->nodes + (size_t)W * node);                                              \
        }                                                                                       \
        return w & (LEAF - 1);                                                                  \
    }
DESCEND2_BALANCED(descend2_balanced_w2, rd16, 2, 0x8000u)
DESCEND2_BALANCED(descend2_balanced_w4, rd32, 4, 0x80000000u)

/* Any tree, cells c[] (one per axis): the method index of the leaf holding them. Valid because
 * load checked every node and child count. Inline with constant mode and axis count, so each
 * combination gets its own loop with the box in registers (scalars, not arrays). */
static inline uint32_t descend_mode(const struct collsel_tree *t, const uint32_t *c,
                                    unsigned mode, int n_axes)
{
    uint32_t lo0 = 0, len0 = root_len(t, 0), lo1 = 0, len1 = root_len(t, 1);
    uint32_t lo2 = 0, len2 = n_axes == 3 ? root_len(t, 2) : 1, c2 = n_axes == 3 ? c[2] : 0;
    uint32_t w = node_word(t, 0), mask = t->leaf_bit - 1;
    while (!(w & t->leaf_bit)) {
        uint32_t rank = rank_step(mode, 0, &lo0, &len0, c[0], t->n_cells[0], t->log2_size);
        rank = rank_step(mode, rank, &lo1, &len1, c[1], t->n_cells[1], t->log2_size);
        if (n_axes == 3)
            rank = rank_step(mode, rank, &lo2, &len2, c2, t->n_cells[2], t->log2_size);
        w = node_word(t, (w & mask) + rank);
    }
    return w & mask;
}

static uint32_t descend(const struct collsel_tree *t, const uint32_t *c)
{
    if (t->split_mode == SPLIT_REPLICATE)
        return t->n_axes == 2 ? descend_mode(t, c, SPLIT_REPLICATE, 2)
                              : descend_mode(t, c, SPLIT_REPLICATE, 3);
    return t->n_axes == 2 ? descend_mode(t, c, SPLIT_BALANCED, 2)
                          : descend_mode(t, c, SPLIT_BALANCED, 3);
}

/* Two axes without the cell table: the specialised walk for balanced trees, else descend(). */
static uint32_t descend2(const struct collsel_tree *t, uint32_t c0, uint32_t c1)
{
    uint32_t c[MAX_AXES];
    if (t->split_mode == SPLIT_BALANCED)
        return t->width == 2 ? descend2_balanced_w2(t, c0, c1) : descend2_balanced_w4(t, c0, c1);
    c[0] = c0;
    c[1] = c1;
    c[2] = 0;
    return descend(t, c);
}

/* The choice stored in method record `method` (validated at load). */
static collsel_tree_error put_choice(const struct collsel_tree *t, uint32_t method,
                                     collsel_tree_choice *choice)
{
    const unsigned char *m = t->methods + t->method_size * (size_t)method;
    uint32_t groups = t->format == 1 ? 0 : rd16(m + 8);
    if (groups) {   /* hierarchical: the one integer of COLLSEL_TREE_HIER_BASE */
        choice->algorithm = (int32_t)(COLLSEL_TREE_HIER_BASE + groups * 100u + m[10] * 10u + m[11]);
        choice->faninout = choice->segsize = 0;
        return COLLSEL_TREE_OK;
    }
    choice->algorithm = rd16(m);
    choice->faninout = rd16(m + 2);
    choice->segsize = (int32_t)rd32(m + 4);
    return COLLSEL_TREE_OK;
}

/* Cell of z on axis 2: a category index clamped to the categories, or by the s64 cuts. */
static uint32_t cell_z(const struct collsel_tree *t, int64_t z)
{
    if (t->kind[2] == KIND_CATEGORY)
        return z < 0 ? 0 : (uint64_t)z >= t->n_cells[2] ? t->n_cells[2] - 1 : (uint32_t)z;
    return cell_s64(t->cuts[2], t->n_cells[2] - 1, z);
}

/* Past the blob's beyond_above (format 3): 1 after setting the defer choice (algorithm 0). */
static int beyond(const struct collsel_tree *t, int32_t comm_size, collsel_tree_choice *choice)
{
    if (!t->beyond_above || (uint32_t)comm_size <= t->beyond_above)
        return 0;
    choice->algorithm = choice->segsize = choice->faninout = 0;
    return 1;
}

collsel_tree_error collsel_tree_decide(const collsel_tree *tree, int32_t comm_size,
                                       uint64_t msg_size, collsel_tree_choice *choice)
{
    uint32_t c0, c1;
    if (!tree || !choice || comm_size < 1)
        return COLLSEL_TREE_EINVAL;
    if (tree->n_axes != 2)
        return COLLSEL_TREE_EDIMS;
    if (beyond(tree, comm_size, choice))
        return COLLSEL_TREE_OK;
    c0 = cell_p(tree, (uint32_t)comm_size);
    c1 = cell_m(tree, msg_size);
    if (tree->has_table)
        return put_choice(tree, tree->cell_method[c0 * tree->n_cells[1] + c1], choice);
    return put_choice(tree, descend2(tree, c0, c1), choice);
}

collsel_tree_error collsel_tree_decide3(const collsel_tree *tree, int32_t comm_size,
                                        uint64_t msg_size, int64_t z, collsel_tree_choice *choice)
{
    uint32_t c[MAX_AXES];
    if (!tree || !choice || comm_size < 1)
        return COLLSEL_TREE_EINVAL;
    if (tree->n_axes != 3)
        return COLLSEL_TREE_EDIMS;
    if (beyond(tree, comm_size, choice))
        return COLLSEL_TREE_OK;
    c[0] = cell_p(tree, (uint32_t)comm_size);
    c[1] = cell_m(tree, msg_size);
    c[2] = cell_z(tree, z);
    return put_choice(tree, descend(tree, c), choice);
}

/* Private entry point (collsel_tree_internal.h): the same decision by a chosen path. */
collsel_tree_error collsel_tree_internal_decide(const collsel_tree *tree,
                                                enum collsel_tree_path path, int32_t comm_size,
                                                uint64_t msg_size, int64_t z,
                                                collsel_tree_choice *choice)
{
    uint32_t c[MAX_AXES];
    if (!tree || !choice || comm_size < 1)
        return COLLSEL_TREE_EINVAL;
    if (path == COLLSEL_TREE_PATH_PUBLIC)
        return tree->n_axes == 2 ? collsel_tree_decide(tree, comm_size, msg_size, choice)
                                 : collsel_tree_decide3(tree, comm_size, msg_size, z, choice);
    if (path != COLLSEL_TREE_PATH_DESCENT && path != COLLSEL_TREE_PATH_GENERIC)
        return COLLSEL_TREE_EINVAL;
    if (beyond(tree, comm_size, choice))
        return COLLSEL_TREE_OK;
    c[0] = cell_p(tree, (uint32_t)comm_size);
    c[1] = cell_m(tree, msg_size);
    c[2] = tree->n_axes == 3 ? cell_z(tree, z) : 0;
    switch (path) {
    case COLLSEL_TREE_PATH_DESCENT:
        return put_choice(tree, tree->n_axes == 2 ? descend2(tree, c[0], c[1]) : descend(tree, c),
                          choice);
    case COLLSEL_TREE_PATH_GENERIC:
        return put_choice(tree, descend(tree, c), choice);
    default:
        return COLLSEL_TREE_EINVAL;
    }
}

int collsel_tree_internal_has_cell_table(const collsel_tree *tree)
{
    return tree ? tree->has_table : 0;
}

uint32_t collsel_tree_msg_cuts(const collsel_tree *tree, uint64_t *cuts, uint32_t capacity)
{
    uint32_t k, count = tree ? tree->n_cells[1] - 1 : 0;
    for (k = 0; cuts && k < count && k < capacity; k++)
        cuts[k] = rd64(tree->cuts[1] + 8 * (size_t)k);
    return count;
}

collsel_tree_error collsel_tree_method(const collsel_tree *tree, uint32_t index,
                                       collsel_tree_choice *choice)
{
    if (!tree || !choice || index >= tree->n_methods)
        return COLLSEL_TREE_EINVAL;
    return put_choice(tree, index, choice);
}

uint32_t collsel_tree_version(void) { return COLLSEL_TREE_VERSION; }

int collsel_tree_axes(const collsel_tree *tree) { return tree ? tree->n_axes : 0; }
uint32_t collsel_tree_node_count(const collsel_tree *tree) { return tree ? tree->n_nodes : 0; }
uint32_t collsel_tree_method_count(const collsel_tree *tree) { return tree ? tree->n_methods : 0; }
int collsel_tree_format(const collsel_tree *tree) { return tree ? tree->format : 0; }
int collsel_tree_family(const collsel_tree *tree)
{
    return tree ? tree->family : COLLSEL_TREE_FAMILY_UNKNOWN;
}

int collsel_tree_hier(const collsel_tree_choice *choice, int32_t *groups, int32_t *inner,
                      int32_t *outer)
{
    int32_t rest;
    if (!choice || choice->algorithm < COLLSEL_TREE_HIER_BASE + 200
        || choice->algorithm > COLLSEL_TREE_HIER_BASE + COLLSEL_TREE_HIER_MAX_GROUPS * 100 + 99)
        return 0;
    rest = choice->algorithm - COLLSEL_TREE_HIER_BASE;
    if (groups)
        *groups = rest / 100;
    if (inner)
        *inner = rest / 10 % 10;
    if (outer)
        *outer = rest % 10;
    return 1;
}
const char *collsel_tree_collective(const collsel_tree *tree) { return tree ? tree->name : ""; }

int collsel_tree_refused(const collsel_tree *tree, int32_t algorithm, int32_t comm_size)
{
    const struct refusal *r = tree ? tree->refusal : NULL;
    return r && algorithm == r->algorithm
           && (comm_size < r->runs_from || comm_size >= r->runs_below);
}

const char *collsel_tree_strerror(int error)
{
    static const char *const text[COLLSEL_TREE_NERRORS] = {
        "success",
        "invalid argument (NULL pointer or comm_size < 1)",
        "cannot open or read the tree file",
        "out of memory",
        "tree file too large",
        "tree blob truncated (fewer bytes than its header declares)",
        "tree blob has trailing bytes (more than its header declares)",
        "not a collsel tree blob (bad magic)",
        "unsupported tree blob format version",
        "bad tree blob header (axis count, split mode, node width, counts or name)",
        "bad axis record (kind or cell count)",
        "tree blob checksum mismatch (corrupted)",
        "axis cuts are not strictly increasing",
        "bad method record (segment size out of range, or a bad hierarchical method)",
        "bad node (method index out of range, or the node layout is not a valid tree)",
        "query has the wrong number of axes for this tree",
    };
    if (error < 0 || error >= COLLSEL_TREE_NERRORS)
        return "unknown collsel_tree error";
    return text[error];
}
