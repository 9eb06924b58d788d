/* Which MPICH 4.0 algorithm ran each MPI_Bcast / MPI_Reduce, and where MPICH thinks the ranks
 * are. Debian's libmpich.so hides the MPIR_* algorithm functions (no LD_PRELOAD), so a program is
 * linked against libmpich.a with `-Wl,--wrap=MPIR_Bcast_intra_binomial,...`: every call the
 * selection code (MPIR_Bcast_allcomm_auto in another object file) makes to an algorithm reaches
 * __wrap_<algorithm> here, which reports it and calls __real_<algorithm>. Only the outermost
 * algorithm of a user's MPI_Bcast / MPI_Reduce is reported (an algorithm's own inner calls, e.g.
 * smp's node-level bcast, are the algorithm's business), on stderr:
 *   collsel-alg <bcast|reduce> <algorithm> rank=R comm_size=P count=N
 * After MPI_Init every rank reports MPICH's node layout of MPI_COMM_WORLD (the node map behind
 * MPI_Comm_split_type SHARED and CSEL's comm_avg_ppn) and its host name:
 *   collsel-layout rank=R size=P nodes=N host=H
 * Build: see tests/integration/test_cluster_mpich_ppn.py (TRACED, link_traced).
 */
#include <mpi.h>
#include <stdio.h>

static int in_user_call, depth, user_size;

int MPI_Init(int *argc, char ***argv)
{
    int rc = PMPI_Init(argc, argv), rank, size, local_rank, leader, nodes, length;
    char host[MPI_MAX_PROCESSOR_NAME] = {0};
    MPI_Comm node;
    if (rc != MPI_SUCCESS)
        return rc;
    PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
    PMPI_Comm_size(MPI_COMM_WORLD, &size);
    PMPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node);
    PMPI_Comm_rank(node, &local_rank);
    leader = local_rank == 0;
    PMPI_Allreduce(&leader, &nodes, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    PMPI_Comm_free(&node);
    PMPI_Get_processor_name(host, &length);
    fprintf(stderr, "collsel-layout rank=%d size=%d nodes=%d host=%s\n", rank, size, nodes,
            host);
    return rc;
}

int MPI_Bcast(void *buf, int count, MPI_Datatype dt, int root, MPI_Comm comm)
{
    int rc;
    PMPI_Comm_size(comm, &user_size);
    in_user_call = 1;
    rc = PMPI_Bcast(buf, count, dt, root, comm);
    in_user_call = 0;
    return rc;
}

int MPI_Reduce(const void *sbuf, void *rbuf, int count, MPI_Datatype dt, MPI_Op op, int root,
               MPI_Comm comm)
{
    int rc;
    PMPI_Comm_size(comm, &user_size);
    in_user_call = 1;
    rc = PMPI_Reduce(sbuf, rbuf, count, dt, op, root, comm);
    in_user_call = 0;
    return rc;
}

static void report(const char *coll, const char *name, MPI_Aint count)
{
    int rank;
    if (!in_user_call || depth != 1)
        return;
    PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
    fprintf(stderr, "collsel-alg %s %s rank=%d comm_size=%d count=%ld\n", coll, name, rank,
            user_size, (long)count);
}

/* MPIR_Comm * and MPIR_Errflag_t * are opaque here: passed through unchanged. */
#define BCAST_PARAMS void *buf, MPI_Aint count, MPI_Datatype dt, int root, void *comm, void *err
#define BCAST_ARGS buf, count, dt, root, comm, err
#define REDUCE_PARAMS const void *sbuf, void *rbuf, MPI_Aint count, MPI_Datatype dt, MPI_Op op, \
    int root, void *comm, void *err
#define REDUCE_ARGS sbuf, rbuf, count, dt, op, root, comm, err

#define WRAP(coll, function, name, PARAMS, ARGS)                                              \
    int __real_##function(PARAMS);                                                            \
    int __wrap_##function(PARAMS);                                                            \
    int __wrap_##function(PARAMS)                                                             \
    {                                                                                         \
        int rc;                                                                               \
        depth++;                                                                              \
        report(#coll, #name, count);                                                          \
        rc = __real_##function(ARGS);                                                         \
        depth--;                                                                              \
        return rc;                                                                            \
    }

WRAP(bcast, MPIR_Bcast_intra_binomial, binomial, BCAST_PARAMS, BCAST_ARGS)
WRAP(bcast, MPIR_Bcast_intra_scatter_recursive_doubling_allgather,
     scatter_recursive_doubling_allgather, BCAST_PARAMS, BCAST_ARGS)
WRAP(bcast, MPIR_Bcast_intra_scatter_ring_allgather, scatter_ring_allgather, BCAST_PARAMS,
     BCAST_ARGS)
WRAP(bcast, MPIR_Bcast_intra_smp, smp, BCAST_PARAMS, BCAST_ARGS)
WRAP(bcast, MPIR_Bcast_allcomm_nb, nb, BCAST_PARAMS, BCAST_ARGS)
WRAP(reduce, MPIR_Reduce_intra_binomial, binomial, REDUCE_PARAMS, REDUCE_ARGS)
WRAP(reduce, MPIR_Reduce_intra_reduce_scatter_gather, reduce_scatter_gather, REDUCE_PARAMS,
     REDUCE_ARGS)
WRAP(reduce, MPIR_Reduce_intra_smp, smp, REDUCE_PARAMS, REDUCE_ARGS)
WRAP(reduce, MPIR_Reduce_allcomm_nb, nb, REDUCE_PARAMS, REDUCE_ARGS)
