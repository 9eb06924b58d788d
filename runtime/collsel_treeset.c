/* collsel_treeset: the blob files one specification names, loaded once (collsel_treeset.h). */
#define _POSIX_C_SOURCE 200809L
#include "collsel_treeset.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define MAX_PATH 4096

struct file_list {
    char *paths[COLLSEL_TREESET_MAX_FILES];
    int32_t n;
};

static void list_free(struct file_list *l)
{
    int32_t i;
    for (i = 0; i < l->n; i++)
        free(l->paths[i]);
    l->n = 0;
}

static int list_add(struct file_list *l, const char *dir, const char *name, char *msg,
                    size_t msg_size)
{
    size_t n = (dir ? strlen(dir) + 1 : 0) + strlen(name) + 1;
    if (l->n == COLLSEL_TREESET_MAX_FILES) {
        snprintf(msg, msg_size, "more than %d tree files", COLLSEL_TREESET_MAX_FILES);
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

/* The files of spec: a directory's *.bin (sorted, so a duplicate is reported the same way on
 * every file system), or the ':'-separated list. */
static int list_files(const char *spec, const char *spec_name, struct file_list *l, char *msg,
                      size_t msg_size)
{
    struct stat st;
    const char *p = spec;
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
    while (*p) {
        const char *end = strchr(p, ':');
        size_t n = end ? (size_t)(end - p) : strlen(p);
        char name[MAX_PATH];
        if (n > 0) {
            if (n >= sizeof name) {
                snprintf(msg, msg_size, "a path in %s is too long", spec_name);
                return 1;
            }
            memcpy(name, p, n);
            name[n] = '\0';
            if (list_add(l, NULL, name, msg, msg_size))
                return 1;
        }
        p += n + (end != NULL);
    }
    if (l->n == 0) {
        snprintf(msg, msg_size, "%s names no file", spec_name);
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

/* One file: loaded into the slot the rule names, or skipped. */
static int load_one(const char *path, const collsel_treeset_rule *rule, collsel_treeset *set,
                    char *msg, size_t msg_size)
{
    unsigned char *data;
    size_t size = 0;
    collsel_tree_storage storage;   /* first load: which slot */
    collsel_tree *tree;
    int32_t slot;
    collsel_tree_error err = read_file(path, &data, &size);
    if (!err)
        err = collsel_tree_load_buffer(data, size, &storage, &tree);
    if (err) {
        free(data);
        snprintf(msg, msg_size, "%s: %s", path, collsel_tree_strerror(err));
        return 1;
    }
    slot = rule->slot_of(tree, path, msg, msg_size);
    if (slot == COLLSEL_TREESET_SKIP) {
        free(data);
        return 0;
    }
    if (slot < 0 || slot >= COLLSEL_TREESET_SLOTS) {
        free(data);
        return 1;
    }
    if (set->tree[slot]) {
        free(data);
        snprintf(msg, msg_size, "%s: a second %s tree", path, rule->slot_names[slot]);
        return 1;
    }
    /* again into its slot's storage: a handle lives in its storage, which cannot move */
    err = collsel_tree_load_buffer(data, size, &set->storage[slot], &tree);
    if (err) {
        free(data);
        snprintf(msg, msg_size, "%s: %s", path, collsel_tree_strerror(err));
        return 1;
    }
    set->tree[slot] = tree;
    set->blob[slot] = data;
    set->crc[slot] = (uint32_t)data[size - 4] | (uint32_t)data[size - 3] << 8
                     | (uint32_t)data[size - 2] << 16 | (uint32_t)data[size - 1] << 24;
    return 0;
}

int collsel_treeset_load(const char *spec, const collsel_treeset_rule *rule,
                         collsel_treeset *set, char *msg, size_t msg_size)
{
    struct file_list l;
    int32_t i;
    int failed;
    memset(set, 0, sizeof *set);
    l.n = 0;
    failed = list_files(spec, rule->spec_name, &l, msg, msg_size);
    for (i = 0; i < l.n && !failed; i++)
        failed = load_one(l.paths[i], rule, set, msg, msg_size);
    list_free(&l);
    for (i = 0; i < COLLSEL_TREESET_SLOTS && !failed && !set->tree[i]; i++)
        ;
    if (!failed && i == COLLSEL_TREESET_SLOTS) {
        snprintf(msg, msg_size, "%s: no tree of a collective %s serves", spec, rule->user);
        failed = 1;
    }
    if (failed)
        collsel_treeset_free(set);
    return failed;
}

void collsel_treeset_free(collsel_treeset *set)
{
    int32_t c;
    for (c = 0; c < COLLSEL_TREESET_SLOTS; c++) {
        free(set->blob[c]);
        set->blob[c] = NULL;
        set->tree[c] = NULL;
    }
}
