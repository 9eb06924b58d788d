/* A tree with the third axis probe_us under a real MPI: the documented run-time sequence
 * probe -> query3 (issue 19). The probe (runtime/collsel_probe.c) measures the network's state
 * now; its latency, rounded down to whole microseconds (the axis of `collsel build --z
 * probe_us`), is the z of collsel_tree_decide3.
 *
 *   mpirun -np P mpi_probe_query TREE.bin COST_CALLS M [M ...]
 *
 * First COST_CALLS probes on MPI_COMM_WORLD measure what a probe costs (each call's slowest
 * rank's elapsed time); then, for each M, one probe and the decision. The probe's figure is the
 * same on every rank, so every rank decides alike (checked: different algorithms on different
 * ranks would hang the collective). Rank 0 prints
 *   probe_cost calls=N median_us=X max_us=Y
 *   decide P M Z: ALGORITHM SEGSIZE FANINOUT   probe_us=L  (as `collsel query` prints P M Z)
 * Exit 0, or 1 with a message on stderr. */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <mpi.h>
#include "collsel_probe.h"
#include "collsel_tree.h"

static int parse_u64(const char *text, uint64_t *m)
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

static int by_value(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
    collsel_tree *tree = NULL;
    collsel_probe *probe = NULL;
    collsel_probe_config cfg;
    collsel_probe_result res;
    uint64_t calls = 0;
    int rank, size, a, failed, any_failed, perr;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    failed = argc < 4 || !parse_u64(argv[2], &calls) || calls < 1 || calls > 1000000;
    if (failed && rank == 0)
        fprintf(stderr, "usage: %s TREE.bin COST_CALLS(1..1000000) MSG_SIZE [MSG_SIZE ...]\n",
                argv[0]);
    if (!failed) {
        collsel_tree_error err = collsel_tree_load_file(argv[1], &tree);
        if (!err && collsel_tree_axes(tree) != 3)
            err = COLLSEL_TREE_EDIMS;
        if (err) {
            fprintf(stderr, "rank %d: %s: %s\n", rank, argv[1], collsel_tree_strerror(err));
            failed = 1;
        }
    }
    MPI_Allreduce(&failed, &any_failed, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    collsel_probe_default_config(&cfg);
    /* collective: every rank calls it (a failure is the same on every rank) */
    perr = any_failed ? 0 : collsel_probe_init(MPI_COMM_WORLD, &cfg, &probe);
    if (perr) {
        if (rank == 0)
            fprintf(stderr, "probe init: %s\n", collsel_probe_strerror(perr));
        any_failed = 1;
    }
    if (!any_failed) {
        double *cost = malloc((size_t)calls * sizeof *cost);
        if (!cost) {
            fprintf(stderr, "rank %d: out of memory\n", rank);
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
        for (uint64_t i = 0; i < calls; i++) {
            double slowest;
            if ((perr = collsel_probe_run(probe, &res)) != 0) {
                fprintf(stderr, "rank %d: probe: %s\n", rank, collsel_probe_strerror(perr));
                MPI_Abort(MPI_COMM_WORLD, 1);
            }
            MPI_Reduce(&res.elapsed_us, &slowest, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
            cost[i] = slowest;
        }
        if (rank == 0) {
            qsort(cost, (size_t)calls, sizeof *cost, by_value);
            printf("probe_cost calls=%" PRIu64 " median_us=%.3f max_us=%.3f\n", calls,
                   calls % 2 ? cost[calls / 2] : (cost[calls / 2 - 1] + cost[calls / 2]) / 2,
                   cost[calls - 1]);
        }
        free(cost);
    }
    for (a = 3; a < argc && !any_failed; a++) {
        collsel_tree_choice c = {0, 0, 0};
        collsel_tree_error err;
        uint64_t m = 0;
        int64_t z;
        int mine[4], low[4], high[4], k;
        if (!parse_u64(argv[a], &m)) {
            if (rank == 0)
                fprintf(stderr, "%s: MSG_SIZE '%s' is not an integer 0..2^64-1\n", argv[0],
                        argv[a]);
            any_failed = 1;
            break;
        }
        /* probe -> query3: what the network looks like now picks the method */
        if ((perr = collsel_probe_run(probe, &res)) != 0) {
            fprintf(stderr, "rank %d: probe: %s\n", rank, collsel_probe_strerror(perr));
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
        z = (int64_t)floor(res.latency_us);
        err = collsel_tree_decide3(tree, size, m, z, &c);
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
            printf("decide %d %" PRIu64 " %" PRId64 ": %d %d %d   probe_us=%.3f\n", size, m, z,
                   c.algorithm, c.segsize, c.faninout, res.latency_us);
    }
    collsel_probe_free(&probe);
    collsel_tree_free(tree);
    MPI_Finalize();
    return any_failed ? 1 : 0;
}
