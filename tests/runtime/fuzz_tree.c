/* libFuzzer target: load any bytes as a tree blob, raw and with a correct CRC-32 appended
 * (so mutations get past the checksum to the structural checks), then query every loaded tree
 * over and beyond its range. `make fuzz` builds it with clang -fsanitize=fuzzer,address,undefined. */
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "collsel_tree.h"

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

static void query_all(const collsel_tree *t, const uint8_t *data, size_t size)
{
    static const int ps[] = {1, 2, 3, 7, 16, 100, 4096, INT_MAX};
    static const unsigned long long ms[] = {0, 1, 100, 65536, 1ull << 22, 1ull << 40, ~0ull};
    static const long zs[] = {LONG_MIN, -1, 0, 1, 3, 1000, LONG_MAX};
    collsel_tree_choice c;
    size_t i, j, k;
    for (i = 0; i < sizeof ps / sizeof *ps; i++)
        for (j = 0; j < sizeof ms / sizeof *ms; j++)
            for (k = 0; k < sizeof zs / sizeof *zs; k++) {
                int err = collsel_tree_axes(t) == 3
                              ? collsel_tree_query3(t, ps[i], (size_t)ms[j], zs[k], &c)
                              : collsel_tree_query(t, ps[i], (size_t)ms[j], &c);
                if (err || c.algorithm < 0 || c.segsize < 0 || c.faninout < 0)
                    abort();
            }
    /* points taken from the input bytes too */
    for (i = 0; i + 16 <= size && i < 512; i += 16) {
        uint32_t p;
        uint64_t m;
        int32_t z;
        memcpy(&p, data + i, 4);
        memcpy(&m, data + i + 4, 8);
        memcpy(&z, data + i + 12, 4);
        p = p % (uint32_t)INT_MAX + 1;   /* 1 .. INT_MAX */
        if (collsel_tree_query3(t, (int)p, (size_t)m, z, &c) == 0
            || collsel_tree_query(t, (int)p, (size_t)m, &c) == 0)
            if (c.algorithm < 0 || c.segsize < 0)
                abort();
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
