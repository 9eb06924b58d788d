/* coll_probe: an LD_PRELOAD library that records which Open MPI 4.1 base algorithm each
 * communicator runs (tests/forcing/test_forcing.py).
 *
 * mca_coll_tuned.so calls the ompi_coll_base_{bcast,reduce}_intra_* functions of libmpi.so.40
 * through the dynamic linker, so definitions here take their place; each counts the call for
 * its communicator and forwards to the real function (dlsym(RTLD_NEXT)). Communicators are
 * named by the order in which the program dup'ed them (MPI_Comm_dup is interposed the same
 * way): collsel_bench dups one communicator per --methods entry, in that order; any other
 * communicator is -1. At exit each process writes "comm_index function calls" lines to
 * $COLL_PROBE_DIR/probe.<pid>.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAX_COMMS 512
#define MAX_ROWS 4096

static void *dup_comms[MAX_COMMS];
static int ndups;
static struct row { int comm; const char *fn; long calls; } rows[MAX_ROWS];
static int nrows;

static void *forward(const char *name)
{
    void *f = dlsym(RTLD_NEXT, name);
    if (!f) {
        fprintf(stderr, "coll_probe: %s not found\n", name);
        abort();
    }
    return f;
}

static void record(const char *fn, void *comm)
{
    int index = -1;
    for (int i = 0; i < ndups; i++)
        if (dup_comms[i] == comm)
            index = i;
    for (int r = 0; r < nrows; r++)
        if (rows[r].comm == index && strcmp(rows[r].fn, fn) == 0) {
            rows[r].calls++;
            return;
        }
    if (nrows < MAX_ROWS)
        rows[nrows++] = (struct row){index, fn, 1};
}

int MPI_Comm_dup(MPI_Comm comm, MPI_Comm *newcomm)
{
    static int (*next)(MPI_Comm, MPI_Comm *);
    if (!next)
        *(void **)&next = forward("MPI_Comm_dup");
    int rc = next(comm, newcomm);
    if (rc == MPI_SUCCESS && ndups < MAX_COMMS)
        dup_comms[ndups++] = (void *)*newcomm;
    return rc;
}

/* The base functions take (buffer(s), count, datatype, [op,] root, comm, module, extras...);
 * all pointers are passed as void *, which has the same calling convention. */
#define BCAST_ARGS void *buf, int count, void *dtype, int root, void *comm, void *module
#define BCAST_PASS buf, count, dtype, root, comm, module
#define REDUCE_ARGS const void *sbuf, void *rbuf, int count, void *dtype, void *op, int root, \
                    void *comm, void *module
#define REDUCE_PASS sbuf, rbuf, count, dtype, op, root, comm, module

#define PROBE(name, params, args)                            \
    int name params                                          \
    {                                                        \
        static int (*next) params;                           \
        if (!next)                                           \
            *(void **)&next = forward(#name);                \
        record(#name, comm);                                 \
        return next args;                                    \
    }

PROBE(ompi_coll_base_bcast_intra_basic_linear, (BCAST_ARGS), (BCAST_PASS))
PROBE(ompi_coll_base_bcast_intra_chain, (BCAST_ARGS, uint32_t seg, int32_t chains),
      (BCAST_PASS, seg, chains))
PROBE(ompi_coll_base_bcast_intra_pipeline, (BCAST_ARGS, uint32_t seg), (BCAST_PASS, seg))
PROBE(ompi_coll_base_bcast_intra_split_bintree, (BCAST_ARGS, uint32_t seg), (BCAST_PASS, seg))
PROBE(ompi_coll_base_bcast_intra_bintree, (BCAST_ARGS, uint32_t seg), (BCAST_PASS, seg))
PROBE(ompi_coll_base_bcast_intra_binomial, (BCAST_ARGS, uint32_t seg), (BCAST_PASS, seg))
PROBE(ompi_coll_base_bcast_intra_knomial, (BCAST_ARGS, uint32_t seg, int radix),
      (BCAST_PASS, seg, radix))
PROBE(ompi_coll_base_bcast_intra_scatter_allgather, (BCAST_ARGS, uint32_t seg),
      (BCAST_PASS, seg))
PROBE(ompi_coll_base_bcast_intra_scatter_allgather_ring, (BCAST_ARGS, uint32_t seg),
      (BCAST_PASS, seg))

PROBE(ompi_coll_base_reduce_intra_basic_linear, (REDUCE_ARGS), (REDUCE_PASS))
PROBE(ompi_coll_base_reduce_intra_chain, (REDUCE_ARGS, uint32_t seg, int fanout, int maxreq),
      (REDUCE_PASS, seg, fanout, maxreq))
PROBE(ompi_coll_base_reduce_intra_pipeline, (REDUCE_ARGS, uint32_t seg, int maxreq),
      (REDUCE_PASS, seg, maxreq))
PROBE(ompi_coll_base_reduce_intra_binary, (REDUCE_ARGS, uint32_t seg, int maxreq),
      (REDUCE_PASS, seg, maxreq))
PROBE(ompi_coll_base_reduce_intra_binomial, (REDUCE_ARGS, uint32_t seg, int maxreq),
      (REDUCE_PASS, seg, maxreq))
PROBE(ompi_coll_base_reduce_intra_in_order_binary, (REDUCE_ARGS, uint32_t seg, int maxreq),
      (REDUCE_PASS, seg, maxreq))
PROBE(ompi_coll_base_reduce_intra_redscat_gather, (REDUCE_ARGS), (REDUCE_PASS))

__attribute__((destructor)) static void write_counts(void)
{
    const char *dir = getenv("COLL_PROBE_DIR");
    char path[4096];
    if (!dir)
        return;
    snprintf(path, sizeof path, "%s/probe.%ld", dir, (long)getpid());
    FILE *f = fopen(path, "w");
    if (!f)
        return;
    for (int r = 0; r < nrows; r++)
        fprintf(f, "%d %s %ld\n", rows[r].comm, rows[r].fn, rows[r].calls);
    fclose(f);
}
