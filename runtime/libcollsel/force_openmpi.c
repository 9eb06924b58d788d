/* Open MPI 4.1 and 5.0: a flat method is a shadow communicator made while coll/tuned's control
 * variables name the method (coll/tuned copies them into a communicator when it is created; the
 * forcing of the sweep's benchmark in paired mode, bench/forcing.c). Compiled to nothing under
 * another MPI. */
#include "lc_mpi.h"

#if defined(OPEN_MPI)

#include <stdio.h>
#include <string.h>

/* What a method writes, as the benchmark does (bench/forcing.c): the algorithm, its segment size
 * and F into the fan variables (the MPI table's collsel_mpi_ompi_fan_vars: alltoall's
 * max_requests, the others' chain_fanout and tree_fanout). Only the algorithm variable exists
 * for every collective (alltoallv, barrier, scan, exscan have no other). */
enum { V_ALGORITHM, V_SEGSIZE, V_FAN_A, V_FAN_B, N_VARS };
typedef char fan_vars_fit[COLLSEL_MPI_OMPI_FAN_VARS - 1 <= N_VARS - V_FAN_A ? 1 : -1];
static collsel_cvar vars[COLLSEL_MPI_NCOLL][N_VARS];
static int have[COLLSEL_MPI_NCOLL][N_VARS];
static const char *refusal[COLLSEL_MPI_NCOLL];
/* What the Open MPI release of mpi.h refuses (the MPI table's per-release data), where a forced
 * method would fail the call: such a decision defers instead. */
static const struct collsel_mpi_refusal *refuses;

static const char *suffix(enum collsel_mpi_coll coll, int var)
{
    if (var == V_ALGORITHM)
        return "";
    if (var == V_SEGSIZE)
        return "_segmentsize";
    return collsel_mpi_ompi_fan_vars[coll][var - V_FAN_A];
}

int lc_force_usable(enum collsel_mpi_coll coll, const collsel_tree_choice *c, int comm_size)
{
    return !refuses || !collsel_mpi_refused(&refuses[coll], c->algorithm, comm_size);
}

const char *lc_force_refusal(enum collsel_mpi_coll coll)
{
    return refusal[coll];
}

unsigned lc_force_needs(enum collsel_mpi_coll coll, const collsel_tree_choice *c)
{
    int i;
    if (collsel_tree_hier(c, NULL, NULL, NULL))
        return LC_NEED_COMMUTATIVE;   /* hier.c reduces inside the groups, then among leaders */
    /* the algorithms whose coll/base function needs one (the MPI table, 0-terminated) */
    for (i = 0; collsel_mpi_ompi_commutative_only[coll][i]; i++)
        if (collsel_mpi_ompi_commutative_only[coll][i] == c->algorithm)
            return LC_NEED_COMMUTATIVE;
    return 0;
}

#define MAX_ALGORITHMS 64

/* Writes the method's values (fan-out 0: the launch's value) and reads them back: 0 on success,
 * else the index of the variable that did not take. */
static int apply(enum collsel_mpi_coll coll, const collsel_tree_choice *c)
{
    const collsel_cvar *v = vars[coll];
    int64_t want[N_VARS];
    int i;
    want[V_ALGORITHM] = c->algorithm;
    want[V_SEGSIZE] = c->segsize;
    want[V_FAN_A] = c->faninout ? c->faninout : v[V_FAN_A].initial;
    want[V_FAN_B] = c->faninout ? c->faninout : v[V_FAN_B].initial;
    for (i = 0; i < N_VARS; i++)
        if (have[coll][i] && collsel_cvar_set(&v[i], want[i]) != 0)
            return i + 1;
    return 0;
}

/* The launch's own values back, so communicators the program makes are not forced. */
static void reset(enum collsel_mpi_coll coll)
{
    int i;
    for (i = 0; i < N_VARS; i++)
        if (have[coll][i])
            collsel_cvar_set(&vars[coll][i], vars[coll][i].initial);
}

/* 0 with the variables this Open MPI has; refusal[coll] set when the algorithm's cannot be
 * written (4.1 registers allgatherv's with scope constant, coll_tuned_allgatherv_decision.c:84) */
static int open_vars(enum collsel_mpi_coll coll, char *msg, size_t msg_size)
{
    int i;
    for (i = 0; i < N_VARS; i++) {
        char name[80];
        have[coll][i] = 0;
        if (!suffix(coll, i))
            continue;
        snprintf(name, sizeof name, "%s%s", collsel_mpi_ompi_cvar[coll], suffix(coll, i));
        have[coll][i] = collsel_cvar_open(name, &vars[coll][i]) == 0;
        if (have[coll][i] && i == V_ALGORITHM && collsel_cvar_fixed(&vars[coll][i]))
            refusal[coll] = "constant";
        if (!have[coll][i] && i == V_ALGORITHM) {
            snprintf(msg, msg_size, "Open MPI has no control variable %s (coll/tuned not "
                     "loaded?)", name);
            return 1;
        }
    }
    return 0;
}

