/* LD_PRELOAD library: which Open MPI coll/base algorithm ran each MPI_Bcast / MPI_Reduce.
 * mca_coll_tuned.so calls the ompi_coll_base_{bcast,reduce}_intra_* functions of libmpi.so
 * through the dynamic linker, so these wrappers see every call and forward it (dlsym RTLD_NEXT).
 * Only the outermost call of a collective is reported (an algorithm's own fallback, e.g. split
 * binary tree running chain on tiny messages, is the algorithm's business), on stderr:
 *   collsel-alg <bcast|reduce> <function suffix> rank=R comm_size=P count=N
 * Build: mpicc -shared -fPIC coll_algorithm_trace.c -o libtrace.so -ldl (Open MPI 4.1).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

struct ompi_datatype_t;
struct ompi_op_t;
struct ompi_communicator_t;
typedef struct mca_coll_base_module_t mca_coll_base_module_t;

static __thread int depth;

static void report(const char *coll, const char *name, struct ompi_communicator_t *comm, int n)
{
    int rank = -1, size = -1;
    if (depth != 1)
        return;
    PMPI_Comm_rank((MPI_Comm)comm, &rank);
    PMPI_Comm_size((MPI_Comm)comm, &size);
    fprintf(stderr, "collsel-alg %s %s rank=%d comm_size=%d count=%d\n", coll, name, rank, size,
            n);
}

static void *next(const char *symbol)
{
    void *f = dlsym(RTLD_NEXT, symbol);
    if (!f) {
        fprintf(stderr, "coll_algorithm_trace: %s not found\n", symbol);
        abort();
    }
    return f;
}

#define BCAST_ARGS void *buf, int count, struct ompi_datatype_t *dt, int root, \
    struct ompi_communicator_t *comm, mca_coll_base_module_t *module
#define BCAST_PASS buf, count, dt, root, comm, module
#define REDUCE_ARGS const void *sbuf, void *rbuf, int count, struct ompi_datatype_t *dt, \
    struct ompi_op_t *op, int root, struct ompi_communicator_t *comm, \
    mca_coll_base_module_t *module
#define REDUCE_PASS sbuf, rbuf, count, dt, op, root, comm, module

/* WRAP(coll, name, (parameters), (arguments)): the parameters name `comm` and `count`. */
#define WRAP(coll, name, PARAMS, ARGS)                                                    \
    int ompi_coll_base_##coll##_intra_##name PARAMS;                                      \
    int ompi_coll_base_##coll##_intra_##name PARAMS                                       \
    {                                                                                     \
        static int (*real) PARAMS;                                                        \
        int rc;                                                                           \
        if (!real)                                                                        \
            *(void **)&real = next("ompi_coll_base_" #coll "_intra_" #name);              \
        depth++;                                                                          \
        report(#coll, #name, comm, count);                                                \
        rc = real ARGS;                                                                   \
        depth--;                                                                          \
        return rc;                                                                        \
    }

WRAP(bcast, basic_linear, (BCAST_ARGS), (BCAST_PASS))
WRAP(bcast, chain, (BCAST_ARGS, uint32_t seg, int32_t chains), (BCAST_PASS, seg, chains))
WRAP(bcast, pipeline, (BCAST_ARGS, uint32_t seg), (BCAST_PASS, seg))
WRAP(bcast, binomial, (BCAST_ARGS, uint32_t seg), (BCAST_PASS, seg))
WRAP(bcast, bintree, (BCAST_ARGS, uint32_t seg), (BCAST_PASS, seg))
WRAP(bcast, split_bintree, (BCAST_ARGS, uint32_t seg), (BCAST_PASS, seg))
WRAP(bcast, knomial, (BCAST_ARGS, uint32_t seg, int radix), (BCAST_PASS, seg, radix))
WRAP(bcast, scatter_allgather, (BCAST_ARGS, uint32_t seg), (BCAST_PASS, seg))
WRAP(bcast, scatter_allgather_ring, (BCAST_ARGS, uint32_t seg), (BCAST_PASS, seg))
WRAP(reduce, basic_linear, (REDUCE_ARGS), (REDUCE_PASS))
WRAP(reduce, chain, (REDUCE_ARGS, uint32_t seg, int fanout, int reqs),
     (REDUCE_PASS, seg, fanout, reqs))
WRAP(reduce, pipeline, (REDUCE_ARGS, uint32_t seg, int reqs), (REDUCE_PASS, seg, reqs))
WRAP(reduce, binary, (REDUCE_ARGS, uint32_t seg, int reqs), (REDUCE_PASS, seg, reqs))
WRAP(reduce, binomial, (REDUCE_ARGS, uint32_t seg, int reqs), (REDUCE_PASS, seg, reqs))
WRAP(reduce, in_order_binary, (REDUCE_ARGS, uint32_t seg, int reqs), (REDUCE_PASS, seg, reqs))
WRAP(reduce, redscat_gather, (REDUCE_ARGS), (REDUCE_PASS))
