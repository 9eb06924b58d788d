/* Driver of the collsel_probe library for tests/integration/test_probe.py (and the cost figures
 * in docs/measurements.md): every rank's view of every call, printed by rank 0.
 *
 *   probe_check calls N [REPS CAP_US max|median]
 *       N probes on MPI_COMM_WORLD; per call one line
 *         call I L0 L1 ... E0 E1 ... R0 R1 ...
 *       with every rank's latency_us in C99 hex (%a: bitwise), elapsed_us and reps; then
 *         partners P0 P1 ...
 *   probe_check split N
 *       the same on halves of MPI_COMM_WORLD (even and odd ranks) and on a duplicate of it,
 *       one line per communicator and call: comm NAME call I L0 L1 ... (its ranks' values)
 *   probe_check errors
 *       one line per error case: case NAME CODE (every rank's codes must agree; rank 0 prints)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "collsel_probe.h"

static int rank_, size_;

static void fail(const char *what, int err)
{
    fprintf(stderr, "probe_check: rank %d: %s: %s\n", rank_, what, collsel_probe_strerror(err));
    MPI_Abort(MPI_COMM_WORLD, 1);
}

/* N calls on comm; rank 0 of MPI_COMM_WORLD prints what every rank of comm saw. */
static void calls(MPI_Comm comm, const char *name, long n, const collsel_probe_config *cfg)
{
    collsel_probe *probe = NULL;
    int err = collsel_probe_init(comm, cfg, &probe);
    if (err)
        fail("init", err);
    int size = 0, rank = 0;
    MPI_Comm_size(comm, &size);
    MPI_Comm_rank(comm, &rank);
    double *lat = malloc((size_t)size * sizeof *lat), *ela = malloc((size_t)size * sizeof *ela);
    unsigned *reps = malloc((size_t)size * sizeof *reps);
    int *partner = malloc((size_t)size * sizeof *partner);
    if (!lat || !ela || !reps || !partner)
        fail("malloc", 0);
    for (long i = 0; i < n; i++) {
        collsel_probe_result r;
        if ((err = collsel_probe_run(probe, &r)) != 0)
            fail("run", err);
        unsigned nreps = r.reps;
        int p = r.partner;
        MPI_Gather(&r.latency_us, 1, MPI_DOUBLE, lat, 1, MPI_DOUBLE, 0, comm);
        MPI_Gather(&r.elapsed_us, 1, MPI_DOUBLE, ela, 1, MPI_DOUBLE, 0, comm);
        MPI_Gather(&nreps, 1, MPI_UNSIGNED, reps, 1, MPI_UNSIGNED, 0, comm);
        MPI_Gather(&p, 1, MPI_INT, partner, 1, MPI_INT, 0, comm);
        if (rank == 0) {
            printf("%s%s%scall %ld", name ? "comm " : "", name ? name : "", name ? " " : "", i);
            for (int k = 0; k < size; k++)
                printf(" %a", lat[k]);
            for (int k = 0; k < size && !name; k++)
                printf(" %.3f", ela[k]);
            for (int k = 0; k < size && !name; k++)
                printf(" %u", reps[k]);
            printf("\n");
        }
    }
    if (rank == 0 && !name) {
        printf("partners");
        for (int k = 0; k < size; k++)
            printf(" %d", partner[k]);
        printf("\n");
    }
    fflush(stdout);
    if ((err = collsel_probe_free(&probe)) != 0 || probe != NULL)
        fail("free", err);
    free(lat);
    free(ela);
    free(reps);
    free(partner);
}

