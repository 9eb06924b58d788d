/* collsel_probe: concurrent short ping-pongs between rank pairs (API in collsel_probe.h).
 *
 * This file is also compiled into the sweep's benchmark (its package folder bench/ holds links
 * to it and to the header; bench/round_probe.c runs it), so the sweep's probe_us and the
 * run-time probe are one implementation. */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif
#include "collsel_probe.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#define PROBE_TAG 7351
#define PING_LAST 1     /* first byte of a ping: 1 = the partner replies and stops */
#define PROBE_NONE (-1.0)       /* a rank without a pair reports this (below every figure) */
#define PROBE_FAILED 1e300      /* a pair whose MPI calls failed (above every figure) */

struct collsel_probe {
    MPI_Comm comm;              /* our duplicate of the caller's communicator */
    int32_t rank, size;
    int32_t partner;            /* -1: none (odd size, last in the pairing order) */
    int initiator;              /* this rank times its pair */
    collsel_probe_config cfg;
    unsigned char *ping, *pong; /* msg_size bytes each */
    double *times;              /* cfg.reps half round trips (initiators) */
    double *gathered;           /* rank 0, statistic median: one figure per rank */
};

static double probe_now_us(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return 1e6 * (double)t.tv_sec + 1e-3 * (double)t.tv_nsec;
}

