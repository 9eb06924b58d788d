/* Hierarchical methods (Hasanov & Lastovetsky): G groups of consecutive ranks (on a cluster with
 * ranks mapped by node, the groups follow the nodes), each level one of the MPI's own
 * algorithms, forced as a flat method is, on the level's own communicator. */
#include "lc_mpi.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define TAG 0   /* point-to-point on the group communicator, which only this library uses */

static int group_of(const struct lc_hier *h, int rank)
{
    return (int)((long long)rank * h->groups / h->size);
}

static int first_of(const struct lc_hier *h, int group)   /* lowest rank of a group */
{
    return (int)(((long long)group * h->size + h->groups - 1) / h->groups);
}

/* A level: flat (forced) or defer, on level_comm. */
static int prepare_level(enum collsel_mpi_coll coll, MPI_Comm level_comm, int32_t algorithm,
                         struct lc_method *lv, int *made)
{
    memset(lv, 0, sizeof *lv);
    lv->choice.algorithm = algorithm;
    lv->comm = level_comm;
    lv->kind = algorithm == 0 ? LC_METHOD_DEFER : LC_METHOD_FLAT;
    if (lv->kind == LC_METHOD_DEFER)
        return MPI_SUCCESS;
    {
        int rc = lc_force_prepare(coll, level_comm, lv);
        *made += lv->owns_comm;
        return rc;
    }
}

int lc_hier_prepare(enum collsel_mpi_coll coll, MPI_Comm comm, struct lc_method *m, int *made)
{
    int32_t groups, inner, outer;
    struct lc_hier *h = calloc(1, sizeof *h);
    int rc, color;
    *made = 0;
    if (!h)
        return MPI_ERR_NO_MEM;
    collsel_tree_hier(&m->choice, &groups, &inner, &outer);
    m->kind = LC_METHOD_HIER;
    m->hier = h;
    h->group = h->leaders = MPI_COMM_NULL;
    PMPI_Comm_size(comm, &h->size);
    PMPI_Comm_rank(comm, &h->rank);
    h->groups = groups < h->size ? groups : h->size;
    color = group_of(h, h->rank);
    rc = PMPI_Comm_split(comm, color, h->rank, &h->group);
    if (rc != MPI_SUCCESS)
        return rc;
    ++*made;
    rc = PMPI_Comm_split(comm, h->rank == first_of(h, color) ? 0 : MPI_UNDEFINED, h->rank,
                         &h->leaders);
    if (rc != MPI_SUCCESS)
        return rc;
    *made += h->leaders != MPI_COMM_NULL;
    rc = prepare_level(coll, h->group, inner, &h->inner, made);
    if (rc == MPI_SUCCESS && h->leaders != MPI_COMM_NULL)
        rc = prepare_level(coll, h->leaders, outer, &h->outer, made);
    return rc;
}

int lc_hier_release(struct lc_method *m)
{
    struct lc_hier *h = m->hier;
    struct lc_method *levels[2];
    int freed = 0, i;
    if (!h)
        return 0;
    levels[0] = &h->inner;
    levels[1] = &h->outer;
    for (i = 0; i < 2; i++)
        if (levels[i]->owns_comm) {
            PMPI_Comm_free(&levels[i]->comm);
            freed++;
        }
    if (h->leaders != MPI_COMM_NULL) {
        PMPI_Comm_free(&h->leaders);
        freed++;
    }
    if (h->group != MPI_COMM_NULL) {
        PMPI_Comm_free(&h->group);
        freed++;
    }
    free(h);
    m->hier = NULL;
    return freed;
}

int lc_level_bcast(const struct lc_method *m, void *buf, int count, MPI_Datatype type, int root)
{
    int rc;
    if (m->kind != LC_METHOD_FLAT)
        return PMPI_Bcast(buf, count, type, root, m->comm);
    lc_force_enter(COLLSEL_MPI_BCAST, m);
    rc = PMPI_Bcast(buf, count, type, root, m->comm);
    lc_force_leave(COLLSEL_MPI_BCAST, m);
    return rc;
}

