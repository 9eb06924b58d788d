/* State cached on a communicator: per collective its rule list, resolved at the collective's
 * first call, and what each method needs (a shadow communicator, hierarchical groups), made at
 * the method's first use; freed by the attribute's delete callback when the communicator is
 * freed. */
#define _POSIX_C_SOURCE 200809L   /* nanosleep */

#include "lc_mpi.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static int keyval = MPI_KEYVAL_INVALID;
static collsel_pmpi_counts counts;   /* updated by COUNT: threads free communicators too */
static int multiple;                 /* MPI_THREAD_MULTIPLE: shadows made one at a time */
static pthread_mutex_t making = PTHREAD_MUTEX_INITIALIZER;

#define COUNT(field, delta) __atomic_fetch_add(&counts.field, (int64_t)(delta), __ATOMIC_RELAXED)

void lc_comm_counts(collsel_pmpi_counts *out)
{
    *out = counts;
}

/* What method k of a rule list is (local): flat, deferred or hierarchical; nothing made yet. */
static void method_describe(enum collsel_mpi_coll coll, int32_t size,
                            const collsel_tree_choice *choice, struct lc_method *m, MPI_Comm comm)
{
    memset(m, 0, sizeof *m);
    m->choice = *choice;
    m->comm = comm;
    m->kind = choice->algorithm == 0 || !lc_force_usable(coll, choice, size) ? LC_METHOD_DEFER
                                                                             : LC_METHOD_FLAT;
    m->ready = m->kind == LC_METHOD_DEFER && !collsel_tree_hier(choice, NULL, NULL, NULL);
}

/* What the method needs made, at its first use (collective over comm: every rank of comm
 * chooses the same method for the same call). Communicators it makes count as shadows. */
static int method_make(enum collsel_mpi_coll coll, MPI_Comm comm, struct lc_method *m)
{
    int rc, made = 0;
    if (collsel_tree_hier(&m->choice, NULL, NULL, NULL)) {
        rc = lc_hier_prepare(coll, comm, m, &made);
        COUNT(shadows_live, made);
        COUNT(shadows_made, made);
        if (m->hier)
            COUNT(state_bytes, sizeof *m->hier);
        return rc;
    }
    rc = lc_force_prepare(coll, comm, m);
    if (m->owns_comm)
        COUNT(shadows_live, 1), COUNT(shadows_made, 1);
    return rc;
}

static void method_release(struct lc_method *m)
{
    if (m->hier) {
        COUNT(state_bytes, -(int64_t)sizeof *m->hier);
        COUNT(shadows_live, -lc_hier_release(m));
    }
    if (m->owns_comm) {
        PMPI_Comm_free(&m->comm);
        m->owns_comm = 0;
        COUNT(shadows_live, -1);
    }
}

static void coll_release(struct lc_coll_state *cs)
{
    uint32_t k;
    if (cs->methods) {
        for (k = 0; k < cs->rules.n_choices; k++)
            method_release(&cs->methods[k]);
        free(cs->methods);
        COUNT(state_bytes, -(int64_t)(cs->rules.n_choices * sizeof *cs->methods));
    }
    COUNT(state_bytes, -(int64_t)cs->rules.bytes);
    lc_rules_free(&cs->rules);
    cs->methods = NULL;
}

static int delete_state(MPI_Comm comm, int key, void *attribute, void *extra)
{
    struct lc_comm_state *s = attribute;
    int c;
    (void)comm, (void)key, (void)extra;
    for (c = 0; c < COLLSEL_MPI_NCOLL; c++)
        coll_release(&s->coll[c]);
    free(s);
    COUNT(states_live, -1);
    COUNT(state_bytes, -(int64_t)sizeof *s);
    return MPI_SUCCESS;
}

int lc_comm_init(int thread_multiple)
{
    memset(&counts, 0, sizeof counts);
    multiple = thread_multiple;
    return PMPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, delete_state, &keyval, NULL);
}

static void delete_from(MPI_Comm comm)
{
    void *value;
    int flag = 0;
    if (PMPI_Comm_get_attr(comm, keyval, &value, &flag) == MPI_SUCCESS && flag)
        PMPI_Comm_delete_attr(comm, keyval);
}

void lc_comm_finalize(void)
{
    if (keyval == MPI_KEYVAL_INVALID)   /* never made, or freed already */
        return;
    /* MPI_Finalize deletes MPI_COMM_SELF's attributes but need not delete MPI_COMM_WORLD's */
    delete_from(MPI_COMM_WORLD);
    delete_from(MPI_COMM_SELF);
    PMPI_Comm_free_keyval(&keyval);
}

