/* collsel_probe: a short measurement of the network's current state, taken inside an MPI job
 * just before a collective, to be the third axis of a load-aware decision tree (probe -> query3).
 *
 * What it measures (HP2P-like, after Salimi Beni et al., "Algorithm Selection of MPI Collectives
 * Considering System Utilization"): the ranks of a communicator form pairs that cross nodes
 * whenever the communicator spans several, and all pairs at once exchange short ping-pongs of
 * msg_size bytes (4 KB by default). Each pair's figure is the mean of its half round trips
 * (HP2P's figure: a preemption or a queue on the way counts, as it would in a collective)
 * but the first, which waits for a partner still busy elsewhere (ranks leave a collective at
 * different times) and so synchronises the pair (counted only when it is the only one); the
 * probe's figure is the maximum over pairs (or their median), in microseconds, and every rank
 * gets the same value. What it sees is only what is visible at run time (the latency of
 * this job's own links under whatever else runs), never a nominal load level.
 *
 * ------------------------------------------------------------------------------------------
 * API, version 1.0.0 (COLLSEL_PROBE_VERSION_MAJOR/MINOR/PATCH).
 *
 *   collsel_probe_default_config(&cfg);                  4096 bytes, 8 reps, 200 us, max
 *   collsel_probe_init(comm, &cfg, &probe);              collective over comm, allocates
 *   collsel_probe_run(probe, &result);                   collective, allocates nothing
 *   collsel_probe_free(&probe);                          collective
 *
 * Collective calls. Every rank of the communicator calls init, run and free in the same order
 * with the same configuration (init checks the configuration is the same everywhere and fails
 * on every rank otherwise). A local argument error (NULL pointer, value out of range) is found
 * before any communication and returned at once: a rank that returns early while the others
 * communicate leaves them waiting, as with any MPI collective.
 *
 * Pairing (computed once, at init). Ranks are ordered by (index on their node, node), nodes in
 * the order of their lowest rank, and consecutive ranks of that order are paired: with ranks
 * spread over several nodes, a pair's ranks are on different nodes unless one node holds more
 * than half of the ranks. The first rank of a pair is its initiator; with an odd number of
 * ranks the last one has no partner and only takes part in the final reduction.
 *
 * Time bound. A pair makes at most cfg.reps ping-pongs and starts none after cfg.time_cap_us
 * microseconds (the initiator decides and tells its partner inside the last ping, so no message
 * is added). A call therefore takes at most time_cap_us plus one round trip, plus a reduction
 * to rank 0 and a broadcast of the result (so every rank holds rank 0's bytes: decisions taken
 * on the value agree). time_cap_us = 0 makes exactly one ping-pong per pair.
 *
 * Memory and threads. init allocates the handle, two message buffers, the per-pair times and
 * (rank 0, statistic median) one double per rank, and duplicates the communicator (the probe's
 * messages never match the application's receives; errors on it return instead of aborting).
 * run allocates nothing. A handle is used by one thread at a time.
 *
 * PMPI. The probe makes every MPI call through PMPI_*: a library interposed on MPI_* (libcollsel,
 * a profiler, the sweep's own checks that only measured calls reach MPI_*) sees none of its
 * traffic, which is a measurement, not the program's communication.
 *
 * Errors. Functions return a collsel_probe_error: COLLSEL_PROBE_OK (0) on success, a positive
 * code otherwise; collsel_probe_strerror() takes any int and returns one line, never NULL
 * ("unknown collsel_probe error" for values that are no code).
 * ------------------------------------------------------------------------------------------
 */
#ifndef COLLSEL_PROBE_H
#define COLLSEL_PROBE_H

#include <mpi.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define COLLSEL_PROBE_VERSION_MAJOR 1
#define COLLSEL_PROBE_VERSION_MINOR 0
#define COLLSEL_PROBE_VERSION_PATCH 0
#define COLLSEL_PROBE_VERSION                                                                  \
    (COLLSEL_PROBE_VERSION_MAJOR * 10000 + COLLSEL_PROBE_VERSION_MINOR * 100                  \
     + COLLSEL_PROBE_VERSION_PATCH)