/* Every method of the tree: a coll/tuned algorithm of this collective, and its values take. */
static int check_methods(enum collsel_mpi_coll coll, const collsel_tree *tree, int *forced,
                         char *msg, size_t msg_size)
{
    uint32_t k, n = collsel_tree_method_count(tree);
    int64_t known[MAX_ALGORITHMS];
    int32_t n_known = collsel_cvar_enum_values(&vars[coll][V_ALGORITHM], known, MAX_ALGORITHMS);
    for (k = 0; k < n; k++) {
        collsel_tree_choice method, levels[2];
        int32_t groups, n_levels = 1, i;
        collsel_tree_method(tree, k, &method);
        levels[0] = method;
        if (collsel_tree_hier(&method, &groups, &levels[0].algorithm, &levels[1].algorithm)) {
            if (coll != COLLSEL_MPI_BCAST && coll != COLLSEL_MPI_REDUCE) {
                snprintf(msg, msg_size, "the %s tree has a hierarchical method: libcollsel "
                         "runs those for bcast and reduce only", collsel_mpi_coll_names[coll]);
                return 1;
            }
            levels[0].segsize = levels[0].faninout = levels[1].segsize = levels[1].faninout = 0;
            n_levels = 2;   /* each level a flat method of its own */
        }
        for (i = 0; i < n_levels; i++) {
            const collsel_tree_choice *c = &levels[i];
            int bad;
            if (c->algorithm == 0)
                continue;
            *forced = 1;
            if ((c->segsize && !have[coll][V_SEGSIZE])
                || (c->faninout && !have[coll][V_FAN_A] && !have[coll][V_FAN_B])) {
                snprintf(msg, msg_size, "the %s tree's method %ld/%ld/%ld sets a segment size "
                         "or fan-out coll/tuned has no %s variable for",
                         collsel_mpi_coll_names[coll],
                         (long)c->algorithm, (long)c->segsize, (long)c->faninout,
                         collsel_mpi_coll_names[coll]);
                return 1;
            }
            if (!collsel_cvar_in_values(known, n_known, c->algorithm)) {
                snprintf(msg, msg_size, "the %s tree names algorithm %ld, which is no coll/tuned "
                         "%s algorithm (a tree of MPICH algorithms?)", collsel_mpi_coll_names[coll],
                         (long)c->algorithm, collsel_mpi_coll_names[coll]);
                return 1;
            }
            bad = apply(coll, c);
            reset(coll);
            if (bad) {
                snprintf(msg, msg_size, "cannot set %s for the %s tree's method %ld/%ld/%ld "
                         "through MPI_T", vars[coll][bad - 1].name, collsel_mpi_coll_names[coll],
                         (long)c->algorithm, (long)c->segsize, (long)c->faninout);
                return 1;
            }
        }
    }
    return 0;
}

int lc_force_init(const collsel_treeset *trees, char *msg, size_t msg_size)
{
    collsel_cvar dynamic;
    int64_t on = 0;
    int coll, forced = 0;
    refuses = collsel_mpi_ompi_refusals(OMPI_MAJOR_VERSION, OMPI_MINOR_VERSION);
    for (coll = 0; coll < COLLSEL_MPI_NCOLL; coll++) {
        refusal[coll] = NULL;
        if (!trees->tree[coll])
            continue;
        if (open_vars((enum collsel_mpi_coll)coll, msg, msg_size))
            return 1;
        if (!refusal[coll] && check_methods((enum collsel_mpi_coll)coll, trees->tree[coll],
                                            &forced, msg, msg_size))
            return 1;
    }
    if (forced && collsel_cvar_open("coll_tuned_use_dynamic_rules", &dynamic) == 0) {
        on = dynamic.initial;
        collsel_cvar_close(&dynamic);
    }
    if (forced && !on) {
        snprintf(msg, msg_size, "coll_tuned_use_dynamic_rules is off, so Open MPI ignores "
                 "forced algorithms (launch with --mca coll_tuned_use_dynamic_rules 1)");
        return 1;
    }
    return 0;
}

int lc_force_prepare(enum collsel_mpi_coll coll, MPI_Comm comm, struct lc_method *m)
{
    MPI_Group group;
    int rc = PMPI_Comm_group(comm, &group), bad;
    if (rc != MPI_SUCCESS)
        return rc;
    bad = apply(coll, &m->choice);
    if (bad) {   /* it took at MPI_Init: going on would leave the ranks on different methods */
        fprintf(stderr, "libcollsel: cannot set %s any more; aborting\n",
                vars[coll][bad - 1].name);
        PMPI_Abort(comm, 1);
    }
    rc = PMPI_Comm_create(comm, group, &m->comm);
    reset(coll);
    PMPI_Group_free(&group);
    if (rc != MPI_SUCCESS) {
        m->comm = comm;
        return rc;
    }
    m->owns_comm = 1;
    return MPI_SUCCESS;
}

void lc_force_enter(enum collsel_mpi_coll coll, const struct lc_method *m)
{
    (void)coll;
    (void)m;
}

void lc_force_leave(enum collsel_mpi_coll coll, const struct lc_method *m)
{
    (void)coll;
    (void)m;
}

void lc_force_finalize(void)
{
    int coll, i;
    for (coll = 0; coll < COLLSEL_MPI_NCOLL; coll++)
        for (i = 0; i < N_VARS; i++)
            if (have[coll][i]) {
                collsel_cvar_close(&vars[coll][i]);
                have[coll][i] = 0;
            }
}

#else
typedef int lc_force_openmpi_unused;   /* ISO C: no empty translation unit */
#endif
