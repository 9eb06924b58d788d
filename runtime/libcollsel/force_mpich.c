/* MPICH 4.0 / 5.0: MPIR_CVAR_<COLL>_INTRA_ALGORITHM is read by every call of its collective, so a
 * flat method is that variable written right before the call and reset right after (the forcing
 * of the sweep's benchmark in paired mode); no shadow communicator. Compiled to nothing under another
 * MPI. */
#include "lc_mpi.h"

#if defined(MPICH_VERSION)

#include <stdio.h>
#include <string.h>

/* The algorithm names by MPICH id (collsel's, stable) and the variables are the MPI table's
 * (collsel_mpi_mpich_names, collsel_mpi_mpich_cvar): MPICH 4.0.2's names, then the ones 5.0
 * adds. A name the running MPICH lacks (5.0's on 4.0, barrier dissemination on 5.0) is looked up
 * by name at MPI_Init, found missing, and its method passes the call to MPICH's own choice
 * (traced pass=unusable). */
#define MAX_IDS COLLSEL_MPI_MPICH_MAX_IDS

/* The reductions: MPICH's algorithms are not read here for operand order, so every forced
 * method of theirs passes a non-commutative op to MPICH's own choice. */
static const int reduction[COLLSEL_MPI_NCOLL] = {
    [COLLSEL_MPI_REDUCE] = 1, [COLLSEL_MPI_ALLREDUCE] = 1, [COLLSEL_MPI_REDUCE_SCATTER] = 1,
    [COLLSEL_MPI_REDUCE_SCATTER_BLOCK] = 1, [COLLSEL_MPI_SCAN] = 1, [COLLSEL_MPI_EXSCAN] = 1,
};

static collsel_cvar var[COLLSEL_MPI_NCOLL];
static int have[COLLSEL_MPI_NCOLL];
static int64_t value_of[COLLSEL_MPI_NCOLL][MAX_IDS];
static int absent[COLLSEL_MPI_NCOLL][MAX_IDS];   /* the running MPICH has no value of that name */

/* Every method of the tree: an MPICH id without segment size or fan-out whose value, when the
 * variable knows its name, it takes (a name it does not know marks the method absent). */
static int check_methods(enum collsel_mpi_coll coll, const collsel_tree *tree, char *msg,
                         size_t msg_size)
{
    uint32_t k, n = collsel_tree_method_count(tree);
    for (k = 0; k < n; k++) {
        collsel_tree_choice c;
        collsel_tree_method(tree, k, &c);
        if (c.algorithm >= collsel_mpi_mpich_count[coll] || c.segsize || c.faninout) {
            snprintf(msg, msg_size, "the %s tree names method %ld/%ld/%ld, which is no MPICH "
                     "%s algorithm (a tree of Open MPI algorithms?)",
                     collsel_mpi_coll_names[coll], (long)c.algorithm, (long)c.segsize,
                     (long)c.faninout, collsel_mpi_coll_names[coll]);
            return 1;
        }
        if (c.algorithm == 0)
            continue;
        if (collsel_cvar_named_value(&var[coll], collsel_mpi_mpich_names[coll][c.algorithm],
                                     &value_of[coll][c.algorithm]) != 0) {
            absent[coll][c.algorithm] = 1;
            continue;
        }
        if (collsel_cvar_set(&var[coll], value_of[coll][c.algorithm]) != 0) {
            snprintf(msg, msg_size, "cannot set %s=%s through MPI_T", var[coll].name,
                     collsel_mpi_mpich_names[coll][c.algorithm]);
            collsel_cvar_set(&var[coll], var[coll].initial);
            return 1;
        }
        collsel_cvar_set(&var[coll], var[coll].initial);
    }
    return 0;
}

const char *lc_force_refusal(enum collsel_mpi_coll coll)
{
    return collsel_mpi_mpich_names[coll][0] ? NULL : "no-mpich-names";
}

/* MPICH's algorithms that abort rather than fall back off power-of-two communicators (the MPI
 * table's: reduce-scatter's "noncommutative"); reduce_scatter's also needs equal counts
 * ("block-regular"). */
static int is_power_of_two_only(enum collsel_mpi_coll coll, const collsel_tree_choice *c)
{
    return c->algorithm != 0 && c->algorithm == collsel_mpi_mpich_power_of_two_only[coll];
}

int lc_force_usable(enum collsel_mpi_coll coll, const collsel_tree_choice *c, int comm_size)
{
    if (c->algorithm >= 0 && c->algorithm < MAX_IDS && absent[coll][c->algorithm])
        return 0;
    return !is_power_of_two_only(coll, c) || (comm_size & (comm_size - 1)) == 0;
}

unsigned lc_force_needs(enum collsel_mpi_coll coll, const collsel_tree_choice *c)
{
    unsigned needs = reduction[coll] && c->algorithm != 0 ? LC_NEED_COMMUTATIVE : 0;
    if (coll == COLLSEL_MPI_REDUCE_SCATTER && is_power_of_two_only(coll, c))
        needs |= LC_NEED_EQUAL_COUNTS;
    return needs;
}

int lc_force_init(const collsel_treeset *trees, char *msg, size_t msg_size)
{
    int coll;
    for (coll = 0; coll < COLLSEL_MPI_NCOLL; coll++) {
        const char *name = collsel_mpi_mpich_cvar[coll];
        if (!trees->tree[coll] || lc_force_refusal((enum collsel_mpi_coll)coll))
            continue;
        if (collsel_cvar_open(name, &var[coll]) != 0) {
            snprintf(msg, msg_size, "MPICH has no control variable %s", name);
            return 1;
        }
        have[coll] = 1;
        if (check_methods((enum collsel_mpi_coll)coll, trees->tree[coll], msg, msg_size))
            return 1;
    }
    return 0;
}

int lc_force_prepare(enum collsel_mpi_coll coll, MPI_Comm comm, struct lc_method *m)
{
    (void)comm;
    m->cvar_value = value_of[coll][m->choice.algorithm];
    return MPI_SUCCESS;
}

/* A write that took at MPI_Init failing now would leave this rank on another algorithm. */
static void write_or_abort(enum collsel_mpi_coll coll, int64_t value)
{
    if (collsel_cvar_write(&var[coll], value) != 0) {
        fprintf(stderr, "libcollsel: cannot write %s any more; aborting\n", var[coll].name);
        PMPI_Abort(MPI_COMM_WORLD, 1);
    }
}

void lc_force_enter(enum collsel_mpi_coll coll, const struct lc_method *m)
{
    write_or_abort(coll, m->cvar_value);
}

void lc_force_leave(enum collsel_mpi_coll coll, const struct lc_method *m)
{
    (void)m;
    write_or_abort(coll, var[coll].initial);
}

void lc_force_finalize(void)
{
    int coll;
    for (coll = 0; coll < COLLSEL_MPI_NCOLL; coll++)
        if (have[coll]) {
            collsel_cvar_close(&var[coll]);
            have[coll] = 0;
        }
}

#else
typedef int lc_force_mpich_unused;   /* ISO C: no empty translation unit */
#endif
