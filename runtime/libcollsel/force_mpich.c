/* MPICH 4.0 / 5.0: MPIR_CVAR_<COLL>_INTRA_ALGORITHM is read by every call of its collective, so a
 * flat method is that variable written right before the call and reset right after (the forcing
 * of the sweep's benchmark in paired mode); no shadow communicator. Compiled to nothing under another
 * MPI. */
#include "lc_mpi.h"

#if defined(MPICH_VERSION)

#include <ctype.h>
#include <stdio.h>
#include <string.h>

/* MPICH algorithm ids (collsel's, stable; generator/collsel/core/algorithms.py
 * MPICH_ALGORITHMS, which tests/integration/test_libcollsel.py compares with this table) ->
 * the variable's value names: MPICH 4.0.2's, then the names 5.0 adds. A name the running MPICH
 * lacks (5.0's on 4.0, barrier dissemination on 5.0) is looked up by name at MPI_Init, found
 * missing, and its method passes the call to MPICH's own choice (traced pass=unusable). */
#define MAX_IDS 12
static const char *const names[LC_NCOLL][MAX_IDS] = {
    [LC_BCAST] = /* bcast */ {"auto", "binomial", "nb", "smp",
                              "scatter_recursive_doubling_allgather", "scatter_ring_allgather",
                              "pipelined_tree", "tree", NULL},
    [LC_REDUCE] = /* reduce */ {"auto", "binomial", "nb", "smp", "reduce_scatter_gather", NULL},
    [LC_ALLREDUCE] = /* allreduce */ {"auto", "nb", "smp", "recursive_doubling",
                                      "reduce_scatter_allgather", "recursive_multiplying", "tree",
                                      "recexch", "ring", "k_reduce_scatter_allgather", "ccl",
                                      NULL},
    [LC_ALLGATHER] = /* allgather */ {"auto", "brucks", "nb", "recursive_doubling", "ring",
                                      "k_brucks", "recexch_doubling", "recexch_halving", NULL},
    [LC_ALLGATHERV] = /* allgatherv */ {"auto", "brucks", "nb", "recursive_doubling", "ring",
                                        NULL},
    [LC_ALLTOALL] = /* alltoall */ {"auto", "brucks", "nb", "pairwise",
                                    "pairwise_sendrecv_replace", "scattered", "k_brucks", NULL},
    [LC_ALLTOALLV] = /* alltoallv */ {"auto", "nb", "pairwise_sendrecv_replace", "scattered",
                                      NULL},
    [LC_BARRIER] = /* barrier */ {"auto", "nb", "smp", "dissemination", "k_dissemination",
                                  "recexch", NULL},
    [LC_EXSCAN] = /* exscan */ {"auto", "nb", "recursive_doubling", NULL},
    [LC_GATHER] = /* gather */ {"auto", "binomial", "nb", NULL},
    [LC_REDUCE_SCATTER] = /* reduce_scatter */ {"auto", "nb", "noncommutative", "pairwise",
                                                "recursive_doubling", "recursive_halving", NULL},
    [LC_REDUCE_SCATTER_BLOCK] = /* reduce_scatter_block */ {"auto", "noncommutative",
                                                            "recursive_doubling", "pairwise",
                                                            "recursive_halving", "nb", NULL},
    [LC_SCAN] = /* scan */ {"auto", "nb", "smp", "recursive_doubling", NULL},
    [LC_SCATTER] = /* scatter */ {"auto", "binomial", "nb", NULL},
};

/* The reductions: MPICH's algorithms are not read here for operand order, so every forced
 * method of theirs passes a non-commutative op to MPICH's own choice. */
static const int reduction[LC_NCOLL] = {
    [LC_REDUCE] = 1, [LC_ALLREDUCE] = 1, [LC_REDUCE_SCATTER] = 1,
    [LC_REDUCE_SCATTER_BLOCK] = 1, [LC_SCAN] = 1, [LC_EXSCAN] = 1,
};

static collsel_cvar var[LC_NCOLL];
static int have[LC_NCOLL];
static int64_t value_of[LC_NCOLL][MAX_IDS];
static int absent[LC_NCOLL][MAX_IDS];   /* the running MPICH has no value of that name */

static int id_count(enum lc_coll coll)
{
    int n = 0;
    while (n < MAX_IDS && names[coll][n])
        n++;
    return n;
}

/* Every method of the tree: an MPICH id without segment size or fan-out whose value, when the
 * variable knows its name, it takes (a name it does not know marks the method absent). */
