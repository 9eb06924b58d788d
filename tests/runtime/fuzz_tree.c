/* libFuzzer target: load any bytes as a tree blob, raw and with a correct CRC-32 appended
 * (so mutations get past the checksum to the structural checks), then query every loaded tree
 * over and beyond its range by every path (public functions, the specialised descent, the
 * generic descent: collsel_tree_internal.h), which must give the same, in-range decision.
 * `make fuzz` builds it with clang -fsanitize=fuzzer,address,undefined. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "collsel_tree.h"
#include "collsel_tree_internal.h"

static uint32_t crc32(const uint8_t *p, size_t n)
{
    uint32_t crc = 0xFFFFFFFFu;
    size_t i;
    int k;
    for (i = 0; i < n; i++) {
        crc ^= p[i];
        for (k = 0; k < 8; k++)
            crc = (crc >> 1) ^ (0xEDB88320u & (0u - (crc & 1u)));
    }
    return ~crc;
}

/* One point by every path: aborts on an error, an out-of-range field or a disagreement. */
static void query_point(const collsel_tree *t, int32_t p, uint64_t m, int64_t z)
{
    static const enum collsel_tree_path paths[] = {COLLSEL_TREE_PATH_PUBLIC,
                                                   COLLSEL_TREE_PATH_DESCENT,
                                                   COLLSEL_TREE_PATH_GENERIC};
    collsel_tree_choice c, first = {0, 0, 0};
    size_t i;
    for (i = 0; i < sizeof paths / sizeof *paths; i++) {
        int hier;
        if (collsel_tree_internal_decide(t, paths[i], p, m, z, &c) != COLLSEL_TREE_OK)
            abort();
        /* a flat algorithm is a u16; a hierarchical one (format 2) HIER_BASE + G*100 + i*10 + o */
        hier = c.algorithm >= COLLSEL_TREE_HIER_BASE
               && c.algorithm <= COLLSEL_TREE_HIER_BASE + COLLSEL_TREE_HIER_MAX_GROUPS * 100 + 99;
        if (c.algorithm < 0 || (c.algorithm > 65535 && !hier) || c.segsize < 0
            || c.faninout < 0 || c.faninout > 65535)
            abort();
        if (i == 0)
            first = c;
        else if (c.algorithm != first.algorithm || c.segsize != first.segsize
                 || c.faninout != first.faninout)
            abort();
    }
    /* the public function of the other axis count refuses */
    if ((collsel_tree_axes(t) == 3 ? collsel_tree_decide(t, p, m, &c)
                                   : collsel_tree_decide3(t, p, m, z, &c)) != COLLSEL_TREE_EDIMS)
        abort();
}

static void query_all(const collsel_tree *t, const uint8_t *data, size_t size)
{
    static const int32_t ps[] = {1, 2, 3, 7, 16, 100, 4096, INT32_MAX};
    static const uint64_t ms[] = {0, 1, 100, 65536, 1ull << 22, 1ull << 40, UINT64_MAX};
    static const int64_t zs[] = {INT64_MIN, -1, 0, 1, 3, 1000, INT64_MAX};
    size_t i, j, k;
    for (i = 0; i < sizeof ps / sizeof *ps; i++)
        for (j = 0; j < sizeof ms / sizeof *ms; j++)
            for (k = 0; k < sizeof zs / sizeof *zs; k++)
                query_point(t, ps[i], ms[j], zs[k]);
    /* points taken from the input bytes too */
    for (i = 0; i + 20 <= size && i < 640; i += 20) {
        uint32_t p;
        uint64_t m;
        int64_t z;
        memcpy(&p, data + i, 4);
        memcpy(&m, data + i + 4, 8);
        memcpy(&z, data + i + 12, 8);
        query_point(t, (int32_t)(p % (uint32_t)INT32_MAX + 1), m, z);   /* 1 .. INT32_MAX */
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    collsel_tree_storage storage;
    collsel_tree *t;
    uint8_t *copy;
    uint32_t crc;
    if (collsel_tree_load_buffer(data, size, &storage, &t) == COLLSEL_TREE_OK)
        query_all(t, data, size);
    if (size < 4)
        return 0;
    copy = (uint8_t *)malloc(size);
    if (!copy)
        return 0;
    memcpy(copy, data, size);
    crc = crc32(copy, size - 4);
    copy[size - 4] = (uint8_t)crc;
    copy[size - 3] = (uint8_t)(crc >> 8);
    copy[size - 2] = (uint8_t)(crc >> 16);
    copy[size - 1] = (uint8_t)(crc >> 24);
    if (collsel_tree_load_buffer(copy, size, &storage, &t) == COLLSEL_TREE_OK)
        query_all(t, copy, size);
    free(copy);
    return 0;
}
