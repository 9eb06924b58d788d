/* coll/collsel: the blobs coll_collsel_trees names, read and validated once at MPI_Init: one tree
 * per collective, 2 axes (P, m), Open MPI algorithm ids this Open MPI has, flat methods. */
#include "coll_collsel.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define MAX_PATH 4096

static int collective_of(const collsel_tree *tree)
{
    const char *name = collsel_tree_collective(tree);
    int c;
    /* the blob header holds 16 characters (docs/formats/blob.md, core/algorithms.BLOB_NAMES) */
    if (0 == strcmp(name, "reduce_scat_blk"))
        return CS_REDUCE_SCATTER_BLOCK;
    for (c = 0; c < CS_NCOLL; c++)
        if (0 == strcmp(name, mca_coll_collsel_names[c]))
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
                     "does not run (use libcollsel for it)", path, mca_coll_collsel_names[coll]);
            return 1;
        }
        if (c.algorithm < 0 || c.algorithm > mca_coll_collsel_max_algorithm[coll]) {
            snprintf(msg, msg_size, "%s: the %s tree names algorithm %ld, which is no coll/tuned "
                     "%s algorithm of Open MPI 4.1 (1..%ld)", path, mca_coll_collsel_names[coll],
                     (long)c.algorithm, mca_coll_collsel_names[coll],
                     (long)mca_coll_collsel_max_algorithm[coll]);
            return 1;
        }
    }
    return 0;
}

static int load_one(const char *path, collsel_tree *trees[CS_NCOLL], char *msg, size_t msg_size)
{
    collsel_tree *tree;
    int coll;
    collsel_tree_error err = collsel_tree_load_file(path, &tree);
    if (err) {
        snprintf(msg, msg_size, "%s: %s", path, collsel_tree_strerror(err));
        return 1;
    }
    coll = collective_of(tree);
    if (coll < 0)
        snprintf(msg, msg_size, "%s: a tree of '%s', which is none of the 14 collectives", path,
                 collsel_tree_collective(tree));
    else if (collsel_tree_family(tree) == COLLSEL_TREE_FAMILY_MPICH)
        snprintf(msg, msg_size, "%s: a tree of MPICH algorithms (build it from an Open MPI table)",
                 path);
    else if (collsel_tree_axes(tree) != 2)
        snprintf(msg, msg_size, "%s: a 3-axis tree; coll/collsel decides on (P, m) only", path);
    else if (trees[coll])
        snprintf(msg, msg_size, "%s: a second %s tree", path, mca_coll_collsel_names[coll]);
    else if (!check_methods(path, coll, tree, msg, msg_size)) {
        trees[coll] = tree;
        return 0;
    }
    collsel_tree_free(tree);
    return 1;
}

static int has_bin_suffix(const char *name)
{
    size_t n = strlen(name);
    return n > 4 && 0 == strcmp(name + n - 4, ".bin");
}

/* A directory: its *.bin files (any order: one tree per collective, a duplicate is refused). */
static int load_directory(const char *dir, collsel_tree *trees[CS_NCOLL], char *msg,
                          size_t msg_size)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    int failed = 0, found = 0;
    if (NULL == d) {
        snprintf(msg, msg_size, "%s: %s", dir, strerror(errno));
        return 1;
    }
    while (!failed && NULL != (e = readdir(d)))
        if (has_bin_suffix(e->d_name)) {
            char path[MAX_PATH];
            found = 1;
            if (snprintf(path, sizeof path, "%s/%s", dir, e->d_name) >= (int)sizeof path) {
                snprintf(msg, msg_size, "%s: a path in it is too long", dir);
                failed = 1;
            } else
                failed = load_one(path, trees, msg, msg_size);
        }
    closedir(d);
    if (!failed && !found) {
        snprintf(msg, msg_size, "%s: no *.bin tree file in this directory", dir);
        failed = 1;
    }
    return failed;
}

int mca_coll_collsel_trees_load(const char *spec, collsel_tree *trees[CS_NCOLL], char *msg,
                                size_t msg_size)
{
    struct stat st;
    const char *p = spec;
    int failed = 0, any = 0;
    memset(trees, 0, CS_NCOLL * sizeof trees[0]);
    if (0 == stat(spec, &st) && S_ISDIR(st.st_mode))
        failed = load_directory(spec, trees, msg, msg_size);
    else
        while (!failed && *p) {
            const char *end = strchr(p, ':');
            size_t n = end ? (size_t)(end - p) : strlen(p);
            char path[MAX_PATH];
            if (n >= sizeof path) {
                snprintf(msg, msg_size, "a path in coll_collsel_trees is too long");
                failed = 1;
            } else if (n > 0) {
                memcpy(path, p, n);
                path[n] = '\0';
                failed = load_one(path, trees, msg, msg_size);
            }
            p += n + (NULL != end);
        }
    for (int c = 0; c < CS_NCOLL; c++)
        any |= NULL != trees[c];
    if (!failed && !any) {
        snprintf(msg, msg_size, "coll_collsel_trees '%s' names no tree", spec);
        failed = 1;
    }
    if (failed)
        mca_coll_collsel_trees_free(trees);
    return failed;
}

void mca_coll_collsel_trees_free(collsel_tree *trees[CS_NCOLL])
{
    for (int c = 0; c < CS_NCOLL; c++) {
        collsel_tree_free(trees[c]);
        trees[c] = NULL;
    }
}
