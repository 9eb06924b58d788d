/* collsel_bench, the sweep's MPI benchmark: what its parts share (limits, the options, the
 * buffers and samples of a launch). What it does and prints: docs/formats/benchmark-output.md;
 * the parts, one job each: options.c (argv), colls.c with colls_move.c and colls_reduce.c (the
 * collectives), timing.c (clock, statistics, when to stop), forcing.c (MPI_T, paired mode),
 * measure.c (the measuring loops), experiments.c and lmo.c (the model-fitting experiments),
 * round_probe.c (--probe), output.c (what rank 0 prints), collsel_bench.c (main).
 *
 * The harness's own communication (barriers, agreeing, gathering results, communicators) goes
 * through PMPI_*, the measured calls alone through MPI_*, so a library interposed on MPI_*
 * (libcollsel, a profiler) sees only what is measured. MPI_Init and MPI_Finalize stay MPI_*: an
 * interposed library starts and stops with the program. */
#ifndef BENCH_H
#define BENCH_H

#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L   /* strtok_r, gethostname, clock_gettime */
#endif
#include <mpi.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "colls.h"

#define BENCH_VERSION "1"
/* What this benchmark can run (`collsel_bench --capabilities` prints them with the collectives;
 * collsel reads that output, shipped as capabilities.json, before it launches anything). */
#define MAX_SIZES 4096
#define MAX_METHODS 256
#define MAX_REPS 100000000     /* --min-reps, --max-reps; paired: --max-reps x methods */
#define MAX_TOKEN 64
#define HIER_BASE 1000000LL   /* hierarchical method ids, docs/formats/benchmark-output.md */

#if defined(OPEN_MPI)
#define MPI_FAMILY "openmpi"
#elif defined(I_MPI_VERSION)    /* Intel MPI defines MPICH_VERSION too */
#define MPI_FAMILY "intel"
#elif defined(MPICH_VERSION)
#define MPI_FAMILY "mpich"
#else
#define MPI_FAMILY "unknown"
#endif

/* A call that must succeed: otherwise one line naming it and the whole launch aborts (exit 3). */
#define BENCH_CHECK(call)                                                            \
    do {                                                                             \
        int bench_check_rc_ = (call);                                                \
        if (bench_check_rc_ != MPI_SUCCESS) {                                        \
            char bench_check_msg_[MPI_MAX_ERROR_STRING];                             \
            int bench_check_len_ = 0;                                                \
            PMPI_Error_string(bench_check_rc_, bench_check_msg_, &bench_check_len_); \
            fprintf(stderr, "collsel_bench: %s:%d: %s failed: %s\n", __FILE__,       \
                    __LINE__, #call, bench_check_msg_);                              \
            PMPI_Abort(MPI_COMM_WORLD, 3);                                           \
        }                                                                            \
    } while (0)

enum fault { FAULT_NONE, FAULT_CRASH, FAULT_HANG, FAULT_CORRUPT };
enum runtime { RUNTIME_AUTO, RUNTIME_GLOBAL, RUNTIME_LOCAL };
enum experiment { EXP_NONE, EXP_NBFT, EXP_BCAST_GATHER, EXP_LMO, EXP_LMO_SCAN, EXP_LMO_BINOMIAL };
/* LMO experiment kinds, in the order of their names in output lines (lmo_kind_names). */
enum lmo_kind { LMO_RT0, LMO_RT, LMO_O2T, LMO_LSCATTER, LMO_LGATHER, LMO_BSCATTER, LMO_BGATHER };
extern const char *const lmo_kind_names[];
#define LMO_MAX_PROCS 64    /* 3 C(64, 3) = 124,992 one-to-two experiments */
#define LMO_TAG 79          /* the LMO experiments' messages */

/* One method of the paired mode: the --methods entry and how it is forced. */
struct method {
    char alg[MAX_TOKEN];    /* exactly as given: Open MPI id, or MPICH cvar value name */
    unsigned long long segsize;
    long fanout;            /* 0 = the MPI's default */
    MPI_Comm comm;          /* the communicator it runs on */
    int64_t enum_value;     /* MPICH: value of MPIR_CVAR_<COLL>_INTRA_ALGORITHM */
    int groups;             /* hierarchical: G (0 = a flat method), inner, outer algorithm */
    int inner, outer;
    MPI_Comm group, leaders;    /* hierarchical: this rank's group; the leaders (others: NULL) */
    double split_us;            /* hierarchical: the two MPI_Comm_split calls, slowest rank */
};

struct options {
    int coll;                       /* COLLS[] index, COLL_NONE: an LMO experiment */
    enum runtime runtime;
    unsigned long long sizes[MAX_SIZES];
    int nsizes;
    long min_reps, max_reps, warmup;
    double rel_ci, time_cap;
    enum fault fault;               /* test hook: make the run fail at one size */
    unsigned long long fault_size;
    enum experiment experiment;
    unsigned long long gather_size;
    const char *methods_arg;        /* paired mode when not NULL */
    struct method methods[MAX_METHODS];
    int nmethods;
    unsigned long long seed;
    const char *raw_path;
    int serial;                     /* lmo: --schedule serial */
    const char *mapping_arg;        /* lmo-binomial: --mapping, NULL = identity */
    enum lmo_kind lmo_kind;         /* lmo-scan / lmo-binomial: the kind being measured */
};

/* Statistics of one point, in microseconds. */
struct stats {
    double mean, median, min, max, stdev, ci;
    long n;
};

struct bufs {
    unsigned char *a, *b;   /* bcast: a; the others: a = send, b = receive */
    MPI_Request *reqs;      /* experiments: one per rank */
    unsigned char *gather;  /* bcast-gather: nprocs * gather_size bytes on the root */
    unsigned char *big;     /* lmo-scan, lmo-binomial: nprocs * max size (every block) */
    int *map;               /* lmo-binomial: the rank playing tree node v */
    int node;               /* lmo-binomial: this rank's tree node */
    unsigned char *tmp;     /* hierarchical reduce: a group's result on its leader */
    struct call_shape shape;    /* the collective's arguments at the current size */
};

struct samples {
    /* Per repetition (per round and method in paired mode, index round * nmethods + k):
     * every rank's start and end-or-duration; on rank 0 the slowest rank's time. */
    double *local, *starts, *maxed, *minstart;
    double *column, *scratch;   /* rank 0: one method's times, and timing_stats' scratch */
    int *order;                 /* paired mode: the call order of each round */
};

/* n bytes (at least 1), or the launch aborts (exit 4) naming this rank. */
void *bench_alloc(size_t n, int rank);
/* All ranks agree on the worst outcome (0 ok, 2 usage, 6 forcing failed); the lowest rank
 * with that outcome prints its message. Returns the outcome. */
int bench_agree(int code, const char *msg, int rank);

#endif
