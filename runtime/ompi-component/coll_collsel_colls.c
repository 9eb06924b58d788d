/* coll/collsel: the 14 entry points. Each computes m as Open MPI 4.1.4's fixed decision does
 * (coll_tuned_decision_fixed.c; docs/guide/collectives.md "What m means"), asks its tree, and
 * runs the coll/base function of that algorithm id with the arguments coll/tuned's
 * ompi_coll_tuned_<coll>_intra_do_this passes (coll_tuned_<coll>_decision.c); algorithm 0 (the
 * tree defers) hands the call to the component below. No allocation, no lock: a query reads the
 * tree loaded at MPI_Init. */
#include "coll_collsel.h"

#include "ompi/communicator/communicator.h"
#include "ompi/datatype/ompi_datatype.h"
#include "ompi/mca/coll/base/coll_base_functions.h"

/* coll/tuned's defaults where a method leaves a parameter open (coll_tuned_component.c,
 * coll_tuned_bcast_decision.c, ..._reduce_decision.c, ..._alltoall_decision.c of 4.1.4). */
#define TUNED_CHAIN_FANOUT 4
#define TUNED_KNOMIAL_RADIX 4
#define TUNED_MAX_REQUESTS 0
#define TUNED_SCATTER_BLOCKING_SEND_RATIO 0

#define MODULE(module) ((mca_coll_collsel_module_t *)(module))

/* The tree's choice at (P, m); a method this Open MPI refuses at P (two_proc on P != 2: the MPI
 * table's refusals of the release) defers instead of failing the call. */
static inline collsel_tree_choice decide(int coll, const mca_coll_base_module_t *module,
                                         uint64_t m)
{
    const collsel_tree *tree = mca_coll_collsel_component.trees.tree[coll];
    int32_t p = ((const mca_coll_collsel_module_t *)module)->comm_size;
    collsel_tree_choice c, deferred = {0, 0, 0};
    /* cannot fail: the tree has 2 axes and comm_size >= 2 (checked at load and at comm_query) */
    (void)collsel_tree_decide(tree, p, m, &c);
    return collsel_mpi_refused(&mca_coll_collsel_component.refusals[coll], c.algorithm, p)
               ? deferred : c;
}

/* The same for a reduction: a non-commutative operation defers (the measured trees are of
 * MPI_SUM, and coll/tuned's fixed decision picks an order-keeping algorithm for it), as in
 * libcollsel. PMPI_Op_commutative, not ompi/op/op.h's inline: Debian's development headers
 * lack a header op.h includes (ompi/mpi/fortran/base/fint_2_int.h). */
static inline collsel_tree_choice decide_op(int coll, const mca_coll_base_module_t *module,
                                            uint64_t m, struct ompi_op_t *op)
{
    collsel_tree_choice deferred = {0, 0, 0};
    int commutes = 0;
    (void)PMPI_Op_commutative(op, &commutes);
    return commutes ? decide(coll, module, m) : deferred;
}

static inline uint64_t bytes(const struct ompi_datatype_t *dtype, int count)
{
    size_t dsize;
    ompi_datatype_type_size(dtype, &dsize);
    return (uint64_t)dsize * (uint64_t)(count > 0 ? count : 0);
}

static inline int fanout(int32_t faninout)
{
    return faninout > 0 ? faninout : TUNED_CHAIN_FANOUT;
}

int mca_coll_collsel_allgather(const void *sbuf, int scount, struct ompi_datatype_t *sdtype,
                               void *rbuf, int rcount, struct ompi_datatype_t *rdtype,
                               struct ompi_communicator_t *comm, mca_coll_base_module_t *module)
{
    /* :1102-1107: the send type's size (the receive type's in place) times scount */
    collsel_tree_choice c = decide(COLLSEL_MPI_ALLGATHER, module,
                                   bytes(MPI_IN_PLACE != sbuf ? sdtype : rdtype, scount));
    switch (c.algorithm) {
    case 1: return ompi_coll_base_allgather_intra_basic_linear(sbuf, scount, sdtype, rbuf, rcount,
        rdtype, comm, module);
    case 2: return ompi_coll_base_allgather_intra_bruck(sbuf, scount, sdtype, rbuf, rcount, rdtype,
        comm, module);
    case 3: return ompi_coll_base_allgather_intra_recursivedoubling(sbuf, scount, sdtype, rbuf,
        rcount, rdtype, comm, module);
    case 4: return ompi_coll_base_allgather_intra_ring(sbuf, scount, sdtype, rbuf, rcount, rdtype,
        comm, module);
    case 5: return ompi_coll_base_allgather_intra_neighborexchange(sbuf, scount, sdtype, rbuf,
        rcount, rdtype, comm, module);
    case 6: return ompi_coll_base_allgather_intra_two_procs(sbuf, scount, sdtype, rbuf, rcount,
        rdtype, comm, module);
    default:
        return MODULE(module)->below.coll_allgather(sbuf, scount, sdtype, rbuf, rcount, rdtype,
            comm, MODULE(module)->below.coll_allgather_module);
    }
}