struct lc_comm_state *lc_comm_state(MPI_Comm comm)
{
    struct lc_comm_state *s;
    int flag = 0, c;
    if (PMPI_Comm_get_attr(comm, keyval, &s, &flag) != MPI_SUCCESS)
        return NULL;
    if (flag)
        return s;
    if (!(s = calloc(1, sizeof *s))) {   /* passing through on this rank only would hang */
        fprintf(stderr, "libcollsel: out of memory; aborting\n");
        PMPI_Abort(comm, 1);
    }
    PMPI_Comm_size(comm, &s->size);
    PMPI_Comm_rank(comm, &s->rank);
    PMPI_Comm_test_inter(comm, &s->inter);
    for (c = 0; c < COLLSEL_MPI_NCOLL; c++)
        s->coll[c].ppn = -1;
    if (PMPI_Comm_set_attr(comm, keyval, s) != MPI_SUCCESS) {
        free(s);
        return NULL;
    }
    COUNT(states_live, 1);
    COUNT(state_bytes, sizeof *s);
    return s;
}

/* Processes per node of comm: its size over its number of shared-memory nodes (leaders of
 * MPI_Comm_split_type SHARED), rounded down, as runtime/examples/mpi_ppn_query.c. */
int lc_comm_ppn(MPI_Comm comm, int size, int32_t *ppn)
{
    MPI_Comm node;
    int local_rank = 0, leader, nodes = 0;
    int rc = PMPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    if (rc != MPI_SUCCESS)
        return rc;
    PMPI_Comm_rank(node, &local_rank);
    PMPI_Comm_free(&node);
    leader = local_rank == 0;
    rc = PMPI_Allreduce(&leader, &nodes, 1, MPI_INT, MPI_SUM, comm);
    *ppn = nodes > 0 ? size / nodes : size;
    return rc;
}

/* Under MPI_THREAD_MULTIPLE, making a shadow writes process-global MPI_T variables another
 * thread's shadow (or communicator) would copy, so one thread of a process makes shadows at a
 * time. A lock held across the collective making would deadlock: rank 0's thread A holds it
 * making comm1's shadows and waits for rank 1's thread A, which waits for the lock rank 1's
 * thread B holds making comm2's, waiting for rank 0's B. So every rank of comm only tries the
 * lock; they go on when all of them hold it, else those that do release it, back off a random
 * while (the ranks' threads fall out of step) and try again. */
static void making_begin(MPI_Comm comm)
{
    unsigned seed = (unsigned)(uintptr_t)&comm, limit_us = 2;
    int held, all = 0;
    while (multiple) {
        held = pthread_mutex_trylock(&making) == 0;
        if (PMPI_Allreduce(&held, &all, 1, MPI_INT, MPI_MIN, comm) == MPI_SUCCESS && all)
            return;
        if (held)
            pthread_mutex_unlock(&making);
        {
            struct timespec pause = {0, 1000L * (long)(1 + rand_r(&seed) % limit_us)};
            nanosleep(&pause, NULL);
        }
        limit_us = limit_us < 1000 ? 2 * limit_us : limit_us;
    }
}

static void making_end(void)
{
    if (multiple)
        pthread_mutex_unlock(&making);
}

void lc_comm_resolve(struct lc_comm_state *s, MPI_Comm comm, enum collsel_mpi_coll coll,
                     const collsel_tree *tree, int trace)
{
    struct lc_coll_state *cs = &s->coll[coll];
    int failed, any_failed = 1;
    uint32_t k;
    cs->resolved = -1;
    if (collsel_tree_axes(tree) == 3 && lc_comm_ppn(comm, s->size, &cs->ppn))
        return;
    failed = lc_rules_resolve(tree, s->size, cs->ppn, &cs->rules) != COLLSEL_TREE_OK
             || !(cs->methods = calloc(cs->rules.n_choices, sizeof *cs->methods));
    /* out of memory on one rank: every rank passes this collective through */
    if (PMPI_Allreduce(&failed, &any_failed, 1, MPI_INT, MPI_MAX, comm) != MPI_SUCCESS
        || any_failed) {
        free(cs->methods);
        cs->methods = NULL;
        lc_rules_free(&cs->rules);
        return;
    }
    COUNT(state_bytes, cs->rules.bytes + cs->rules.n_choices * sizeof *cs->methods);
    for (k = 0; k < cs->rules.n_choices; k++)
        method_describe(coll, s->size, &cs->rules.choices[k], &cs->methods[k], comm);
    cs->resolved = 1;
    if (trace) {
        char rules[1024], ppn[16] = "-";
        lc_rules_format(&cs->rules, rules, sizeof rules);
        if (cs->ppn >= 0)
            snprintf(ppn, sizeof ppn, "%ld", (long)cs->ppn);
        lc_trace("collsel-trace resolve %s rank=%ld comm_size=%ld ppn=%s rules=%s",
                 collsel_mpi_coll_names[coll], (long)s->rank, (long)s->size, ppn, rules);
    }
}

int lc_comm_make(MPI_Comm comm, enum collsel_mpi_coll coll, struct lc_method *m)
{
    int rc;
    making_begin(comm);
    rc = method_make(coll, comm, m);
    making_end();
    if (rc != MPI_SUCCESS) {   /* what was made is freed with the communicator */
        m->ready = -1;
        return 0;
    }
    m->ready = 1;
    return 1;
}