/* Rank 0 prints `case NAME CODE` once every rank's code is known to be the same. */
static void report(const char *name, int code)
{
    int low = 0, high = 0;
    MPI_Allreduce(&code, &low, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    MPI_Allreduce(&code, &high, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (rank_ == 0)
        printf("case %s %d%s\n", name, code, low == high ? "" : " disagree");
}

static void errors(void)
{
    collsel_probe_config cfg;
    collsel_probe *probe = (collsel_probe *)&cfg;   /* must be set to NULL on failure */
    collsel_probe_default_config(&cfg);
    report("null-probe-pointer", collsel_probe_init(MPI_COMM_WORLD, &cfg, NULL));
    report("null-config", collsel_probe_init(MPI_COMM_WORLD, NULL, &probe));
    report("null-config-clears", probe == NULL ? 0 : 99);
    cfg.msg_size = 0;
    report("zero-msg-size", collsel_probe_init(MPI_COMM_WORLD, &cfg, &probe));
    collsel_probe_default_config(&cfg);
    cfg.reps = 0;
    report("zero-reps", collsel_probe_init(MPI_COMM_WORLD, &cfg, &probe));
    collsel_probe_default_config(&cfg);
    cfg.time_cap_us = -1;
    report("negative-cap", collsel_probe_init(MPI_COMM_WORLD, &cfg, &probe));
    collsel_probe_default_config(&cfg);
    cfg.statistic = 7;
    report("bad-statistic", collsel_probe_init(MPI_COMM_WORLD, &cfg, &probe));
    collsel_probe_default_config(&cfg);
    report("comm-null", collsel_probe_init(MPI_COMM_NULL, &cfg, &probe));
    report("comm-self", collsel_probe_init(MPI_COMM_SELF, &cfg, &probe));
    /* rank 0 asks for other reps than the rest: every rank must refuse, nobody hangs */
    cfg.reps = rank_ == 0 ? 3 : 4;
    report("ranks-configured-apart", collsel_probe_init(MPI_COMM_WORLD, &cfg, &probe));
    report("apart-clears", probe == NULL ? 0 : 99);
    collsel_probe_default_config(&cfg);
    report("run-null", collsel_probe_run(NULL, NULL));
    report("free-null-handle", collsel_probe_free(&probe));
    report("free-null", collsel_probe_free(NULL));
    report("strerror-unknown", strcmp(collsel_probe_strerror(COLLSEL_PROBE_NERRORS),
                                      "unknown collsel_probe error") == 0
                               && strcmp(collsel_probe_strerror(-1),
                                         "unknown collsel_probe error") == 0 ? 0 : 99);
    report("version", collsel_probe_version() == COLLSEL_PROBE_VERSION ? 0 : 99);
    if (rank_ == 0) {
        for (int e = 0; e < COLLSEL_PROBE_NERRORS; e++)
            printf("error %d %s\n", e, collsel_probe_strerror(e));
    }
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
    MPI_Comm_size(MPI_COMM_WORLD, &size_);
    collsel_probe_config cfg;
    collsel_probe_default_config(&cfg);
    const char *mode = argc > 1 ? argv[1] : "";
    long n = argc > 2 ? strtol(argv[2], NULL, 10) : 0;
    if (strcmp(mode, "calls") == 0 && argc == 6) {
        cfg.reps = (uint32_t)strtoul(argv[3], NULL, 10);
        cfg.time_cap_us = strtod(argv[4], NULL);
        cfg.statistic = strcmp(argv[5], "median") == 0 ? COLLSEL_PROBE_MEDIAN : COLLSEL_PROBE_MAX;
    }
    if (strcmp(mode, "calls") == 0 && (argc == 3 || argc == 6)) {
        calls(MPI_COMM_WORLD, NULL, n, &cfg);
    } else if (strcmp(mode, "split") == 0 && argc == 3) {
        MPI_Comm half, dup;
        MPI_Comm_split(MPI_COMM_WORLD, rank_ % 2, rank_, &half);
        MPI_Comm_dup(MPI_COMM_WORLD, &dup);
        char name[16];
        snprintf(name, sizeof name, "half%d", rank_ % 2);
        /* each communicator's rank 0 prints its lines */
        calls(half, name, n, &cfg);
        calls(dup, "dup", n, &cfg);
        MPI_Comm_free(&half);
        MPI_Comm_free(&dup);
    } else if (strcmp(mode, "errors") == 0) {
        errors();
    } else {
        if (rank_ == 0)
            fprintf(stderr, "usage: probe_check calls N [REPS CAP_US max|median] | split N | "
                            "errors\n");
        MPI_Finalize();
        return 2;
    }
    fflush(stdout);
    MPI_Finalize();
    return 0;
}