int mca_coll_collsel_allgatherv(const void *sbuf, int scount, struct ompi_datatype_t *sdtype,
                                void *rbuf, const int *rcounts, const int *displs,
                                struct ompi_datatype_t *rdtype, struct ompi_communicator_t *comm,
                                mca_coll_base_module_t *module)
{
    /* :1252-1262: the total over ranks / P */
    const struct ompi_datatype_t *t = MPI_IN_PLACE != sbuf ? sdtype : rdtype;
    uint64_t total = 0;
    int32_t i, p = MODULE(module)->comm_size;
    collsel_tree_choice c;
    for (i = 0; i < p; i++)
        total += bytes(t, rcounts[i]);
    c = decide(COLLSEL_MPI_ALLGATHERV, module, total / (uint64_t)p);
    switch (c.algorithm) {
    case 1: return ompi_coll_base_allgatherv_intra_basic_default(sbuf, scount, sdtype, rbuf,
        rcounts, displs, rdtype, comm, module);
    case 2: return ompi_coll_base_allgatherv_intra_bruck(sbuf, scount, sdtype, rbuf, rcounts,
        displs, rdtype, comm, module);
    case 3: return ompi_coll_base_allgatherv_intra_ring(sbuf, scount, sdtype, rbuf, rcounts, displs,
        rdtype, comm, module);
    case 4: return ompi_coll_base_allgatherv_intra_neighborexchange(sbuf, scount, sdtype, rbuf,
        rcounts, displs, rdtype, comm, module);
    case 5: return ompi_coll_base_allgatherv_intra_two_procs(sbuf, scount, sdtype, rbuf, rcounts,
        displs, rdtype, comm, module);
    default:
        return MODULE(module)->below.coll_allgatherv(sbuf, scount, sdtype, rbuf, rcounts, displs,
            rdtype, comm, MODULE(module)->below.coll_allgatherv_module);
    }
}

int mca_coll_collsel_allreduce(const void *sbuf, void *rbuf, int count,
                               struct ompi_datatype_t *dtype, struct ompi_op_t *op,
                               struct ompi_communicator_t *comm, mca_coll_base_module_t *module)
{
    collsel_tree_choice c = decide_op(COLLSEL_MPI_ALLREDUCE, module, bytes(dtype, count),
                                      op);   /* :66-67 */
    switch (c.algorithm) {
    case 1: return ompi_coll_base_allreduce_intra_basic_linear(sbuf, rbuf, count, dtype, op, comm,
        module);
    case 2: return ompi_coll_base_allreduce_intra_nonoverlapping(sbuf, rbuf, count, dtype, op, comm,
        module);
    case 3: return ompi_coll_base_allreduce_intra_recursivedoubling(sbuf, rbuf, count, dtype, op,
        comm, module);
    case 4: return ompi_coll_base_allreduce_intra_ring(sbuf, rbuf, count, dtype, op, comm, module);
    case 5: return ompi_coll_base_allreduce_intra_ring_segmented(sbuf, rbuf, count, dtype, op, comm,
        module, (uint32_t)c.segsize);
    case 6: return ompi_coll_base_allreduce_intra_redscat_allgather(sbuf, rbuf, count, dtype, op,
        comm, module);
    default:
        return MODULE(module)->below.coll_allreduce(sbuf, rbuf, count, dtype, op, comm,
                                                    MODULE(module)->below.coll_allreduce_module);
    }
}

int mca_coll_collsel_alltoall(const void *sbuf, int scount, struct ompi_datatype_t *sdtype,
                              void *rbuf, int rcount, struct ompi_datatype_t *rdtype,
                              struct ompi_communicator_t *comm, mca_coll_base_module_t *module)
{
    /* :239-244 */
    collsel_tree_choice c = decide(COLLSEL_MPI_ALLTOALL, module,
                                   bytes(MPI_IN_PLACE != sbuf ? sdtype : rdtype, scount));
    switch (c.algorithm) {
    case 1: return ompi_coll_base_alltoall_intra_basic_linear(sbuf, scount, sdtype, rbuf, rcount,
        rdtype, comm, module);
    case 2: return ompi_coll_base_alltoall_intra_pairwise(sbuf, scount, sdtype, rbuf, rcount,
        rdtype, comm, module);
    case 3: return ompi_coll_base_alltoall_intra_bruck(sbuf, scount, sdtype, rbuf, rcount, rdtype,
        comm, module);
    case 4: return ompi_coll_base_alltoall_intra_linear_sync(sbuf, scount, sdtype, rbuf, rcount,
        rdtype, comm, module, TUNED_MAX_REQUESTS);
    case 5: return ompi_coll_base_alltoall_intra_two_procs(sbuf, scount, sdtype, rbuf, rcount,
        rdtype, comm, module);
    default:
        return MODULE(module)->below.coll_alltoall(sbuf, scount, sdtype, rbuf, rcount, rdtype, comm,
                                                   MODULE(module)->below.coll_alltoall_module);
    }
}

