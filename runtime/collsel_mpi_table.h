/* Generated from generator/collsel/core/mpi/algorithms.py and core/mpi/fallbacks.py by
 * `make regen-mpi-table` (collsel.sinks.emit.mpi_table): do not edit; edit the table there.
 * tests/unit/sinks/emit/test_mpi_table.py fails when this file differs from a regeneration.
 *
 * What the C runtimes (libcollsel, coll/collsel) and the benchmark know of the MPIs: the
 * collectives collsel decides, in one order (the enum indexes every array below), the names a
 * tree blob carries, Open MPI's coll/tuned catalogue and its per-release refusals, MPICH's
 * algorithm names and each MPI's forcing control variable. Private to the runtime: not
 * installed, no MPI header needed. Every array is static (one copy per translation unit, a few
 * hundred bytes) and marked unused, so a file reading part of the table compiles without
 * warnings. */
#ifndef COLLSEL_MPI_TABLE_H
#define COLLSEL_MPI_TABLE_H

#include <stddef.h>
#include <stdint.h>

#if defined(__GNUC__)
#define COLLSEL_MPI_UNUSED __attribute__((unused))
#else
#define COLLSEL_MPI_UNUSED
#endif

/* ---- the collectives ------------------------------------------------------------------- */

#define COLLSEL_MPI_NCOLL 14

enum collsel_mpi_coll {
    COLLSEL_MPI_ALLGATHER,
    COLLSEL_MPI_ALLGATHERV,
    COLLSEL_MPI_ALLREDUCE,
    COLLSEL_MPI_ALLTOALL,
    COLLSEL_MPI_ALLTOALLV,
    COLLSEL_MPI_BARRIER,
    COLLSEL_MPI_BCAST,
    COLLSEL_MPI_EXSCAN,
    COLLSEL_MPI_GATHER,
    COLLSEL_MPI_REDUCE,
    COLLSEL_MPI_REDUCE_SCATTER,
    COLLSEL_MPI_REDUCE_SCATTER_BLOCK,
    COLLSEL_MPI_SCAN,
    COLLSEL_MPI_SCATTER,
};

/* collsel's names ("reduce_scatter_block"), as tables, trees and traces spell them */
static const char *const collsel_mpi_coll_names[COLLSEL_MPI_NCOLL] COLLSEL_MPI_UNUSED = {
    "allgather",
    "allgatherv",
    "allreduce",
    "alltoall",
    "alltoallv",
    "barrier",
    "bcast",
    "exscan",
    "gather",
    "reduce",
    "reduce_scatter",
    "reduce_scatter_block",
    "scan",
    "scatter",
};

/* The name a tree blob's header carries for collective c (16 bytes at most): collsel's name,
 * or its short form (core/mpi/algorithms.py BLOB_NAMES). */
static inline const char *collsel_mpi_blob_name(int c)
{
    switch (c) {
    case COLLSEL_MPI_REDUCE_SCATTER_BLOCK:
        return "reduce_scat_blk";
    default:
        return collsel_mpi_coll_names[c];
    }
}

/* ---- Open MPI coll/tuned --------------------------------------------------------------- */

/* The largest coll/tuned algorithm id of each collective in Open MPI 4.1.4's catalogue
 * (TUNED_ALGORITHMS; ids 1..max, 0: Open MPI's own decision). */
static const int32_t collsel_mpi_ompi_max_algorithm[COLLSEL_MPI_NCOLL] COLLSEL_MPI_UNUSED = {
    6,   /* allgather */
    5,   /* allgatherv */
    6,   /* allreduce */
    5,   /* alltoall */
    2,   /* alltoallv */
    6,   /* barrier */
    9,   /* bcast */
    2,   /* exscan */
    3,   /* gather */
    7,   /* reduce */
    4,   /* reduce_scatter */
    4,   /* reduce_scatter_block */
    2,   /* scan */
    3,   /* scatter */
};