int lc_level_reduce(const struct lc_method *m, const void *sendbuf, void *recvbuf, int count,
                    MPI_Datatype type, MPI_Op op, int root)
{
    int rc;
    if (m->kind != LC_METHOD_FLAT)
        return PMPI_Reduce(sendbuf, recvbuf, count, type, op, root, m->comm);
    lc_force_enter(COLLSEL_MPI_REDUCE, m);
    rc = PMPI_Reduce(sendbuf, recvbuf, count, type, op, root, m->comm);
    lc_force_leave(COLLSEL_MPI_REDUCE, m);
    return rc;
}

int lc_hier_bcast(const struct lc_method *m, void *buf, int count, MPI_Datatype type, int root)
{
    const struct lc_hier *h = m->hier;
    int root_group = group_of(h, root), leader = first_of(h, root_group), rc = MPI_SUCCESS;
    if (root != leader) {   /* the root's data to its group's leader first */
        if (h->rank == root)
            rc = PMPI_Send(buf, count, type, 0, TAG, h->group);
        else if (h->rank == leader)
            rc = PMPI_Recv(buf, count, type, root - leader, TAG, h->group, MPI_STATUS_IGNORE);
    }
    if (rc == MPI_SUCCESS && h->leaders != MPI_COMM_NULL)
        rc = lc_level_bcast(&h->outer, buf, count, type, root_group);
    if (rc == MPI_SUCCESS)
        rc = lc_level_bcast(&h->inner, buf, count, type, 0);
    return rc;
}

/* A buffer holding count elements of type: *block to free, the pointer to pass to MPI. */
static void *buffer_like(int count, MPI_Datatype type, void **block)
{
    MPI_Aint lb, extent, true_lb, true_extent;
    size_t bytes;
    *block = NULL;
    if (PMPI_Type_get_extent(type, &lb, &extent) != MPI_SUCCESS
        || PMPI_Type_get_true_extent(type, &true_lb, &true_extent) != MPI_SUCCESS)
        return NULL;
    bytes = (size_t)true_extent + (count > 1 ? (size_t)(count - 1) * (size_t)extent : 0);
    if (!(*block = malloc(bytes ? bytes : 1)))
        return NULL;
    return (char *)*block - true_lb;
}

int lc_hier_reduce(const struct lc_method *m, const void *sendbuf, void *recvbuf, int count,
                   MPI_Datatype type, MPI_Op op, int root)
{
    const struct lc_hier *h = m->hier;
    int root_group = group_of(h, root), leader = first_of(h, root_group), rc;
    int is_leader = h->leaders != MPI_COMM_NULL;
    const void *in = sendbuf == MPI_IN_PLACE ? recvbuf : sendbuf;   /* IN_PLACE: root only */
    void *group_block = NULL, *result_block = NULL, *group_sum = NULL, *result = recvbuf;
    if (is_leader && !(group_sum = buffer_like(count, type, &group_block)))
        PMPI_Abort(MPI_COMM_WORLD, 1);   /* this rank alone cannot leave the others waiting */
    if (is_leader && h->rank != root && h->rank == leader
        && !(result = buffer_like(count, type, &result_block)))
        PMPI_Abort(MPI_COMM_WORLD, 1);
    rc = lc_level_reduce(&h->inner, in, group_sum, count, type, op, 0);
    if (rc == MPI_SUCCESS && is_leader)
        rc = lc_level_reduce(&h->outer, group_sum, result, count, type, op, root_group);
    if (rc == MPI_SUCCESS && root != leader) {   /* the result from the leader to the root */
        if (h->rank == leader)
            rc = PMPI_Send(result, count, type, root - leader, TAG, h->group);
        else if (h->rank == root)
            rc = PMPI_Recv(recvbuf, count, type, 0, TAG, h->group, MPI_STATUS_IGNORE);
    }
    free(group_block);
    free(result_block);
    return rc;
}