int mca_coll_collsel_alltoallv(const void *sbuf, const int *scounts, const int *sdisps,
                               struct ompi_datatype_t *sdtype, void *rbuf, const int *rcounts,
                               const int *rdisps, struct ompi_datatype_t *rdtype,
                               struct ompi_communicator_t *comm, mca_coll_base_module_t *module)
{
    /* the fixed decision reads P only (:418-451); m is this rank's first block, as measured */
    collsel_tree_choice c = decide(COLLSEL_MPI_ALLTOALLV, module,
                                   MPI_IN_PLACE != sbuf ? bytes(sdtype, scounts[0])
                                                        : bytes(rdtype, rcounts[0]));
    switch (c.algorithm) {
    case 1: return ompi_coll_base_alltoallv_intra_basic_linear(sbuf, scounts, sdisps, sdtype, rbuf,
        rcounts, rdisps, rdtype, comm, module);
    case 2: return ompi_coll_base_alltoallv_intra_pairwise(sbuf, scounts, sdisps, sdtype, rbuf,
        rcounts, rdisps, rdtype, comm, module);
    default:
        return MODULE(module)->below.coll_alltoallv(sbuf, scounts, sdisps, sdtype, rbuf, rcounts,
            rdisps, rdtype, comm, MODULE(module)->below.coll_alltoallv_module);
    }
}

int mca_coll_collsel_barrier(struct ompi_communicator_t *comm, mca_coll_base_module_t *module)
{
    collsel_tree_choice c = decide(COLLSEL_MPI_BARRIER, module, 0);   /* P only (:464-510) */
    switch (c.algorithm) {
    case 1: return ompi_coll_base_barrier_intra_basic_linear(comm, module);
    case 2: return ompi_coll_base_barrier_intra_doublering(comm, module);
    case 3: return ompi_coll_base_barrier_intra_recursivedoubling(comm, module);
    case 4: return ompi_coll_base_barrier_intra_bruck(comm, module);
    case 5: return ompi_coll_base_barrier_intra_two_procs(comm, module);
    case 6: return ompi_coll_base_barrier_intra_tree(comm, module);
    default:
        return MODULE(module)->below.coll_barrier(comm, MODULE(module)->below.coll_barrier_module);
    }
}

int mca_coll_collsel_bcast(void *buf, int count, struct ompi_datatype_t *dtype, int root,
                           struct ompi_communicator_t *comm, mca_coll_base_module_t *module)
{
    collsel_tree_choice c = decide(COLLSEL_MPI_BCAST, module, bytes(dtype, count));   /* :521-522 */
    uint32_t s = (uint32_t)c.segsize;
    switch (c.algorithm) {
    case 1: return ompi_coll_base_bcast_intra_basic_linear(buf, count, dtype, root, comm, module);
    case 2: return ompi_coll_base_bcast_intra_chain(buf, count, dtype, root, comm, module, s,
        fanout(c.faninout));
    case 3: return ompi_coll_base_bcast_intra_pipeline(buf, count, dtype, root, comm, module, s);
    case 4: return ompi_coll_base_bcast_intra_split_bintree(buf, count, dtype, root, comm, module,
        s);
    case 5: return ompi_coll_base_bcast_intra_bintree(buf, count, dtype, root, comm, module, s);
    case 6: return ompi_coll_base_bcast_intra_binomial(buf, count, dtype, root, comm, module, s);
    case 7: return ompi_coll_base_bcast_intra_knomial(buf, count, dtype, root, comm, module, s,
        TUNED_KNOMIAL_RADIX);
    case 8: return ompi_coll_base_bcast_intra_scatter_allgather(buf, count, dtype, root, comm,
        module, s);
    case 9: return ompi_coll_base_bcast_intra_scatter_allgather_ring(buf, count, dtype, root, comm,
        module, s);
    default:
        return MODULE(module)->below.coll_bcast(buf, count, dtype, root, comm,
                                                MODULE(module)->below.coll_bcast_module);
    }
}