#define COLLSEL_PROBE_DEFAULT_MSG_SIZE 4096u
#define COLLSEL_PROBE_DEFAULT_REPS 8u
#define COLLSEL_PROBE_DEFAULT_TIME_CAP_US 200.0
#define COLLSEL_PROBE_MAX_MSG_SIZE (1u << 24)     /* 16 MiB */
#define COLLSEL_PROBE_MAX_REPS 100000u
#define COLLSEL_PROBE_MAX_TIME_CAP_US 1e9         /* 1000 s */

typedef enum collsel_probe_error {
    COLLSEL_PROBE_OK = 0,
    COLLSEL_PROBE_EINVAL,   /* NULL argument, a value out of range, or ranks configured apart */
    COLLSEL_PROBE_ECOMM,    /* MPI_COMM_NULL, an inter-communicator, or fewer than 2 ranks */
    COLLSEL_PROBE_ENOMEM,   /* out of memory (init only) */
    COLLSEL_PROBE_EMPI,     /* an MPI call failed */
    COLLSEL_PROBE_NERRORS   /* number of codes above (not an error code) */
} collsel_probe_error;

/* How the pairs' figures become the probe's. */
typedef enum collsel_probe_statistic {
    COLLSEL_PROBE_MAX = 0,      /* the slowest pair: a collective waits for its slowest link */
    COLLSEL_PROBE_MEDIAN = 1    /* the median pair (the mean of the middle two when even) */
} collsel_probe_statistic;

typedef struct collsel_probe_config {
    uint32_t msg_size;      /* bytes of each ping and pong, 1..COLLSEL_PROBE_MAX_MSG_SIZE */
    uint32_t reps;          /* ping-pongs per pair at most, 1..COLLSEL_PROBE_MAX_REPS */
    double time_cap_us;     /* no ping-pong starts after this long, 0..MAX_TIME_CAP_US */
    int32_t statistic;      /* a collsel_probe_statistic */
} collsel_probe_config;

typedef struct collsel_probe_result {
    double latency_us;      /* the probe's figure: the same on every rank */
    double elapsed_us;      /* this rank's wall time inside collsel_probe_run */
    uint32_t reps;          /* ping-pongs this rank's pair made (0: no partner) */
    int32_t partner;        /* the partner's rank in the communicator, -1 for none */
} collsel_probe_result;

/* A probe bound to one communicator (opaque). */
typedef struct collsel_probe collsel_probe;

/* The defaults above. Does nothing on NULL. */
void collsel_probe_default_config(collsel_probe_config *cfg);

/* Collective over comm: checks the configuration (the same on every rank), duplicates comm,
 * computes the pairs, allocates, and makes one warm-up run (connections are set up then, not in
 * the first measured call). *probe is NULL after a failure. */
collsel_probe_error collsel_probe_init(MPI_Comm comm, const collsel_probe_config *cfg,
                                       collsel_probe **probe);

/* Collective: one probe; result->latency_us is the same on every rank. */
collsel_probe_error collsel_probe_run(collsel_probe *probe, collsel_probe_result *result);

/* Collective: frees the duplicated communicator and the memory; sets *probe to NULL. A NULL
 * *probe is no error (nothing to do, no communication). */
collsel_probe_error collsel_probe_free(collsel_probe **probe);

/* The probe's communicator size and this rank's partner (-1: none); 0 and -1 on NULL. */
int32_t collsel_probe_size(const collsel_probe *probe);
int32_t collsel_probe_partner(const collsel_probe *probe);

const char *collsel_probe_strerror(int error);

/* The linked library's COLLSEL_PROBE_VERSION. */
int32_t collsel_probe_version(void);

#ifdef __cplusplus
}
#endif

#endif /* COLLSEL_PROBE_H */
