/* COLLSEL_TREES: the blob files it names, loaded and validated once (collsel_tree_load_buffer
 * over a copy this module owns, so the blob's CRC is at hand for the ranks to compare). */
#define _POSIX_C_SOURCE 200809L
#include "lc_core.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define MAX_PATH 4096

struct file_list {
    char *paths[LC_MAX_TREE_FILES];
    int n;
};

static void list_free(struct file_list *l)
{
    int i;
    for (i = 0; i < l->n; i++)
        free(l->paths[i]);
    l->n = 0;
}

static int list_add(struct file_list *l, const char *dir, const char *name, char *msg,
                    size_t msg_size)
{
    size_t n = (dir ? strlen(dir) + 1 : 0) + strlen(name) + 1;
    if (l->n == LC_MAX_TREE_FILES) {
        snprintf(msg, msg_size, "more than %d tree files", LC_MAX_TREE_FILES);
        return 1;
    }
    if (n > MAX_PATH || !(l->paths[l->n] = malloc(n))) {
        snprintf(msg, msg_size, "%s: path too long or out of memory", name);
        return 1;
    }
    snprintf(l->paths[l->n++], n, "%s%s%s", dir ? dir : "", dir ? "/" : "", name);
    return 0;
}

static int by_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static int has_bin_suffix(const char *name)
{
    size_t n = strlen(name);
    return n > 4 && strcmp(name + n - 4, ".bin") == 0;
}

/* The files of spec: a directory's *.bin (sorted), or the ':'-separated list. */
static int list_files(const char *spec, struct file_list *l, char *msg, size_t msg_size)
{
    struct stat st;
    if (stat(spec, &st) == 0 && S_ISDIR(st.st_mode)) {
        DIR *d = opendir(spec);
        struct dirent *e;
        if (!d) {
            snprintf(msg, msg_size, "%s: %s", spec, strerror(errno));
            return 1;
        }
        while ((e = readdir(d)) != NULL)
            if (has_bin_suffix(e->d_name) && list_add(l, spec, e->d_name, msg, msg_size)) {
                closedir(d);
                return 1;
            }
        closedir(d);
        if (l->n == 0) {
            snprintf(msg, msg_size, "%s: no *.bin tree file in this directory", spec);
            return 1;
        }
        qsort(l->paths, (size_t)l->n, sizeof l->paths[0], by_name);
        return 0;
    }
    {
        const char *p = spec;
        while (*p) {
            const char *end = strchr(p, ':');
            size_t n = end ? (size_t)(end - p) : strlen(p);
            char name[MAX_PATH];
            if (n > 0) {
                if (n >= sizeof name) {
                    snprintf(msg, msg_size, "a path in COLLSEL_TREES is too long");
                    return 1;
                }
                memcpy(name, p, n);
                name[n] = '\0';
                if (list_add(l, NULL, name, msg, msg_size))
                    return 1;
            }
            p += n + (end != NULL);
        }
    }
    if (l->n == 0) {
        snprintf(msg, msg_size, "COLLSEL_TREES names no file");
        return 1;
    }
    return 0;
}

/* The whole file into a new buffer; 0 or a collsel_tree_error. */
static collsel_tree_error read_file(const char *path, unsigned char **data, size_t *size)
{
    FILE *f = fopen(path, "rb");
    size_t used = 0, cap = 4096;
    unsigned char *buf = NULL;
    *data = NULL;
    if (!f)
        return COLLSEL_TREE_EIO;
    for (;;) {
        unsigned char *grown;
        size_t got;
        if (used == cap || !buf) {
            if (buf)
                cap *= 2;
            if (cap > (size_t)COLLSEL_TREE_MAX_FILE_SIZE + 1)
                cap = (size_t)COLLSEL_TREE_MAX_FILE_SIZE + 1;
            if (!(grown = realloc(buf, cap))) {
                free(buf);
                fclose(f);
                return COLLSEL_TREE_ENOMEM;
            }
            buf = grown;
        }
        got = fread(buf + used, 1, cap - used, f);
        used += got;
        if (used > (size_t)COLLSEL_TREE_MAX_FILE_SIZE) {
            free(buf);
            fclose(f);
            return COLLSEL_TREE_ETOOBIG;
        }
        if (got == 0)
            break;
    }
    if (ferror(f)) {
        free(buf);
        fclose(f);
        return COLLSEL_TREE_EIO;
    }
    fclose(f);
    *data = buf;
    *size = used;
    return COLLSEL_TREE_OK;
}

static int collective_index(const collsel_tree *tree)
{
    int c;
    for (c = 0; c < LC_NCOLL; c++)
        if (strcmp(collsel_tree_collective(tree), lc_coll_blob_names[c]) == 0)
            return c;
    return -1;
}

/* One file: loaded into slot `collective` of trees, or skipped (another collective). */
static int load_one(const char *path, struct lc_trees *trees, char *msg, size_t msg_size)
{
    unsigned char *data;
    size_t size = 0;
    collsel_tree_storage storage;   /* first load: which collective */
    collsel_tree *tree;
    int c;
    collsel_tree_error err = read_file(path, &data, &size);
    if (!err)
        err = collsel_tree_load_buffer(data, size, &storage, &tree);
    if (err) {
        free(data);
        snprintf(msg, msg_size, "%s: %s", path, collsel_tree_strerror(err));
        return 1;
    }
    c = collective_index(tree);
    if (c < 0) {
        free(data);
        return 0;
    }
    if (trees->tree[c]) {
        free(data);
        snprintf(msg, msg_size, "%s: a second %s tree", path, lc_coll_names[c]);
        return 1;
    }
    /* again into its slot's storage: a handle lives in its storage, which cannot move */
    err = collsel_tree_load_buffer(data, size, &trees->storage[c], &tree);
    if (err) {
        free(data);
        snprintf(msg, msg_size, "%s: %s", path, collsel_tree_strerror(err));
        return 1;
    }
    trees->tree[c] = tree;
    trees->blob[c] = data;
    trees->crc[c] = (uint32_t)data[size - 4] | (uint32_t)data[size - 3] << 8
                    | (uint32_t)data[size - 2] << 16 | (uint32_t)data[size - 1] << 24;
    return 0;
}

int lc_trees_load(const char *spec, struct lc_trees *trees, char *msg, size_t msg_size)
{
    struct file_list l;
    int i, failed;
    memset(trees, 0, sizeof *trees);
    l.n = 0;
    failed = list_files(spec, &l, msg, msg_size);
    for (i = 0; i < l.n && !failed; i++)
        failed = load_one(l.paths[i], trees, msg, msg_size);
    list_free(&l);
    for (i = 0; i < LC_NCOLL && !failed && !trees->tree[i]; i++)
        ;
    if (!failed && i == LC_NCOLL) {
        snprintf(msg, msg_size, "%s: no tree of a collective libcollsel serves", spec);
        failed = 1;
    }
    if (failed)
        lc_trees_free(trees);
    return failed;
}

void lc_trees_free(struct lc_trees *trees)
{
    int c;
    for (c = 0; c < LC_NCOLL; c++) {
        free(trees->blob[c]);
        trees->blob[c] = NULL;
        trees->tree[c] = NULL;
    }
}