int mca_coll_collsel_exscan(const void *sbuf, void *rbuf, int count,
                            struct ompi_datatype_t *dtype, struct ompi_op_t *op,
                            struct ompi_communicator_t *comm, mca_coll_base_module_t *module)
{
    collsel_tree_choice c = decide(COLLSEL_MPI_EXSCAN, module, bytes(dtype, count));
    switch (c.algorithm) {
    case 1: return ompi_coll_base_exscan_intra_linear(sbuf, rbuf, count, dtype, op, comm, module);
    case 2: return ompi_coll_base_exscan_intra_recursivedoubling(sbuf, rbuf, count, dtype, op, comm,
        module);
    default:
        return MODULE(module)->below.coll_exscan(sbuf, rbuf, count, dtype, op, comm,
                                                 MODULE(module)->below.coll_exscan_module);
    }
}

int mca_coll_collsel_gather(const void *sbuf, int scount, struct ompi_datatype_t *sdtype,
                            void *rbuf, int rcount, struct ompi_datatype_t *rdtype, int root,
                            struct ompi_communicator_t *comm, mca_coll_base_module_t *module)
{
    /* :1396-1402: the receive block at the root (or in place), the send block elsewhere */
    int at_root = root == ompi_comm_rank(comm) || MPI_IN_PLACE == sbuf;
    collsel_tree_choice c = decide(COLLSEL_MPI_GATHER, module,
                                   at_root ? bytes(rdtype, rcount) : bytes(sdtype, scount));
    switch (c.algorithm) {
    case 1: return ompi_coll_base_gather_intra_basic_linear(sbuf, scount, sdtype, rbuf, rcount,
        rdtype, root, comm, module);
    case 2: return ompi_coll_base_gather_intra_binomial(sbuf, scount, sdtype, rbuf, rcount, rdtype,
        root, comm, module);
    case 3: return ompi_coll_base_gather_intra_linear_sync(sbuf, scount, sdtype, rbuf, rcount,
        rdtype, root, comm, module, c.segsize);
    default:
        return MODULE(module)->below.coll_gather(sbuf, scount, sdtype, rbuf, rcount, rdtype, root,
            comm, MODULE(module)->below.coll_gather_module);
    }
}

int mca_coll_collsel_reduce(const void *sbuf, void *rbuf, int count,
                            struct ompi_datatype_t *dtype, struct ompi_op_t *op, int root,
                            struct ompi_communicator_t *comm, mca_coll_base_module_t *module)
{
    collsel_tree_choice c = decide_op(COLLSEL_MPI_REDUCE, module, bytes(dtype, count),
                                      op);   /* :676-677 */
    uint32_t s = (uint32_t)c.segsize;
    switch (c.algorithm) {
    case 1: return ompi_coll_base_reduce_intra_basic_linear(sbuf, rbuf, count, dtype, op, root,
        comm, module);
    case 2: return ompi_coll_base_reduce_intra_chain(sbuf, rbuf, count, dtype, op, root, comm,
        module, s, fanout(c.faninout), TUNED_MAX_REQUESTS);
    case 3: return ompi_coll_base_reduce_intra_pipeline(sbuf, rbuf, count, dtype, op, root, comm,
        module, s, TUNED_MAX_REQUESTS);
    case 4: return ompi_coll_base_reduce_intra_binary(sbuf, rbuf, count, dtype, op, root, comm,
        module, s, TUNED_MAX_REQUESTS);
    case 5: return ompi_coll_base_reduce_intra_binomial(sbuf, rbuf, count, dtype, op, root, comm,
        module, s, TUNED_MAX_REQUESTS);
    case 6: return ompi_coll_base_reduce_intra_in_order_binary(sbuf, rbuf, count, dtype, op, root,
        comm, module, s, TUNED_MAX_REQUESTS);
    case 7: return ompi_coll_base_reduce_intra_redscat_gather(sbuf, rbuf, count, dtype, op, root,
        comm, module);
    default:
        return MODULE(module)->below.coll_reduce(sbuf, rbuf, count, dtype, op, root, comm,
                                                 MODULE(module)->below.coll_reduce_module);
    }
}

