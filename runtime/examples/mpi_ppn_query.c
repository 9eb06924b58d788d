/* A tree with the third axis ppn under a real MPI: the processes per node of MPI_COMM_WORLD,
 * found once (as an MPI library would once per communicator), then the decision for each message
 * size.   mpirun -np P mpi_ppn_query TREE.bin M [M ...]
 * Nodes are the shared-memory domains of MPI_Comm_split_type(MPI_COMM_TYPE_SHARED): their count
 * is the number of node leaders (local rank 0), and ppn = size / nodes (rounded down when the
 * nodes hold unequal numbers of ranks). Every rank loads the tree and decides; the ranks must
 * agree (each would force its answer: different algorithms on different ranks would hang the
 * collective). Rank 0 prints
 *   layout size=P nodes=N ppn=Z
 *   decide P M Z: ALGORITHM SEGSIZE FANINOUT          (one line per M, as `collsel query` prints)
 * A 2-axis tree is asked without ppn. Exit 0, or 1 with a message on stderr. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <mpi.h>
#include "collsel_tree.h"

/* Processes per node of `comm`: its size over its number of shared-memory nodes. */
static int processes_per_node(MPI_Comm comm, int *nodes)
{
    MPI_Comm node;
    int rank, size, local_rank, leader;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node);
    MPI_Comm_rank(node, &local_rank);
    MPI_Comm_free(&node);
    leader = local_rank == 0;
    MPI_Allreduce(&leader, nodes, 1, MPI_INT, MPI_SUM, comm);
    return size / *nodes;
}

static int parse_size(const char *text, uint64_t *m)
{
    char *end;
    unsigned long long value;
    errno = 0;
    value = strtoull(text, &end, 10);
    if (errno || *end || text[0] == '\0' || text[0] == '-')
        return 0;
    *m = (uint64_t)value;
    return 1;
}

int main(int argc, char **argv)
{
    collsel_tree *tree = NULL;
    collsel_tree_error err;
    int rank, size, nodes, ppn, a, failed, any_failed;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    ppn = processes_per_node(MPI_COMM_WORLD, &nodes);
    failed = argc < 3;
    if (failed && rank == 0)
        fprintf(stderr, "usage: %s TREE.bin MSG_SIZE [MSG_SIZE ...]\n", argv[0]);
    err = failed ? COLLSEL_TREE_OK : collsel_tree_load_file(argv[1], &tree);
    if (err) {
        fprintf(stderr, "rank %d: %s: %s\n", rank, argv[1], collsel_tree_strerror(err));
        failed = 1;
    }
    /* every rank goes on, or none: the loop below is collective */
    MPI_Allreduce(&failed, &any_failed, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (rank == 0 && !any_failed)
        printf("layout size=%d nodes=%d ppn=%d\n", size, nodes, ppn);
    for (a = 2; a < argc && !any_failed; a++) {
        collsel_tree_choice c = {0, 0, 0};
        uint64_t m = 0;
        int mine[4], low[4], high[4], k;
        if (!parse_size(argv[a], &m)) {
            if (rank == 0)
                fprintf(stderr, "%s: MSG_SIZE '%s' is not an integer 0..2^64-1\n", argv[0],
                        argv[a]);
            any_failed = 1;
            break;
        }
        err = collsel_tree_axes(tree) == 3 ? collsel_tree_decide3(tree, size, m, ppn, &c)
                                           : collsel_tree_decide(tree, size, m, &c);
        if (err)
            fprintf(stderr, "rank %d: m=%" PRIu64 ": %s\n", rank, m, collsel_tree_strerror(err));
        mine[0] = c.algorithm;
        mine[1] = c.segsize;
        mine[2] = c.faninout;
        mine[3] = err != COLLSEL_TREE_OK;
        MPI_Allreduce(mine, low, 4, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
        MPI_Allreduce(mine, high, 4, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
        for (k = 0; k < 4; k++)
            any_failed |= low[k] != high[k] || high[3];
        if (any_failed && rank == 0)
            fprintf(stderr, "m=%" PRIu64 ": %s\n", m, high[3] ? "no decision on some rank"
                                                              : "the ranks decide differently");
        else if (rank == 0)
            printf("decide %d %" PRIu64 " %d: %d %d %d\n", size, m, ppn, c.algorithm,
                   c.segsize, c.faninout);
    }
    collsel_tree_free(tree);
    MPI_Finalize();
    return any_failed ? 1 : 0;
}