static int check_methods(enum lc_coll coll, const collsel_tree *tree, char *msg,
                         size_t msg_size)
{
    uint32_t k, n = collsel_tree_method_count(tree);
    for (k = 0; k < n; k++) {
        collsel_tree_choice c;
        collsel_tree_method(tree, k, &c);
        if (c.algorithm >= id_count(coll) || c.segsize || c.faninout) {
            snprintf(msg, msg_size, "the %s tree names method %ld/%ld/%ld, which is no MPICH "
                     "%s algorithm (a tree of Open MPI algorithms?)", lc_coll_names[coll],
                     (long)c.algorithm, (long)c.segsize, (long)c.faninout,
                     lc_coll_names[coll]);
            return 1;
        }
        if (c.algorithm == 0)
            continue;
        if (collsel_cvar_named_value(&var[coll], names[coll][c.algorithm],
                                &value_of[coll][c.algorithm]) != 0) {
            absent[coll][c.algorithm] = 1;
            continue;
        }
        if (collsel_cvar_set(&var[coll], value_of[coll][c.algorithm]) != 0) {
            snprintf(msg, msg_size, "cannot set %s=%s through MPI_T", var[coll].name,
                     names[coll][c.algorithm]);
            collsel_cvar_set(&var[coll], var[coll].initial);
            return 1;
        }
        collsel_cvar_set(&var[coll], var[coll].initial);
    }
    return 0;
}

const char *lc_force_refusal(enum lc_coll coll)
{
    return names[coll][0] ? NULL : "no-mpich-names";
}

/* MPICH 4.0.2 asserts (aborts) rather than falls back in its "noncommutative" reduce-scatter
 * algorithms (reduce_scatter_intra_noncommutative.c:55 "pof2 == comm_size"): power-of-two
 * communicators only, and for reduce_scatter equal counts ("block-regular"). */
static int is_noncommutative_algorithm(enum lc_coll coll, const collsel_tree_choice *c)
{
    return (coll == LC_REDUCE_SCATTER && c->algorithm == 2)
           || (coll == LC_REDUCE_SCATTER_BLOCK && c->algorithm == 1);
}

int lc_force_usable(enum lc_coll coll, const collsel_tree_choice *c, int comm_size)
{
    if (c->algorithm >= 0 && c->algorithm < MAX_IDS && absent[coll][c->algorithm])
        return 0;
    return !is_noncommutative_algorithm(coll, c) || (comm_size & (comm_size - 1)) == 0;
}

unsigned lc_force_needs(enum lc_coll coll, const collsel_tree_choice *c)
{
    unsigned needs = reduction[coll] && c->algorithm != 0 ? LC_NEED_COMMUTATIVE : 0;
    if (coll == LC_REDUCE_SCATTER && is_noncommutative_algorithm(coll, c))
        needs |= LC_NEED_EQUAL_COUNTS;
    return needs;
}

int lc_force_init(const collsel_treeset *trees, char *msg, size_t msg_size)
{
    int coll;
    for (coll = 0; coll < LC_NCOLL; coll++) {
        char name[80];
        size_t i;
        if (!trees->tree[coll] || lc_force_refusal((enum lc_coll)coll))
            continue;
        /* MPIR_CVAR_<COLL>_INTRA_ALGORITHM, the collective's name in capitals */
        snprintf(name, sizeof name, "MPIR_CVAR_%s_INTRA_ALGORITHM", lc_coll_names[coll]);
        for (i = sizeof "MPIR_CVAR_" - 1; name[i]; i++)
            name[i] = (char)toupper((unsigned char)name[i]);
        if (collsel_cvar_open(name, &var[coll]) != 0) {
            snprintf(msg, msg_size, "MPICH has no control variable %s", name);
            return 1;
        }
        have[coll] = 1;
        if (check_methods((enum lc_coll)coll, trees->tree[coll], msg, msg_size))
            return 1;
    }
    return 0;
}

int lc_force_prepare(enum lc_coll coll, MPI_Comm comm, struct lc_method *m)
{
    (void)comm;
    m->cvar_value = value_of[coll][m->choice.algorithm];
    return MPI_SUCCESS;
}

/* A write that took at MPI_Init failing now would leave this rank on another algorithm. */
static void write_or_abort(enum lc_coll coll, int64_t value)
{
    if (collsel_cvar_write(&var[coll], value) != 0) {
        fprintf(stderr, "libcollsel: cannot write %s any more; aborting\n", var[coll].name);
        PMPI_Abort(MPI_COMM_WORLD, 1);
    }
}

void lc_force_enter(enum lc_coll coll, const struct lc_method *m)
{
    write_or_abort(coll, m->cvar_value);
}

void lc_force_leave(enum lc_coll coll, const struct lc_method *m)
{
    (void)m;
    write_or_abort(coll, var[coll].initial);
}

void lc_force_finalize(void)
{
    int coll;
    for (coll = 0; coll < LC_NCOLL; coll++)
        if (have[coll]) {
            collsel_cvar_close(&var[coll]);
            have[coll] = 0;
        }
}

#else
typedef int lc_force_mpich_unused;   /* ISO C: no empty translation unit */
#endif
