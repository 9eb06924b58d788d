/* --probe before every round (round_probe.h). */
#include "round_probe.h"

#include <stdlib.h>
#include <string.h>

#include "collsel_probe.h"
#include "options.h"
#include "timing.h"

static struct {
    long reps;                  /* exchanges per pair at most; 0 = --probe not given */
    double cap_us;
    collsel_probe *probe;
    double *rounds;             /* the current size's round figures, round order */
    double *scratch;            /* rank 0: sorted copy for the median */
    long n;                     /* rounds probed at the current size */
} bench_probe;

int round_probe_option(const char *key, const char *val, int rank, int *rc)
{
    char reps[32];
    const char *colon = strchr(val, ':');
    size_t len = colon ? (size_t)(colon - val) : strlen(val);
    if (strcmp(key, "--probe") != 0)
        return 0;
    *rc = 0;
    bench_probe.cap_us = COLLSEL_PROBE_DEFAULT_TIME_CAP_US;
    if (len >= sizeof reps)
        len = sizeof reps - 1;
    memcpy(reps, val, len);
    reps[len] = '\0';
    if (options_parse_long(reps, 1, COLLSEL_PROBE_MAX_REPS, &bench_probe.reps) != 0
        || (colon && options_parse_double(colon + 1, 0, COLLSEL_PROBE_MAX_TIME_CAP_US,
                                          &bench_probe.cap_us) != 0))
        *rc = options_usage_error(rank, "--probe '%s' must be REPS[:CAP_US] (REPS >= 1 "
                                  "exchanges per pair, CAP_US >= 0 microseconds)", val);
    return 1;
}

int round_probe_active(void)
{
    return bench_probe.reps != 0;
}

int round_probe_start(long max_reps, int rank)
{
    collsel_probe_config cfg;
    collsel_probe_default_config(&cfg);
    cfg.reps = (uint32_t)bench_probe.reps;
    cfg.time_cap_us = bench_probe.cap_us;
    int err = collsel_probe_init(MPI_COMM_WORLD, &cfg, &bench_probe.probe);
    if (err != COLLSEL_PROBE_OK)
        return options_usage_error(rank, "--probe: %s", collsel_probe_strerror(err));
    bench_probe.rounds = bench_alloc((size_t)max_reps * sizeof(double), rank);
    bench_probe.scratch = bench_alloc((size_t)max_reps * sizeof(double), rank);
    return 0;
}

void round_probe_run(long r)
{
    collsel_probe_result res;
    if (!bench_probe.reps)
        return;
    int err = collsel_probe_run(bench_probe.probe, &res);
    if (err != COLLSEL_PROBE_OK) {
        fprintf(stderr, "collsel_bench: probe: %s\n", collsel_probe_strerror(err));
        PMPI_Abort(MPI_COMM_WORLD, 3);
    }
    bench_probe.rounds[r] = res.latency_us;
    bench_probe.n = r + 1;
}

void round_probe_header(FILE *out)
{
    const int v = (int)collsel_probe_version();
    if (bench_probe.reps)
        fprintf(out, "#@probe=collsel_probe %d.%d.%d before every round on MPI_COMM_WORLD: "
                "%u-byte ping-pongs between rank pairs (rank 0 with rank %d), at most %ld per "
                "pair and none after %g us, mean half round trip per pair, max over pairs; "
                "probe_us = median over the size's rounds\n", v / 10000, v / 100 % 100,
                v % 100, COLLSEL_PROBE_DEFAULT_MSG_SIZE,
                (int)collsel_probe_partner(bench_probe.probe), bench_probe.reps,
                bench_probe.cap_us);
}

void round_probe_field(void)
{
    if (!bench_probe.reps)
        return;
    memcpy(bench_probe.scratch, bench_probe.rounds, (size_t)bench_probe.n * sizeof(double));
    printf(" %.6g", timing_median(bench_probe.scratch, bench_probe.n));
}

void round_probe_rounds_line(unsigned long long m)
{
    if (!bench_probe.reps)
        return;
    printf("#@probe_rounds.%llu=", m);
    for (long r = 0; r < bench_probe.n; r++)
        printf("%s%.6g", r ? "," : "", bench_probe.rounds[r]);
    printf("\n");
}

void round_probe_stop(void)
{
    if (bench_probe.probe)
        collsel_probe_free(&bench_probe.probe);
    free(bench_probe.rounds);
    free(bench_probe.scratch);
}
