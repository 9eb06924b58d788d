/* coll/collsel: one module per communicator. It installs an entry point for each collective a
 * tree covers and keeps the functions of the component below it (the layer coll/tuned or another
 * component installed before us) for the calls the tree defers. */
#include "coll_collsel.h"

#include <string.h>

#include "ompi/communicator/communicator.h"
#include "ompi/mca/coll/base/coll_base_functions.h"

/* The below-layer module of collective `coll` in a saved function table. */
static mca_coll_base_module_t **below_module(mca_coll_base_comm_coll_t *below, int coll)
{
    switch (coll) {
    case COLLSEL_MPI_ALLGATHER: return &below->coll_allgather_module;
    case COLLSEL_MPI_ALLGATHERV: return &below->coll_allgatherv_module;
    case COLLSEL_MPI_ALLREDUCE: return &below->coll_allreduce_module;
    case COLLSEL_MPI_ALLTOALL: return &below->coll_alltoall_module;
    case COLLSEL_MPI_ALLTOALLV: return &below->coll_alltoallv_module;
    case COLLSEL_MPI_BARRIER: return &below->coll_barrier_module;
    case COLLSEL_MPI_BCAST: return &below->coll_bcast_module;
    case COLLSEL_MPI_EXSCAN: return &below->coll_exscan_module;
    case COLLSEL_MPI_GATHER: return &below->coll_gather_module;
    case COLLSEL_MPI_REDUCE: return &below->coll_reduce_module;
    case COLLSEL_MPI_REDUCE_SCATTER: return &below->coll_reduce_scatter_module;
    case COLLSEL_MPI_REDUCE_SCATTER_BLOCK: return &below->coll_reduce_scatter_block_module;
    case COLLSEL_MPI_SCAN: return &below->coll_scan_module;
    default: return &below->coll_scatter_module;
    }
}

static void module_construct(mca_coll_collsel_module_t *m)
{
    memset(&m->below, 0, sizeof m->below);
    m->retained = 0;
    m->comm_size = 0;
}

static void module_destruct(mca_coll_collsel_module_t *m)
{
    for (int c = 0; c < COLLSEL_MPI_NCOLL; c++)
        if (m->retained & (1u << c))
            OBJ_RELEASE(*below_module(&m->below, c));
}

OBJ_CLASS_INSTANCE(mca_coll_collsel_module_t, mca_coll_base_module_t, module_construct,
                   module_destruct);

/* Keeps the layer below (every covered collective must have one: a deferred call goes there)
 * and the topology cache the coll/base algorithms read (module->base_data, as coll/tuned). */
static int module_enable(mca_coll_base_module_t *module, struct ompi_communicator_t *comm)
{
    mca_coll_collsel_module_t *m = (mca_coll_collsel_module_t *)module;
    int c;
    m->below = *comm->c_coll;
    for (c = 0; c < COLLSEL_MPI_NCOLL; c++)
        if (NULL != mca_coll_collsel_component.trees.tree[c]
            && NULL == *below_module(&m->below, c)) {
            opal_output(0, "coll/collsel: no component below for %s; coll/collsel disabled on "
                        "this communicator", collsel_mpi_coll_names[c]);
            memset(&m->below, 0, sizeof m->below);
            return OMPI_ERROR;
        }
    for (c = 0; c < COLLSEL_MPI_NCOLL; c++)
        if (NULL != mca_coll_collsel_component.trees.tree[c]) {
            OBJ_RETAIN(*below_module(&m->below, c));
            m->retained |= 1u << c;
        }
    m->super.base_data = OBJ_NEW(mca_coll_base_comm_t);
    return NULL == m->super.base_data ? OMPI_ERR_OUT_OF_RESOURCE : OMPI_SUCCESS;
}

mca_coll_base_module_t *mca_coll_collsel_comm_query(struct ompi_communicator_t *comm,
                                                    int *priority)
{
    const collsel_tree *const *t = mca_coll_collsel_component.trees.tree;
    mca_coll_collsel_module_t *m;
    if (!mca_coll_collsel_component.usable || OMPI_COMM_IS_INTER(comm)
        || ompi_comm_size(comm) < 2 || mca_coll_collsel_component.priority < 0)
        return NULL;
    m = OBJ_NEW(mca_coll_collsel_module_t);
    if (NULL == m)
        return NULL;
    *priority = mca_coll_collsel_component.priority;
    m->comm_size = ompi_comm_size(comm);
    m->super.coll_module_enable = module_enable;
    m->super.coll_allgather = t[COLLSEL_MPI_ALLGATHER] ? mca_coll_collsel_allgather : NULL;
    m->super.coll_allgatherv = t[COLLSEL_MPI_ALLGATHERV] ? mca_coll_collsel_allgatherv : NULL;
    m->super.coll_allreduce = t[COLLSEL_MPI_ALLREDUCE] ? mca_coll_collsel_allreduce : NULL;
    m->super.coll_alltoall = t[COLLSEL_MPI_ALLTOALL] ? mca_coll_collsel_alltoall : NULL;
    m->super.coll_alltoallv = t[COLLSEL_MPI_ALLTOALLV] ? mca_coll_collsel_alltoallv : NULL;
    m->super.coll_barrier = t[COLLSEL_MPI_BARRIER] ? mca_coll_collsel_barrier : NULL;
    m->super.coll_bcast = t[COLLSEL_MPI_BCAST] ? mca_coll_collsel_bcast : NULL;
    m->super.coll_exscan = t[COLLSEL_MPI_EXSCAN] ? mca_coll_collsel_exscan : NULL;
    m->super.coll_gather = t[COLLSEL_MPI_GATHER] ? mca_coll_collsel_gather : NULL;
    m->super.coll_reduce = t[COLLSEL_MPI_REDUCE] ? mca_coll_collsel_reduce : NULL;
    m->super.coll_reduce_scatter =
        t[COLLSEL_MPI_REDUCE_SCATTER] ? mca_coll_collsel_reduce_scatter : NULL;
    m->super.coll_reduce_scatter_block =
        t[COLLSEL_MPI_REDUCE_SCATTER_BLOCK] ? mca_coll_collsel_reduce_scatter_block : NULL;
    m->super.coll_scan = t[COLLSEL_MPI_SCAN] ? mca_coll_collsel_scan : NULL;
    m->super.coll_scatter = t[COLLSEL_MPI_SCATTER] ? mca_coll_collsel_scatter : NULL;
    return &m->super;
}