/* The control variable that forces the algorithm (segment size, fan-outs: + "_segmentsize"...) */
static const char *const collsel_mpi_ompi_cvar[COLLSEL_MPI_NCOLL] COLLSEL_MPI_UNUSED = {
    "coll_tuned_allgather_algorithm",
    "coll_tuned_allgatherv_algorithm",
    "coll_tuned_allreduce_algorithm",
    "coll_tuned_alltoall_algorithm",
    "coll_tuned_alltoallv_algorithm",
    "coll_tuned_barrier_algorithm",
    "coll_tuned_bcast_algorithm",
    "coll_tuned_exscan_algorithm",
    "coll_tuned_gather_algorithm",
    "coll_tuned_reduce_algorithm",
    "coll_tuned_reduce_scatter_algorithm",
    "coll_tuned_reduce_scatter_block_algorithm",
    "coll_tuned_scan_algorithm",
    "coll_tuned_scatter_algorithm",
};

/* The variables a method's fan-in/out is written into, as suffixes of the algorithm's
 * (FANINOUT_VARIABLES; NULL: none more) */
#define COLLSEL_MPI_OMPI_FAN_VARS 3

static const char *const
    collsel_mpi_ompi_fan_vars[COLLSEL_MPI_NCOLL][COLLSEL_MPI_OMPI_FAN_VARS] COLLSEL_MPI_UNUSED = {
    {"_chain_fanout", "_tree_fanout", NULL},   /* allgather */
    {"_chain_fanout", "_tree_fanout", NULL},   /* allgatherv */
    {"_chain_fanout", "_tree_fanout", NULL},   /* allreduce */
    {"_max_requests", NULL},   /* alltoall */
    {"_chain_fanout", "_tree_fanout", NULL},   /* alltoallv */
    {"_chain_fanout", "_tree_fanout", NULL},   /* barrier */
    {"_chain_fanout", "_tree_fanout", NULL},   /* bcast */
    {"_chain_fanout", "_tree_fanout", NULL},   /* exscan */
    {"_chain_fanout", "_tree_fanout", NULL},   /* gather */
    {"_chain_fanout", "_tree_fanout", NULL},   /* reduce */
    {"_chain_fanout", "_tree_fanout", NULL},   /* reduce_scatter */
    {"_chain_fanout", "_tree_fanout", NULL},   /* reduce_scatter_block */
    {"_chain_fanout", "_tree_fanout", NULL},   /* scan */
    {"_chain_fanout", "_tree_fanout", NULL},   /* scatter */
};

/* The algorithm ids whose coll/base function needs a commutative operation (COMMUTATIVE_ONLY),
 * 0-terminated: a non-commutative call deferred there */
#define COLLSEL_MPI_OMPI_COMMUTATIVE_ONLY 6

static const int32_t collsel_mpi_ompi_commutative_only[COLLSEL_MPI_NCOLL]
                                                      [COLLSEL_MPI_OMPI_COMMUTATIVE_ONLY]
    COLLSEL_MPI_UNUSED = {
    {0},   /* allgather */
    {0},   /* allgatherv */
    {4, 5, 6, 0},   /* allreduce */
    {0},   /* alltoall */
    {0},   /* alltoallv */
    {0},   /* barrier */
    {0},   /* bcast */
    {0},   /* exscan */
    {0},   /* gather */
    {2, 3, 4, 5, 7, 0},   /* reduce */
    {2, 3, 0},   /* reduce_scatter */
    {3, 0},   /* reduce_scatter_block */
    {0},   /* scan */
    {0},   /* scatter */
};

/* A refusal: forced at a comm_size outside [runs_from, runs_below), the algorithm fails the call
 * (MPI_ERR_UNSUPPORTED_OPERATION); a runtime defers there instead. One entry per collective
 * (algorithm 0: it refuses nothing). */
struct collsel_mpi_refusal {
    int32_t algorithm;
    int32_t runs_from, runs_below;
};

/* The distinct refusal lists, one entry per collective, and the Open MPI releases collsel states
 * refusals for (core/mpi/fallbacks.py OMPI_RELEASE_REFUSALS, with their sources), oldest first, each
 * naming its list: releases with the same refusals share one. */