static int probe_cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Median of v[0..n), n >= 1; sorts v in place (qsort: no allocation). */
static double probe_median(double *v, size_t n)
{
    qsort(v, n, sizeof *v, probe_cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

void collsel_probe_default_config(collsel_probe_config *cfg)
{
    if (!cfg)
        return;
    cfg->msg_size = COLLSEL_PROBE_DEFAULT_MSG_SIZE;
    cfg->reps = COLLSEL_PROBE_DEFAULT_REPS;
    cfg->time_cap_us = COLLSEL_PROBE_DEFAULT_TIME_CAP_US;
    cfg->statistic = COLLSEL_PROBE_MAX;
}

static int probe_config_ok(const collsel_probe_config *c)
{
    return c->msg_size >= 1 && c->msg_size <= COLLSEL_PROBE_MAX_MSG_SIZE && c->reps >= 1
           && c->reps <= COLLSEL_PROBE_MAX_REPS && c->time_cap_us >= 0
           && c->time_cap_us <= COLLSEL_PROBE_MAX_TIME_CAP_US
           && (c->statistic == COLLSEL_PROBE_MAX || c->statistic == COLLSEL_PROBE_MEDIAN);
}

/* Pairing order key of one rank: its index on its node, then its node (named by the node's
 * lowest rank), then the rank; sorted, consecutive entries are partners. */
struct probe_key {
    int local, node, rank;
};

static int probe_cmp_key(const void *a, const void *b)
{
    const struct probe_key *x = a, *y = b;
    if (x->local != y->local)
        return (x->local > y->local) - (x->local < y->local);
    if (x->node != y->node)
        return (x->node > y->node) - (x->node < y->node);
    return (x->rank > y->rank) - (x->rank < y->rank);
}

/* Collective over p->comm: p->partner and p->initiator. `all` (2 ints per rank) and `keys`
 * (one per rank) are scratch the caller allocated. */
static collsel_probe_error probe_pair(collsel_probe *p, int *all, struct probe_key *keys)
{
    MPI_Comm node;
    int local = 0, leader = p->rank;
    if (PMPI_Comm_split_type(p->comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node)
        != MPI_SUCCESS)
        return COLLSEL_PROBE_EMPI;
    int rc = PMPI_Comm_rank(node, &local);
    if (rc == MPI_SUCCESS)
        rc = PMPI_Allreduce(&p->rank, &leader, 1, MPI_INT, MPI_MIN, node);
    PMPI_Comm_free(&node);
    int mine[2] = {local, leader};
    if (rc == MPI_SUCCESS)
        rc = PMPI_Allgather(mine, 2, MPI_INT, all, 2, MPI_INT, p->comm);
    if (rc != MPI_SUCCESS)
        return COLLSEL_PROBE_EMPI;
    for (int r = 0; r < p->size; r++) {
        keys[r].local = all[2 * r];
        keys[r].node = all[2 * r + 1];
        keys[r].rank = r;
    }
    qsort(keys, (size_t)p->size, sizeof *keys, probe_cmp_key);
    for (int i = 0; i < p->size; i++)
        if (keys[i].rank == p->rank) {
            int first = i % 2 == 0, other = first ? i + 1 : i - 1;
            p->partner = other < p->size ? keys[other].rank : -1;
            p->initiator = first && p->partner >= 0;
        }
    return COLLSEL_PROBE_OK;
}

/* Every rank learns whether any rank failed (the worst code wins), so all return alike. */
static collsel_probe_error probe_agree(MPI_Comm comm, collsel_probe_error err)
{
    int mine = (int)err, worst = 0;
    if (PMPI_Allreduce(&mine, &worst, 1, MPI_INT, MPI_MAX, comm) != MPI_SUCCESS)
        return COLLSEL_PROBE_EMPI;
    return (collsel_probe_error)worst;
}

static void probe_release(collsel_probe *p)
{
    if (!p)
        return;
    free(p->ping);
    free(p->pong);
    free(p->times);
    free(p->gathered);
    free(p);
}

collsel_probe_error collsel_probe_init(MPI_Comm comm, const collsel_probe_config *cfg,
                                       collsel_probe **probe)
{
    int inter = 0, size = 0, rank = 0;
    if (!probe)
        return COLLSEL_PROBE_EINVAL;
    *probe = NULL;
    if (!cfg || !probe_config_ok(cfg))
        return COLLSEL_PROBE_EINVAL;
    if (comm == MPI_COMM_NULL || PMPI_Comm_test_inter(comm, &inter) != MPI_SUCCESS || inter
        || PMPI_Comm_size(comm, &size) != MPI_SUCCESS || size < 2
        || PMPI_Comm_rank(comm, &rank) != MPI_SUCCESS)
        return COLLSEL_PROBE_ECOMM;

    MPI_Comm dup = MPI_COMM_NULL;
    if (PMPI_Comm_dup(comm, &dup) != MPI_SUCCESS)
        return COLLSEL_PROBE_EMPI;
    PMPI_Comm_set_errhandler(dup, MPI_ERRORS_RETURN);
    /* Everything is allocated before the first agreement, so a rank short of memory fails
     * together with the others instead of leaving them in a collective. */
    const int median = cfg->statistic == COLLSEL_PROBE_MEDIAN;
    collsel_probe *p = calloc(1, sizeof *p);
    int *all = malloc(2 * (size_t)size * sizeof *all);
    struct probe_key *keys = malloc((size_t)size * sizeof *keys);
    collsel_probe_error err = COLLSEL_PROBE_OK;
    if (!p || !all || !keys)
        err = COLLSEL_PROBE_ENOMEM;
    else {
        p->comm = dup;
        p->rank = rank;
        p->size = size;
        p->partner = -1;
        p->cfg = *cfg;
        p->ping = calloc(cfg->msg_size, 1);
        p->pong = calloc(cfg->msg_size, 1);
        p->times = malloc(cfg->reps * sizeof *p->times);
        p->gathered = rank == 0 && median ? malloc((size_t)size * sizeof *p->gathered) : NULL;
        if (!p->ping || !p->pong || !p->times || (rank == 0 && median && !p->gathered))
            err = COLLSEL_PROBE_ENOMEM;
    }
    /* The same configuration on every rank: the maximum and minus the minimum agree. */
    long long mine[6] = {cfg->msg_size, -(long long)cfg->msg_size, cfg->reps,
                         -(long long)cfg->reps, cfg->statistic, -(long long)cfg->statistic};
    long long top[6];
    if (PMPI_Allreduce(mine, top, 6, MPI_LONG_LONG, MPI_MAX, dup) != MPI_SUCCESS)
        err = COLLSEL_PROBE_EMPI;
    else if (err == COLLSEL_PROBE_OK
             && (top[0] != -top[1] || top[2] != -top[3] || top[4] != -top[5]))
        err = COLLSEL_PROBE_EINVAL;
    err = probe_agree(dup, err);
    if (err == COLLSEL_PROBE_OK)
        err = probe_agree(dup, probe_pair(p, all, keys));
    free(all);
    free(keys);
    if (err == COLLSEL_PROBE_OK) {
        collsel_probe_result warm;
        err = collsel_probe_run(p, &warm);
    }
    if (err != COLLSEL_PROBE_OK) {
        PMPI_Comm_free(&dup);
        probe_release(p);
        return err;
    }
    *probe = p;
    return COLLSEL_PROBE_OK;
}

/* The initiator's ping-pongs: the mean half round trip (HP2P's figure: a preemption or a
 * queue on the way counts) of all but the first, and how many were made. */
static int probe_initiate(collsel_probe *p, double start, double *figure, uint32_t *reps)
{
    const int m = (int)p->cfg.msg_size;
    uint32_t n = 0;
    for (;;) {
        int last = n + 1 == p->cfg.reps || probe_now_us() - start >= p->cfg.time_cap_us;
        p->ping[0] = last ? PING_LAST : 0;
        double t0 = probe_now_us();
        if (PMPI_Send(p->ping, m, MPI_BYTE, p->partner, PROBE_TAG, p->comm) != MPI_SUCCESS
            || PMPI_Recv(p->pong, m, MPI_BYTE, p->partner, PROBE_TAG, p->comm,
                        MPI_STATUS_IGNORE) != MPI_SUCCESS)
            return -1;
        p->times[n++] = 0.5 * (probe_now_us() - t0);
        if (last)
            break;
    }
    /* The first exchange waits for a partner that is still busy elsewhere (ranks leave the
     * previous collective at different times): it synchronises the pair and is not counted,
     * unless it is the only one. */
    uint32_t from = n > 1 ? 1 : 0;
    double sum = 0;
    for (uint32_t i = from; i < n; i++)
        sum += p->times[i];
    *reps = n;
    *figure = sum / (n - from);
    return 0;
}

/* The partner answers every ping until the one marked last. */
static int probe_answer(collsel_probe *p, uint32_t *reps)
{
    const int m = (int)p->cfg.msg_size;
    uint32_t n = 0;
    for (;;) {
        if (PMPI_Recv(p->ping, m, MPI_BYTE, p->partner, PROBE_TAG, p->comm, MPI_STATUS_IGNORE)
                != MPI_SUCCESS
            || PMPI_Send(p->pong, m, MPI_BYTE, p->partner, PROBE_TAG, p->comm) != MPI_SUCCESS)
            return -1;
        n++;
        if (p->ping[0] == PING_LAST)
            break;
    }
    *reps = n;
    return 0;
}

collsel_probe_error collsel_probe_run(collsel_probe *p, collsel_probe_result *result)
{
    if (!p || !result)
        return COLLSEL_PROBE_EINVAL;
    const double start = probe_now_us();
    double figure = PROBE_NONE, latency = PROBE_FAILED;
    uint32_t reps = 0;
    int failed = 0;
    if (p->initiator)
        failed = probe_initiate(p, start, &figure, &reps);
    else if (p->partner >= 0)
        failed = probe_answer(p, &reps);
    if (failed)
        figure = PROBE_FAILED;    /* above every figure: the maximum, and rank 0, see it */
    /* Rank 0 forms the figure; one broadcast gives every rank its bytes. */
    int rc;
    if (p->cfg.statistic == COLLSEL_PROBE_MAX) {
        rc = PMPI_Reduce(&figure, &latency, 1, MPI_DOUBLE, MPI_MAX, 0, p->comm);
    } else {
        rc = PMPI_Gather(&figure, 1, MPI_DOUBLE, p->gathered, 1, MPI_DOUBLE, 0, p->comm);
        if (rc == MPI_SUCCESS && p->rank == 0) {
            size_t n = 0;
            int bad = 0;
            for (int r = 0; r < p->size; r++) {
                bad |= p->gathered[r] >= PROBE_FAILED;
                if (p->gathered[r] >= 0)
                    p->gathered[n++] = p->gathered[r];
            }
            latency = bad ? PROBE_FAILED : probe_median(p->gathered, n);
        }
    }
    if (rc == MPI_SUCCESS)
        rc = PMPI_Bcast(&latency, 1, MPI_DOUBLE, 0, p->comm);
    if (rc != MPI_SUCCESS || latency >= PROBE_FAILED)
        return COLLSEL_PROBE_EMPI;
    result->latency_us = latency;
    result->reps = reps;
    result->partner = p->partner;
    result->elapsed_us = probe_now_us() - start;
    return COLLSEL_PROBE_OK;
}

collsel_probe_error collsel_probe_free(collsel_probe **probe)
{
    if (!probe)
        return COLLSEL_PROBE_EINVAL;
    collsel_probe *p = *probe;
    if (!p)
        return COLLSEL_PROBE_OK;
    int rc = PMPI_Comm_free(&p->comm);
    probe_release(p);
    *probe = NULL;
    return rc == MPI_SUCCESS ? COLLSEL_PROBE_OK : COLLSEL_PROBE_EMPI;
}

int32_t collsel_probe_size(const collsel_probe *probe)
{
    return probe ? probe->size : 0;
}

int32_t collsel_probe_partner(const collsel_probe *probe)
{
    return probe ? probe->partner : -1;
}

const char *collsel_probe_strerror(int error)
{
    static const char *const text[COLLSEL_PROBE_NERRORS] = {
        "success",
        "invalid argument (NULL pointer, value out of range, or ranks configured differently)",
        "unusable communicator (MPI_COMM_NULL, an inter-communicator, or fewer than 2 ranks)",
        "out of memory",
        "an MPI call failed",
    };
    if (error < 0 || error >= COLLSEL_PROBE_NERRORS)
        return "unknown collsel_probe error";
    return text[error];
}

int32_t collsel_probe_version(void)
{
    return COLLSEL_PROBE_VERSION;
}