int mca_coll_collsel_reduce_scatter(const void *sbuf, void *rbuf, const int *rcounts,
                                    struct ompi_datatype_t *dtype, struct ompi_op_t *op,
                                    struct ompi_communicator_t *comm,
                                    mca_coll_base_module_t *module)
{
    /* :837-842: the sum of the counts */
    uint64_t total = 0;
    int32_t i, p = MODULE(module)->comm_size;
    collsel_tree_choice c;
    for (i = 0; i < p; i++)
        total += bytes(dtype, rcounts[i]);
    c = decide_op(COLLSEL_MPI_REDUCE_SCATTER, module, total, op);
    switch (c.algorithm) {
    case 1: return ompi_coll_base_reduce_scatter_intra_nonoverlapping(sbuf, rbuf, rcounts, dtype,
        op, comm, module);
    case 2: return ompi_coll_base_reduce_scatter_intra_basic_recursivehalving(sbuf, rbuf, rcounts,
        dtype, op, comm, module);
    case 3: return ompi_coll_base_reduce_scatter_intra_ring(sbuf, rbuf, rcounts, dtype, op, comm,
        module);
    case 4: return ompi_coll_base_reduce_scatter_intra_butterfly(sbuf, rbuf, rcounts, dtype, op,
        comm, module);
    default:
        return MODULE(module)->below.coll_reduce_scatter(sbuf, rbuf, rcounts, dtype, op, comm,
            MODULE(module)->below.coll_reduce_scatter_module);
    }
}

int mca_coll_collsel_reduce_scatter_block(const void *sbuf, void *rbuf, int rcount,
                                          struct ompi_datatype_t *dtype, struct ompi_op_t *op,
                                          struct ompi_communicator_t *comm,
                                          mca_coll_base_module_t *module)
{
    collsel_tree_choice c = decide_op(COLLSEL_MPI_REDUCE_SCATTER_BLOCK, module,
                                      bytes(dtype, rcount), op);   /* :985-986 */
    switch (c.algorithm) {
    case 1: return ompi_coll_base_reduce_scatter_block_basic_linear(sbuf, rbuf, rcount, dtype, op,
        comm, module);
    case 2: return ompi_coll_base_reduce_scatter_block_intra_recursivedoubling(sbuf, rbuf, rcount,
        dtype, op, comm, module);
    case 3: return ompi_coll_base_reduce_scatter_block_intra_recursivehalving(sbuf, rbuf, rcount,
        dtype, op, comm, module);
    case 4: return ompi_coll_base_reduce_scatter_block_intra_butterfly(sbuf, rbuf, rcount, dtype,
        op, comm, module);
    default:
        return MODULE(module)->below.coll_reduce_scatter_block(sbuf, rbuf, rcount, dtype, op, comm,
            MODULE(module)->below.coll_reduce_scatter_block_module);
    }
}

int mca_coll_collsel_scan(const void *sbuf, void *rbuf, int count, struct ompi_datatype_t *dtype,
                          struct ompi_op_t *op, struct ompi_communicator_t *comm,
                          mca_coll_base_module_t *module)
{
    collsel_tree_choice c = decide(COLLSEL_MPI_SCAN, module, bytes(dtype, count));
    switch (c.algorithm) {
    case 1: return ompi_coll_base_scan_intra_linear(sbuf, rbuf, count, dtype, op, comm, module);
    case 2: return ompi_coll_base_scan_intra_recursivedoubling(sbuf, rbuf, count, dtype, op, comm,
        module);
    default:
        return MODULE(module)->below.coll_scan(sbuf, rbuf, count, dtype, op, comm,
                                               MODULE(module)->below.coll_scan_module);
    }
}

int mca_coll_collsel_scatter(const void *sbuf, int scount, struct ompi_datatype_t *sdtype,
                             void *rbuf, int rcount, struct ompi_datatype_t *rdtype, int root,
                             struct ompi_communicator_t *comm, mca_coll_base_module_t *module)
{
    /* :1484-1489: the send block at the root, the receive block elsewhere */
    int at_root = root == ompi_comm_rank(comm);
    collsel_tree_choice c = decide(COLLSEL_MPI_SCATTER, module,
                                   at_root ? bytes(sdtype, scount) : bytes(rdtype, rcount));
    switch (c.algorithm) {
    case 1: return ompi_coll_base_scatter_intra_basic_linear(sbuf, scount, sdtype, rbuf, rcount,
        rdtype, root, comm, module);
    case 2: return ompi_coll_base_scatter_intra_binomial(sbuf, scount, sdtype, rbuf, rcount, rdtype,
        root, comm, module);
    case 3: return ompi_coll_base_scatter_intra_linear_nb(sbuf, scount, sdtype, rbuf, rcount,
        rdtype, root, comm, module, TUNED_SCATTER_BLOCKING_SEND_RATIO);
    default:
        return MODULE(module)->below.coll_scatter(sbuf, scount, sdtype, rbuf, rcount, rdtype, root,
            comm, MODULE(module)->below.coll_scatter_module);
    }
}