#define COLLSEL_MPI_OMPI_REFUSAL_LISTS 1

static const struct collsel_mpi_refusal
    collsel_mpi_ompi_refusal_lists[COLLSEL_MPI_OMPI_REFUSAL_LISTS][COLLSEL_MPI_NCOLL]
    COLLSEL_MPI_UNUSED = {
    {
        {6, 2, 3},   /* allgather: two_proc */
        {5, 2, 3},   /* allgatherv: two_proc */
        {0, 0, 0},   /* allreduce */
        {5, 2, 3},   /* alltoall: two_proc */
        {0, 0, 0},   /* alltoallv */
        {5, 2, 3},   /* barrier: two_proc */
        {0, 0, 0},   /* bcast */
        {0, 0, 0},   /* exscan */
        {0, 0, 0},   /* gather */
        {0, 0, 0},   /* reduce */
        {0, 0, 0},   /* reduce_scatter */
        {0, 0, 0},   /* reduce_scatter_block */
        {0, 0, 0},   /* scan */
        {0, 0, 0},   /* scatter */
    },
};

struct collsel_mpi_ompi_release {
    int major, minor;
    int refusal_list;   /* index into collsel_mpi_ompi_refusal_lists */
};

#define COLLSEL_MPI_OMPI_RELEASES 2

static const struct collsel_mpi_ompi_release
    collsel_mpi_ompi_releases[COLLSEL_MPI_OMPI_RELEASES] COLLSEL_MPI_UNUSED = {
    {4, 1, 0},
    {5, 0, 0},
};

/* The refusals of Open MPI major.minor, one entry per collective: the newest listed release not
 * newer than it (the oldest for an older one). */
static inline const struct collsel_mpi_refusal *collsel_mpi_ompi_refusals(int major, int minor)
{
    int i = COLLSEL_MPI_OMPI_RELEASES - 1;
    while (i > 0 && (collsel_mpi_ompi_releases[i].major > major
                     || (collsel_mpi_ompi_releases[i].major == major
                         && collsel_mpi_ompi_releases[i].minor > minor)))
        i--;
    return collsel_mpi_ompi_refusal_lists[collsel_mpi_ompi_releases[i].refusal_list];
}

/* 1 when `refusal` (one collective's entry) fails `algorithm` on comm_size ranks. */
static inline int collsel_mpi_refused(const struct collsel_mpi_refusal *refusal,
                                      int32_t algorithm, int32_t comm_size)
{
    return refusal->algorithm != 0 && algorithm == refusal->algorithm
           && (comm_size < refusal->runs_from || comm_size >= refusal->runs_below);
}

/* ---- MPICH ----------------------------------------------------------------------------- */

/* MPICH algorithm ids (collsel's, stable: MPICH_ALGORITHMS) -> the control variable's value
 * names: 0 "auto", then MPICH 4.0's names, then each later release's additions (5.0); a
 * name the running MPICH lacks is found missing through MPI_T at run time. */
#define COLLSEL_MPI_MPICH_MAX_IDS 12

static const int32_t collsel_mpi_mpich_count[COLLSEL_MPI_NCOLL] COLLSEL_MPI_UNUSED = {
    8,   /* allgather */
    5,   /* allgatherv */
    11,   /* allreduce */
    7,   /* alltoall */
    4,   /* alltoallv */
    6,   /* barrier */
    8,   /* bcast */
    3,   /* exscan */
    3,   /* gather */
    5,   /* reduce */
    6,   /* reduce_scatter */
    6,   /* reduce_scatter_block */
    4,   /* scan */
    3,   /* scatter */
};

static const char *const
    collsel_mpi_mpich_names[COLLSEL_MPI_NCOLL][COLLSEL_MPI_MPICH_MAX_IDS] COLLSEL_MPI_UNUSED = {
    {   /* allgather */
        "auto", "brucks", "nb", "recursive_doubling", "ring", "k_brucks", "recexch_doubling",
        "recexch_halving", NULL,
    },
    {   /* allgatherv */
        "auto", "brucks", "nb", "recursive_doubling", "ring", NULL,
    },
    {   /* allreduce */
        "auto", "nb", "smp", "recursive_doubling", "reduce_scatter_allgather",
        "recursive_multiplying", "tree", "recexch", "ring", "k_reduce_scatter_allgather", "ccl",
        NULL,
    },
    {   /* alltoall */
        "auto", "brucks", "nb", "pairwise", "pairwise_sendrecv_replace", "scattered",
        "k_brucks", NULL,
    },
    {   /* alltoallv */
        "auto", "nb", "pairwise_sendrecv_replace", "scattered", NULL,
    },
    {   /* barrier */
        "auto", "nb", "smp", "dissemination", "k_dissemination", "recexch", NULL,
    },
    {   /* bcast */
        "auto", "binomial", "nb", "smp", "scatter_recursive_doubling_allgather",
        "scatter_ring_allgather", "pipelined_tree", "tree", NULL,
    },
    {   /* exscan */
        "auto", "nb", "recursive_doubling", NULL,
    },
    {   /* gather */
        "auto", "binomial", "nb", NULL,
    },
    {   /* reduce */
        "auto", "binomial", "nb", "smp", "reduce_scatter_gather", NULL,
    },
    {   /* reduce_scatter */
        "auto", "nb", "noncommutative", "pairwise", "recursive_doubling", "recursive_halving",
        NULL,
    },
    {   /* reduce_scatter_block */
        "auto", "noncommutative", "recursive_doubling", "pairwise", "recursive_halving", "nb",
        NULL,
    },
    {   /* scan */
        "auto", "nb", "smp", "recursive_doubling", NULL,
    },
    {   /* scatter */
        "auto", "binomial", "nb", NULL,
    },
};

/* The MPICH id of the collective's algorithm that runs on power-of-two communicators only
 * (MPICH_POWER_OF_TWO_ONLY; 0: none) */
static const int32_t collsel_mpi_mpich_power_of_two_only[COLLSEL_MPI_NCOLL] COLLSEL_MPI_UNUSED = {
    0,   /* allgather */
    0,   /* allgatherv */
    0,   /* allreduce */
    0,   /* alltoall */
    0,   /* alltoallv */
    0,   /* barrier */
    0,   /* bcast */
    0,   /* exscan */
    0,   /* gather */
    0,   /* reduce */
    2,   /* reduce_scatter: noncommutative */
    1,   /* reduce_scatter_block: noncommutative */
    0,   /* scan */
    0,   /* scatter */
};

/* The control variable whose value names the algorithm (read by every call of the collective) */
static const char *const collsel_mpi_mpich_cvar[COLLSEL_MPI_NCOLL] COLLSEL_MPI_UNUSED = {
    "MPIR_CVAR_ALLGATHER_INTRA_ALGORITHM",
    "MPIR_CVAR_ALLGATHERV_INTRA_ALGORITHM",
    "MPIR_CVAR_ALLREDUCE_INTRA_ALGORITHM",
    "MPIR_CVAR_ALLTOALL_INTRA_ALGORITHM",
    "MPIR_CVAR_ALLTOALLV_INTRA_ALGORITHM",
    "MPIR_CVAR_BARRIER_INTRA_ALGORITHM",
    "MPIR_CVAR_BCAST_INTRA_ALGORITHM",
    "MPIR_CVAR_EXSCAN_INTRA_ALGORITHM",
    "MPIR_CVAR_GATHER_INTRA_ALGORITHM",
    "MPIR_CVAR_REDUCE_INTRA_ALGORITHM",
    "MPIR_CVAR_REDUCE_SCATTER_INTRA_ALGORITHM",
    "MPIR_CVAR_REDUCE_SCATTER_BLOCK_INTRA_ALGORITHM",
    "MPIR_CVAR_SCAN_INTRA_ALGORITHM",
    "MPIR_CVAR_SCATTER_INTRA_ALGORITHM",
};

#endif
