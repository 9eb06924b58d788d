/* collsel_bench: time one MPI collective over a list of message sizes.
 *
 * Method (ReproMPI-style, see ../shared/reference/style-examples.md section 4):
 *   - warm-up calls, then repetitions each started after an MPI_Barrier;
 *   - every rank stores its local duration of each repetition in a preallocated array;
 *     nothing is printed or reduced inside the timed loop;
 *   - one sample per repetition, computed after each batch on rank 0:
 *       global (default when all ranks share one node, hence one monotonic clock): latest end
 *         minus earliest start over ranks (ReproMPI's global-clock runtime). Ranks leave the
 *         barrier at different times, badly so when oversubscribed; a rank that starts late
 *         then finds its data already there and times almost nothing, so local durations
 *         would report a 6-rank bcast on 2 cores as 0.2 µs;
 *       local (several nodes: clocks differ): the maximum over ranks of each rank's duration;
 *   - rank 0 stops when the 95 % confidence interval of the mean is within --rel-ci of the
 *     mean (Nuriyev et al. 2022, section 6.1), or --max-reps, or --time-cap seconds spent on
 *     the point, and broadcasts the decision.
 * Output (stdout, rank 0): `#@key=value` header lines (`#@rank_hosts=h0,h1,...`: every rank's
 * MPI_Get_processor_name in rank order), then one line per message size,
 * flushed at once so a driver can record each point as soon as it is done:
 *   msg_size mean_us median_us min_us max_us stdev_us ci_halfwidth_us n ci_met
 * The algorithm is chosen outside (Open MPI MCA parameters); the values seen are echoed.
 *
 * Model-fitting experiments (Nuriyev et al. 2022, section 5; `collsel model fit`), timed on the
 * root only (other ranks contribute 0 to the max), one `#@experiment=` header line added:
 *   --experiment nbft          root MPI_Isend's m bytes to every other rank, MPI_Waitall;
 *                              the others MPI_Irecv + MPI_Wait (a non-blocking flat tree);
 *   --experiment bcast-gather  MPI_Bcast (forced algorithm), MPI_Barrier, then a flat gather
 *                              without synchronisation: every rank MPI_Send's min(m, G) bytes
 *                              to the root, which MPI_Recv's them in rank order
 *                              (G = --gather-size, default 8192).
 * Without --experiment nothing changes.
 *
 * LMO experiments (Lastovetsky & Rychkov 2009; `collsel model lmo-fit`), one process per
 * processor, `#@experiment=` and `#@schedule=` headers, one line per experiment:
 *   kind root a b msg_size mean_us median_us min_us max_us stdev_us ci_halfwidth_us n ci_met
 *   --experiment lmo           kinds rt0 (empty round-trip root<->a), rt (M bytes root->a, empty
 *                              reply) and o2t (M bytes root->a and root->b by MPI_Send, then
 *                              the two empty replies by MPI_Recv), for every pair root < a
 *                              (b = -1) and every triplet and root of it (a < b: the others);
 *                              rt0 once (msg_size 0), rt and o2t at each --sizes M. Timed on
 *                              the sender (the root's own clock), repeated until the CI target
 *                              (or --max-reps, or --time-cap per round). --schedule parallel
 *                              (default) runs non-overlapping pairs (round-robin rounds) and
 *                              triplets (greedy disjoint rounds) at once, serial one at a time;
 *                              every repetition starts after an MPI_Barrier of all ranks. Lines
 *                              come per kind and size in canonical order: pairs (root, a) and
 *                              triplets (i, j, k) lexicographic, a triplet's roots i, j, k.
 *   --experiment lmo-scan      kinds lscatter / lgather: linear scatter (root 0 MPI_Send's rank
 *                              r its own M-byte block, r = 1..P-1) and linear gather (root 0
 *                              MPI_Recv's them in rank order), timed as a collective
 *                              (--runtime); a = b = -1.
 *   --experiment lmo-binomial  kinds bscatter / bgather: binomial scatter / gather of M bytes per
 *                              rank over the in-order binomial tree (node v's children v + 2^k,
 *                              2^k below v's lowest set bit, largest subtree first; gather
 *                              receives the largest last), tree node v played by rank
 *                              --mapping[v] (default: the identity); root = --mapping[0].
 *
 * Paired mode (--methods A:S[:F],...; protocol B of the collsel interfaces): every listed method
 * is measured in this one launch, so the launch's state moves all methods together.
 *   - the collectives: COLLS[] in collsel_bench_colls.c (included below; its top comment says
 *     what m is for each: the quantity Open MPI 4.1.4's fixed decision computes, with 1-byte
 *     elements; `#@skipped=M,...` lists the sizes with no call, m < P for reduce_scatter, left
 *     out for every method; barrier takes --sizes 0 only);
 *   - forcing through MPI_T control variables. Open MPI: the variables of the collective are
 *     looked up in MPI_T, A:S[:F] writes coll_tuned_<coll>_algorithm = A,
 *     ..._algorithm_segmentsize = S, and F (0: the launch's own value) to each of
 *     COLLS[].fan_vars this MPI has: ..._algorithm_chain_fanout and ..._tree_fanout, for
 *     alltoall ..._algorithm_max_requests (linear_sync's limit) instead; reduce's and
 *     scatter's max_requests and bcast's knomial_radix keep the launch's values (the radix is
 *     read at call time, not per communicator); every value is read back, then MPI_COMM_WORLD
 *     is dup'ed: one communicator per method keeps its method (algorithm 0 = forcing off =
 *     coll/tuned's fixed decision). S != 0 or F != 0 for a collective without such a variable
 *     (barrier, alltoallv, scan, exscan have only ..._algorithm) is exit 6, and so is a variable
 *     MPI_T cannot write (Open MPI 4.1.4 and 5.0 register every allgatherv variable with scope
 *     constant: allgatherv is forced per launch, --mca, not in paired mode). MPICH:
 *     MPIR_CVAR_<COLL>_INTRA_ALGORITHM (enum value looked up by name) is written before every
 *     call of a method, outside the timed region; MPIR_CVAR_COLLECTIVE_FALLBACK=error
 *     (environment) turns an impossible choice into an error. A cvar missing, not writable or
 *     reading back different: message `collsel_bench: forcing did not take: ...` and exit 6
 *     before measuring;
 *   - unusable methods: the per-method communicators return MPI errors (MPI_ERRORS_RETURN); a
 *     method whose call fails on any rank at a size (e.g. two_proc algorithms at P != 2) is
 *     left out of that size (no more calls, no line) and named, before the size's lines, in
 *     `#@unusable.M=A:S:F,...`; the other methods are measured as usual;
 *   - per size: a first call checked against the reference result (every rank's result
 *     compared byte for byte with what the inputs must give; a wrong one is exit 5, naming the
 *     method) and warm-up per method, then rounds; each round calls
 *     every method once, in an order shuffled by --seed (splitmix64, the same on all ranks),
 *     each call after an MPI_Barrier; stop when every method's CI meets --rel-ci, or
 *     --max-reps rounds, or --time-cap seconds for the size (all methods together);
 *   - output: one line per method after each size, in the order of --methods:
 *       msg_size algorithm segsize faninout mean_us median_us min_us max_us stdev_us
 *       ci_halfwidth_us n ci_met
 *     and with --raw FILE every repetition in ReproMPI's per-repetition layout, in call order.
 *   - hierarchical methods (Open MPI): an id A >= HIER_BASE (1000000) is A = HIER_BASE + G * 100
 *     + INNER * 10 + OUTER (core/algorithms.py): G groups of consecutive ranks (rank r in group
 *     r * G / P; G is capped at P; on a cluster ranks are mapped by node, so groups follow nodes),
 *     the first rank of each group its leader. bcast: MPI_Bcast among the leaders (root 0), then
 *     inside each group; reduce: MPI_Reduce inside each group into the leader, then among the
 *     leaders into rank 0. The group communicator is split while coll/tuned's variables name
 *     INNER, the leaders' while they name OUTER (segment size 0, fan-outs the launch's), once per
 *     launch, before any timing; the two splits' cost (slowest rank, after a barrier) is
 *     reported in the header as `#@hier_split_us=A=US,...`, not in the method's time;
 *   - --probe REPS[:CAP_US] (paired mode; `collsel sweep --probe`, `--load-levels`): before every
 *     round all ranks run the run-time library's probe (runtime/collsel_probe.c, included below:
 *     one implementation) on MPI_COMM_WORLD, outside the timed calls, with at most REPS
 *     exchanges per pair and none started after CAP_US microseconds (default 200). Each method
 *     line gains a last field, probe_us: the median of the size's round probes; after a size's
 *     lines `#@probe_rounds.M=` lists every round's figure in round order, and the header says
 *     `#@probe=` how it probed. Without --probe the output is unchanged.
 */
#define _POSIX_C_SOURCE 200809L
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <mpi.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define BENCH_VERSION "1"
/* What this benchmark can run: collsel reads these lines from this file before it launches
 * anything (benchmark_program.py: capabilities), so it refuses what the benchmark would. */
#define MAX_SIZES 4096
#define MAX_METHODS 256
#define MAX_REPS 100000000     /* --min-reps, --max-reps; paired: --max-reps x methods */
#define MAX_TOKEN 64
#define HIER_BASE 1000000LL   /* hierarchical method ids, see the top comment */

#if defined(OPEN_MPI)
#define MPI_FAMILY "openmpi"
#elif defined(I_MPI_VERSION)    /* Intel MPI defines MPICH_VERSION too */
#define MPI_FAMILY "intel"
#elif defined(MPICH_VERSION)
#define MPI_FAMILY "mpich"
#else
#define MPI_FAMILY "unknown"
#endif

#define MPI_CHECK(call)                                                              \
    do {                                                                             \
        int mpi_check_rc_ = (call);                                                  \
        if (mpi_check_rc_ != MPI_SUCCESS) {                                          \
            char mpi_check_msg_[MPI_MAX_ERROR_STRING];                               \
            int mpi_check_len_ = 0;                                                  \
            MPI_Error_string(mpi_check_rc_, mpi_check_msg_, &mpi_check_len_);        \
            fprintf(stderr, "collsel_bench: %s:%d: %s failed: %s\n", __FILE__,       \
                    __LINE__, #call, mpi_check_msg_);                                \
            MPI_Abort(MPI_COMM_WORLD, 3);                                            \
        }                                                                            \
    } while (0)

/* Byte i of the root's data for a message of m bytes: varies with both, so stale data from
 * an earlier size cannot pass the check. */
static unsigned char pattern(size_t i, unsigned long long m)
{
    return (unsigned char)((i * 131u + m * 7u + 1u) & 0xffu);
}

/* Reduce inputs are kept small enough that the sum over ranks never exceeds 255: Open MPI
 * 4.1.4's vectorised MPI_SUM on MPI_UNSIGNED_CHAR saturates at 255 instead of wrapping
 * (seen on this machine for 4 KiB messages), so results that overflow are not portable. */
static unsigned char reduce_input(size_t i, unsigned long long m, int nprocs)
{
    return nprocs > 255 ? 0 : (unsigned char)(pattern(i, m) % (255 / nprocs + 1));
}

/* The collectives (--collective): COLLS[], their buffers, calls and reference results. */
#include "collsel_bench_colls.c"
enum { COLL_NONE = -1, COLL_BCAST = 0, COLL_REDUCE = 1, COLL_ALLREDUCE = 2 };   /* COLLS[] */
enum fault { FAULT_NONE, FAULT_CRASH, FAULT_HANG, FAULT_CORRUPT };

enum runtime { RUNTIME_AUTO, RUNTIME_GLOBAL, RUNTIME_LOCAL };
enum experiment { EXP_NONE, EXP_NBFT, EXP_BCAST_GATHER, EXP_LMO, EXP_LMO_SCAN, EXP_LMO_BINOMIAL };

/* LMO experiment kinds, in the order of their names in output lines. */
enum lmo_kind { LMO_RT0, LMO_RT, LMO_O2T, LMO_LSCATTER, LMO_LGATHER, LMO_BSCATTER, LMO_BGATHER };
static const char *const LMO_KIND_NAMES[] = {"rt0", "rt", "o2t", "lscatter", "lgather",
                                             "bscatter", "bgather"};
#define LMO_MAX_PROCS 64    /* 3 C(64, 3) = 124,992 one-to-two experiments */
#define LMO_TAG 79

/* One method of the paired mode: the --methods entry and how it is forced. */
struct method {
    char alg[MAX_TOKEN];    /* exactly as given: Open MPI id, or MPICH cvar value name */
    unsigned long long segsize;
    long fanout;            /* 0 = the MPI's default */
    MPI_Comm comm;          /* the communicator it runs on */
    long long enum_value;   /* MPICH: value of MPIR_CVAR_<COLL>_INTRA_ALGORITHM */
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

struct stats {
    double mean, median, min, max, stdev, ci;
    long n;
};

static void *alloc_or_die(size_t n, int rank);

static int usage_error(int rank, const char *fmt, const char *arg)
{
    if (rank == 0) {
        fprintf(stderr, "collsel_bench: ");
        fprintf(stderr, fmt, arg);
        fprintf(stderr, "\nusage: collsel_bench --collective ");
        for (int c = 0; c < NCOLLECTIVES; c++)
            fprintf(stderr, "%s%s", c ? "|" : "", COLLS[c].name);
        fprintf(stderr, " --sizes M[,M...] "
                        "[--min-reps N] [--max-reps N] [--warmup N] [--rel-ci F] "
                        "[--time-cap SEC] [--runtime global|local|auto] "
                        "[--fault crash@M|hang@M|corrupt@M] "
                        "[--experiment nbft|bcast-gather|lmo|lmo-scan|lmo-binomial] "
                        "[--gather-size G] [--schedule parallel|serial] [--mapping R0,R1,...] "
                        "[--methods A:S[:F],... [--seed N] [--raw FILE] "
                        "[--probe REPS[:CAP_US]]]\n");
    }
    return 2;
}

/* A non-negative integer with an optional K/M/G (binary) suffix; 0 on success. */
static int parse_size(const char *text, unsigned long long *out)
{
    char *end = NULL;
    if (text[0] < '0' || text[0] > '9')
        return -1;
    errno = 0;
    unsigned long long v = strtoull(text, &end, 10);
    if (errno != 0)
        return -1;
    unsigned shift = 0;
    if (*end == 'K' || *end == 'k') shift = 10, end++;
    else if (*end == 'M' || *end == 'm') shift = 20, end++;
    else if (*end == 'G' || *end == 'g') shift = 30, end++;
    if (*end != '\0' || (shift && v > (ULLONG_MAX >> shift)))
        return -1;
    *out = v << shift;
    return 0;
}

static int parse_long(const char *text, long low, long high, long *out)
{
    char *end = NULL;
    errno = 0;
    long v = strtol(text, &end, 10);
    if (errno != 0 || end == text || *end != '\0' || v < low || v > high)
        return -1;
    *out = v;
    return 0;
}

static int parse_double(const char *text, double low, double high, double *out)
{
    char *end = NULL;
    errno = 0;
    double v = strtod(text, &end);
    if (errno != 0 || end == text || *end != '\0' || !(v >= low && v <= high))
        return -1;
    *out = v;
    return 0;
}

/* --methods A:S[:F],...: syntax only; whether A names an algorithm of this MPI is checked
 * against the cvar's enumeration once MPI_T is up (check_algorithms). */
static int parse_methods(const char *text, int rank, struct options *o)
{
    char buf[65536];
    if (strlen(text) >= sizeof buf)
        return usage_error(rank, "%s", "--methods list too long");
    strcpy(buf, text);
    o->nmethods = 0;
    for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok;
         tok = strtok_r(NULL, ",", &save)) {
        if (o->nmethods == MAX_METHODS)
            return usage_error(rank, "%s", "more than 256 methods in --methods");
        struct method *mt = &o->methods[o->nmethods];
        char *seg = strchr(tok, ':');
        char *fan = seg ? strchr(seg + 1, ':') : NULL;
        if (!seg || (fan && strchr(fan + 1, ':')))
            return usage_error(rank, "--methods entry '%s' must be ALG:SEGSIZE[:FANINOUT]", tok);
        *seg++ = '\0';
        if (fan)
            *fan++ = '\0';
        size_t len = strlen(tok);
        int digits = len > 0, word = len > 0 && len < MAX_TOKEN;
        for (size_t i = 0; i < len; i++) {
            digits &= isdigit((unsigned char)tok[i]) != 0;
            word &= isalnum((unsigned char)tok[i]) || tok[i] == '_';
        }
        if (strcmp(MPI_FAMILY, "mpich") == 0 ? !word : !(digits && len < 10))
            return usage_error(rank, strcmp(MPI_FAMILY, "mpich") == 0
                               ? "--methods: algorithm '%s' must be an MPICH algorithm name"
                               : "--methods: algorithm '%s' must be a coll/tuned id (integer)",
                               tok);
        strcpy(mt->alg, tok);
        if (parse_size(seg, &mt->segsize) != 0 || mt->segsize > (unsigned long long)INT_MAX)
            return usage_error(rank, "--methods: bad segment size '%s' (bytes up to INT_MAX)", seg);
        mt->fanout = 0;
        if (fan && parse_long(fan, 0, INT_MAX, &mt->fanout) != 0)
            return usage_error(rank, "--methods: bad fan-in/out '%s' (integer >= 0)", fan);
        mt->groups = 0;
        if (strcmp(MPI_FAMILY, "openmpi") == 0 && atoll(tok) >= HIER_BASE) {
            long long h = atoll(tok) - HIER_BASE;
            mt->groups = (int)(h / 100);
            mt->inner = (int)(h / 10 % 10);
            mt->outer = (int)(h % 10);
            if (mt->groups < 2 || mt->segsize || mt->fanout)
                return usage_error(rank, "--methods: hierarchical method '%s' needs G >= 2, "
                                   "segment size and fan-in/out 0", tok);
        }
        mt->group = mt->leaders = MPI_COMM_NULL;
        if (strcmp(MPI_FAMILY, "mpich") == 0 && (mt->segsize || mt->fanout))
            return usage_error(rank, "--methods: '%s': MPICH algorithms take segment size and "
                               "fan-in/out 0", tok);
        for (int k = 0; k < o->nmethods; k++)
            if (strcmp(o->methods[k].alg, mt->alg) == 0 && o->methods[k].segsize == mt->segsize
                && o->methods[k].fanout == mt->fanout)
                return usage_error(rank, "--methods: '%s' is listed twice", tok);
        mt->comm = MPI_COMM_NULL;
        o->nmethods++;
    }
    if (o->nmethods == 0)
        return usage_error(rank, "%s", "--methods lists no method");
    return 0;
}

/* ---- Probe before every round (--probe; see the top comment) ---- */
#include "collsel_probe.c"

static struct {
    long reps;                  /* exchanges per pair at most; 0 = --probe not given */
    double cap_us;
    collsel_probe *probe;
    double *rounds;             /* the current size's round figures, round order */
    double *scratch;            /* rank 0: sorted copy for the median */
    long n;                     /* rounds probed at the current size */
} bench_probe;

/* --probe REPS[:CAP_US]: 1 when `key` is --probe (*rc: 0, or a usage error's exit code). */
static int probe_option(const char *key, const char *val, int rank, int *rc)
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
    if (parse_long(reps, 1, COLLSEL_PROBE_MAX_REPS, &bench_probe.reps) != 0
        || (colon && parse_double(colon + 1, 0, COLLSEL_PROBE_MAX_TIME_CAP_US,
                                  &bench_probe.cap_us) != 0))
        *rc = usage_error(rank, "--probe '%s' must be REPS[:CAP_US] (REPS >= 1 exchanges per "
                          "pair, CAP_US >= 0 microseconds)", val);
    return 1;
}

/* All ranks, once: the probe on MPI_COMM_WORLD and room for max_reps round figures. */
static int probe_start(long max_reps, int rank)
{
    collsel_probe_config cfg;
    collsel_probe_default_config(&cfg);
    cfg.reps = (uint32_t)bench_probe.reps;
    cfg.time_cap_us = bench_probe.cap_us;
    int err = collsel_probe_init(MPI_COMM_WORLD, &cfg, &bench_probe.probe);
    if (err != COLLSEL_PROBE_OK)
        return usage_error(rank, "--probe: %s", collsel_probe_strerror(err));
    bench_probe.rounds = alloc_or_die((size_t)max_reps * sizeof(double), rank);
    bench_probe.scratch = alloc_or_die((size_t)max_reps * sizeof(double), rank);
    return 0;
}

/* All ranks, before round r of a size (r = 0 starts the size). */
static void probe_round(long r)
{
    collsel_probe_result res;
    if (!bench_probe.reps)
        return;
    int err = collsel_probe_run(bench_probe.probe, &res);
    if (err != COLLSEL_PROBE_OK) {
        fprintf(stderr, "collsel_bench: probe: %s\n", collsel_probe_strerror(err));
        MPI_Abort(MPI_COMM_WORLD, 3);
    }
    bench_probe.rounds[r] = res.latency_us;
    bench_probe.n = r + 1;
}

static void probe_header(FILE *out)
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

/* Rank 0: " probe_us" ending a method line of the current size. */
static void probe_field(void)
{
    if (!bench_probe.reps)
        return;
    memcpy(bench_probe.scratch, bench_probe.rounds, (size_t)bench_probe.n * sizeof(double));
    printf(" %.6g", probe_median(bench_probe.scratch, (size_t)bench_probe.n));
}

/* Rank 0, after a size's lines: every round's figure. */
static void probe_rounds_line(unsigned long long m)
{
    if (!bench_probe.reps)
        return;
    printf("#@probe_rounds.%llu=", m);
    for (long r = 0; r < bench_probe.n; r++)
        printf("%s%.6g", r ? "," : "", bench_probe.rounds[r]);
    printf("\n");
}

static void probe_stop(void)
{
    if (bench_probe.probe)
        collsel_probe_free(&bench_probe.probe);
    free(bench_probe.rounds);
    free(bench_probe.scratch);
}

/* Every rank parses the same argv, so all agree on success or failure without talking. */
static int parse_args(int argc, char **argv, int rank, struct options *o)
{
    int have_coll = 0;
    o->nsizes = 0;
    o->min_reps = 5;
    o->max_reps = 1000;
    o->warmup = 2;
    o->rel_ci = 0.025;
    o->time_cap = 1.0;
    o->fault = FAULT_NONE;
    o->fault_size = 0;
    o->runtime = RUNTIME_AUTO;
    o->experiment = EXP_NONE;
    o->gather_size = 8192;
    o->methods_arg = NULL;
    o->nmethods = 0;
    o->seed = 1;
    o->raw_path = NULL;
    o->serial = 0;
    o->mapping_arg = NULL;
    o->lmo_kind = LMO_RT0;
    int have_seed = 0, have_schedule = 0, probe_rc = 0;
    for (int i = 1; i < argc; i++) {
        const char *key = argv[i];
        if (strcmp(key, "--help") == 0 || strcmp(key, "-h") == 0)
            return usage_error(rank, "%s", "help");
        if (i + 1 >= argc)
            return usage_error(rank, "option '%s' needs a value", key);
        const char *val = argv[++i];
        if (strcmp(key, "--collective") == 0) {
            o->coll = COLL_NONE;
            for (int c = 0; c < NCOLLECTIVES; c++)
                if (strcmp(val, COLLS[c].name) == 0)
                    o->coll = c;
            if (o->coll == COLL_NONE) {
                char msg[512];
                int at = snprintf(msg, sizeof msg, "unknown collective '%.64s' (known:", val);
                for (int c = 0; c < NCOLLECTIVES; c++)
                    at += snprintf(msg + at, sizeof msg - (size_t)at, "%s %s", c ? "," : "",
                                   COLLS[c].name);
                snprintf(msg + at, sizeof msg - (size_t)at, ")");
                return usage_error(rank, "%s", msg);
            }
            have_coll = 1;
        } else if (strcmp(key, "--sizes") == 0) {
            char buf[65536];
            if (strlen(val) >= sizeof buf)
                return usage_error(rank, "%s", "--sizes list too long");
            strcpy(buf, val);
            for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok;
                 tok = strtok_r(NULL, ",", &save)) {
                if (o->nsizes == MAX_SIZES)
                    return usage_error(rank, "%s", "more than 4096 message sizes");
                if (parse_size(tok, &o->sizes[o->nsizes]) != 0)
                    return usage_error(rank, "bad message size '%s' (bytes, optional K/M/G)", tok);
                if (o->sizes[o->nsizes] > (unsigned long long)INT_MAX)
                    return usage_error(rank, "message size '%s' exceeds INT_MAX elements", tok);
                o->nsizes++;
            }
        } else if (strcmp(key, "--min-reps") == 0) {
            if (parse_long(val, 2, MAX_REPS, &o->min_reps) != 0)
                return usage_error(rank, "--min-reps '%s' must be an integer >= 2", val);
        } else if (strcmp(key, "--max-reps") == 0) {
            if (parse_long(val, 2, MAX_REPS, &o->max_reps) != 0)
                return usage_error(rank, "--max-reps '%s' must be an integer >= 2", val);
        } else if (strcmp(key, "--warmup") == 0) {
            if (parse_long(val, 0, 1000000, &o->warmup) != 0)
                return usage_error(rank, "--warmup '%s' must be an integer >= 0", val);
        } else if (strcmp(key, "--rel-ci") == 0) {
            if (parse_double(val, 1e-6, 10.0, &o->rel_ci) != 0)
                return usage_error(rank, "--rel-ci '%s' must be a number in (0, 10]", val);
        } else if (strcmp(key, "--time-cap") == 0) {
            if (parse_double(val, 1e-6, 1e6, &o->time_cap) != 0)
                return usage_error(rank, "--time-cap '%s' must be a positive number of seconds", val);
        } else if (strcmp(key, "--runtime") == 0) {
            if (strcmp(val, "global") == 0) o->runtime = RUNTIME_GLOBAL;
            else if (strcmp(val, "local") == 0) o->runtime = RUNTIME_LOCAL;
            else if (strcmp(val, "auto") == 0) o->runtime = RUNTIME_AUTO;
            else return usage_error(rank, "--runtime '%s' must be global, local or auto", val);
        } else if (strcmp(key, "--experiment") == 0) {
            if (strcmp(val, "nbft") == 0) o->experiment = EXP_NBFT;
            else if (strcmp(val, "bcast-gather") == 0) o->experiment = EXP_BCAST_GATHER;
            else if (strcmp(val, "lmo") == 0) o->experiment = EXP_LMO;
            else if (strcmp(val, "lmo-scan") == 0) o->experiment = EXP_LMO_SCAN;
            else if (strcmp(val, "lmo-binomial") == 0) o->experiment = EXP_LMO_BINOMIAL;
            else return usage_error(rank, "--experiment '%s' must be nbft, bcast-gather, lmo, "
                                    "lmo-scan or lmo-binomial", val);
            o->coll = o->experiment >= EXP_LMO ? COLL_NONE : COLL_BCAST;
            have_coll = 1;
        } else if (strcmp(key, "--schedule") == 0) {
            if (strcmp(val, "parallel") == 0) o->serial = 0;
            else if (strcmp(val, "serial") == 0) o->serial = 1;
            else return usage_error(rank, "--schedule '%s' must be parallel or serial", val);
            have_schedule = 1;
        } else if (strcmp(key, "--mapping") == 0) {
            o->mapping_arg = val;
        } else if (strcmp(key, "--gather-size") == 0) {
            if (parse_size(val, &o->gather_size) != 0 || o->gather_size == 0 ||
                o->gather_size > (unsigned long long)INT_MAX)
                return usage_error(rank, "--gather-size '%s' must be a size of 1 byte or more", val);
        } else if (strcmp(key, "--fault") == 0) {
            const char *at = strchr(val, '@');
            if (at && strncmp(val, "crash@", 6) == 0) o->fault = FAULT_CRASH;
            else if (at && strncmp(val, "hang@", 5) == 0) o->fault = FAULT_HANG;
            else if (at && strncmp(val, "corrupt@", 8) == 0) o->fault = FAULT_CORRUPT;
            else return usage_error(rank, "--fault '%s' must be crash@SIZE, hang@SIZE or "
                                    "corrupt@SIZE", val);
            if (parse_size(at + 1, &o->fault_size) != 0)
                return usage_error(rank, "bad size in --fault '%s'", val);
        } else if (strcmp(key, "--methods") == 0) {
            o->methods_arg = val;
            int rc = parse_methods(val, rank, o);
            if (rc != 0)
                return rc;
        } else if (strcmp(key, "--seed") == 0) {
            char *end = NULL;
            errno = 0;
            o->seed = strtoull(val, &end, 10);
            if (errno != 0 || !isdigit((unsigned char)val[0]) || *end != '\0')
                return usage_error(rank, "--seed '%s' must be an integer in [0, 2^64)", val);
            have_seed = 1;
        } else if (strcmp(key, "--raw") == 0) {
            if (val[0] == '\0')
                return usage_error(rank, "%s", "--raw needs a file name");
            o->raw_path = val;
        } else if (probe_option(key, val, rank, &probe_rc)) {
            if (probe_rc)
                return probe_rc;
        } else {
            return usage_error(rank, "unknown option '%s'", key);
        }
    }
    if (!o->methods_arg && (have_seed || o->raw_path))
        return usage_error(rank, "%s", "--seed and --raw need --methods (paired mode)");
    if (o->methods_arg && o->max_reps > MAX_REPS / o->nmethods)
        return usage_error(rank, "%s", "--max-reps times the number of methods exceeds MAX_REPS "
                           "(10^8)");
    if (o->methods_arg && o->experiment != EXP_NONE)
        return usage_error(rank, "%s", "--methods and --experiment exclude each other");
    if (have_schedule && o->experiment != EXP_LMO)
        return usage_error(rank, "%s", "--schedule needs --experiment lmo");
    if (o->mapping_arg && o->experiment != EXP_LMO_BINOMIAL)
        return usage_error(rank, "%s", "--mapping needs --experiment lmo-binomial");
    if (!have_coll)
        return usage_error(rank, "%s", "--collective is required");
    for (int k = 0; k < o->nmethods; k++)
        if (o->methods[k].groups && o->coll != COLL_BCAST && o->coll != COLL_REDUCE)
            return usage_error(rank, "--methods: hierarchical method '%s' exists for bcast and "
                               "reduce only", o->methods[k].alg);
    if (o->nsizes == 0)
        return usage_error(rank, "%s", "--sizes is required");
    if (o->max_reps < o->min_reps)
        return usage_error(rank, "%s", "--max-reps is smaller than --min-reps");
    return 0;
}

/* Two-sided 95 % Student t quantile for df degrees of freedom: table up to 30, then the
 * Cornish-Fisher expansion around the normal quantile (error < 1e-4 there). */
static double t975(long df)
{
    static const double table[31] = {
        0, 12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228,
        2.201, 2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086,
        2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042};
    if (df < 1)
        return INFINITY;
    if (df <= 30)
        return table[df];
    const double z = 1.959964, d = (double)df;
    return z + (z * z * z + z) / (4 * d) + (5 * pow(z, 5) + 16 * z * z * z + 3 * z) / (96 * d * d);
}

/* CLOCK_MONOTONIC is one clock for all processes of a node, so starts and ends of different
 * ranks on one node can be compared. */
static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Statistics of n samples (seconds in, microseconds out); `scratch` holds n doubles. */
static void compute_stats(const double *t, long n, double *scratch, struct stats *s)
{
    double sum = 0, sq = 0;
    for (long i = 0; i < n; i++)
        sum += t[i];
    s->mean = sum / n;
    for (long i = 0; i < n; i++)
        sq += (t[i] - s->mean) * (t[i] - s->mean);
    s->stdev = n > 1 ? sqrt(sq / (n - 1)) : 0;
    s->ci = n > 1 ? t975(n - 1) * s->stdev / sqrt((double)n) : INFINITY;
    memcpy(scratch, t, (size_t)n * sizeof *t);
    qsort(scratch, (size_t)n, sizeof *scratch, cmp_double);
    s->min = scratch[0];
    s->max = scratch[n - 1];
    s->median = n % 2 ? scratch[n / 2] : 0.5 * (scratch[n / 2 - 1] + scratch[n / 2]);
    s->n = n;
    s->mean *= 1e6, s->median *= 1e6, s->min *= 1e6, s->max *= 1e6;
    s->stdev *= 1e6, s->ci *= 1e6;
}

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

/* Experiments timed on the root alone (other ranks contribute 0 to the max). */
static int root_timed(const struct options *o)
{
    return o->experiment == EXP_NBFT || o->experiment == EXP_BCAST_GATHER;
}

/* The largest power of two below `limit` (0 if none). */
static long top_mask(long limit)
{
    long hi = 0;
    for (long k = 1; k < limit; k <<= 1)
        hi = k;
    return hi;
}

/* One LMO collective: linear or binomial scatter / gather of m bytes per rank (root: tree node
 * 0). The in-order binomial tree (Open MPI's in_order_bmtree for root 0): node v's parent is v
 * with its lowest set bit cleared, its children v + 2^k below that bit (every 2^k < P for the
 * root), the subtree of v + 2^k holding min(2^k, P - v - 2^k) blocks. */
static void run_lmo_collective(const struct options *o, struct bufs *bf, int count, int rank,
                               int nprocs)
{
    const size_t m = (size_t)count;
    if (o->lmo_kind == LMO_LSCATTER || o->lmo_kind == LMO_LGATHER) {
        for (int r = 1; rank == 0 && r < nprocs; r++) {
            if (o->lmo_kind == LMO_LSCATTER)
                MPI_CHECK(MPI_Send(bf->big + (size_t)r * m, count, MPI_BYTE, r, LMO_TAG,
                                   MPI_COMM_WORLD));
            else
                MPI_CHECK(MPI_Recv(bf->big + (size_t)r * m, count, MPI_BYTE, r, LMO_TAG,
                                   MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        }
        if (rank != 0 && o->lmo_kind == LMO_LSCATTER)
            MPI_CHECK(MPI_Recv(bf->b, count, MPI_BYTE, 0, LMO_TAG, MPI_COMM_WORLD,
                               MPI_STATUS_IGNORE));
        if (rank != 0 && o->lmo_kind == LMO_LGATHER)
            MPI_CHECK(MPI_Send(bf->a, count, MPI_BYTE, 0, LMO_TAG, MPI_COMM_WORLD));
        return;
    }
    const long v = bf->node, P = nprocs;
    const long lowbit = v & -v, hi = top_mask(v == 0 ? P : lowbit);
    const long own = v == 0 ? P : (lowbit < P - v ? lowbit : P - v);
    const int parent = v == 0 ? -1 : bf->map[v & (v - 1)];
    if (o->lmo_kind == LMO_BSCATTER) {
        if (parent >= 0)
            MPI_CHECK(MPI_Recv(bf->big, (int)(own * count), MPI_BYTE, parent, LMO_TAG,
                               MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        for (long mask = hi; mask >= 1; mask >>= 1)
            if (v + mask < P)
                MPI_CHECK(MPI_Send(bf->big + (size_t)mask * m,
                                   (int)((mask < P - v - mask ? mask : P - v - mask) * count),
                                   MPI_BYTE, bf->map[v + mask], LMO_TAG, MPI_COMM_WORLD));
        return;
    }
    for (long mask = 1; mask <= hi; mask <<= 1)
        if (v + mask < P)
            MPI_CHECK(MPI_Recv(bf->big + (size_t)mask * m,
                               (int)((mask < P - v - mask ? mask : P - v - mask) * count),
                               MPI_BYTE, bf->map[v + mask], LMO_TAG, MPI_COMM_WORLD,
                               MPI_STATUS_IGNORE));
    if (parent >= 0)
        MPI_CHECK(MPI_Send(bf->big, (int)(own * count), MPI_BYTE, parent, LMO_TAG,
                           MPI_COMM_WORLD));
}

static void run_experiment(const struct options *o, struct bufs *bf, int count)
{
    int rank = 0, nprocs = 0;
    MPI_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MPI_CHECK(MPI_Comm_size(MPI_COMM_WORLD, &nprocs));
    if (o->experiment == EXP_LMO_SCAN || o->experiment == EXP_LMO_BINOMIAL) {
        run_lmo_collective(o, bf, count, rank, nprocs);
        return;
    }
    if (o->experiment == EXP_NBFT) {
        if (rank == 0) {
            for (int r = 1; r < nprocs; r++)
                MPI_CHECK(MPI_Isend(bf->a, count, MPI_BYTE, r, 77, MPI_COMM_WORLD, &bf->reqs[r - 1]));
/* MPICH defines MPI_STATUSES_IGNORE as (MPI_Status *)1, which GCC 12 takes for a zero-size
 * array (a false -Wstringop-overflow). */
#if defined(MPICH_VERSION) && defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wstringop-overflow"
#endif
            MPI_CHECK(MPI_Waitall(nprocs - 1, bf->reqs, MPI_STATUSES_IGNORE));
#if defined(MPICH_VERSION) && defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif
        } else {
            MPI_CHECK(MPI_Irecv(bf->a, count, MPI_BYTE, 0, 77, MPI_COMM_WORLD, &bf->reqs[0]));
            MPI_CHECK(MPI_Wait(&bf->reqs[0], MPI_STATUS_IGNORE));
        }
        return;
    }
    int g = (unsigned long long)count < o->gather_size ? count : (int)o->gather_size;
    MPI_CHECK(MPI_Bcast(bf->a, count, MPI_BYTE, 0, MPI_COMM_WORLD));
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0) {
        for (int r = 1; r < nprocs; r++)
            MPI_CHECK(MPI_Recv(bf->gather + (size_t)r * o->gather_size, g, MPI_BYTE, r, 78,
                               MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    } else {
        MPI_CHECK(MPI_Send(bf->a, g, MPI_BYTE, 0, 78, MPI_COMM_WORLD));
    }
}

/* The buffer holding the call's result (bcast: its one buffer). */
static unsigned char *result_buffer(const struct options *o, const struct bufs *bf)
{
    return COLLS[o->coll].data == D_BCAST ? bf->a : bf->b;
}

/* Bytes of this rank's result at the current size. */
static size_t result_bytes(const struct options *o, const struct bufs *bf, int rank, int nprocs)
{
    return coll_result_bytes(&COLLS[o->coll], &bf->shape, rank, nprocs);
}

static void prepare(const struct options *o, struct bufs *bf, int rank, int nprocs,
                    unsigned long long m)
{
    if (o->coll == COLL_NONE)   /* LMO experiments: data not checked */
        return;
    coll_shape(&COLLS[o->coll], m, nprocs, &bf->shape);
    coll_prepare(&COLLS[o->coll], bf->a, bf->b, &bf->shape, rank, nprocs, m);
}

/* The first wrong byte of this rank's result, -1 if none (reduce, gather: the root's only). */
static long verify(const struct options *o, const struct bufs *bf, int rank, int nprocs,
                   unsigned long long m)
{
    if (o->coll == COLL_NONE)
        return -1;
    const struct coll_spec *c = &COLLS[o->coll];
    const unsigned char *res = result_buffer(o, bf);
    if (c->root_only && c->data != D_SCATTER && rank != 0)
        return -1;
    for (size_t j = 0, n = result_bytes(o, bf, rank, nprocs); j < n; j++) {
        int want = coll_expected(c, j, &bf->shape, rank, nprocs, m);
        if (want >= 0 && res[j] != (unsigned)want)
            return (long)j;
    }
    return -1;
}

/* Abort (exit 5) when the call just made gave a wrong result; `method` names the paired-mode
 * method (NULL in the per-launch mode). --fault corrupt@M damages the last byte of one rank's
 * result first (test hook). */
static void check_result(const struct options *o, struct bufs *bf, int rank, int nprocs,
                         unsigned long long m, const char *method)
{
    size_t n = o->coll == COLL_NONE ? 0 : result_bytes(o, bf, rank, nprocs);
    if (o->fault == FAULT_CORRUPT && m == o->fault_size && n > 0 &&
        rank == coll_fault_rank(&COLLS[o->coll], nprocs))
        result_buffer(o, bf)[n - 1] ^= 0xffu;
    long bad = verify(o, bf, rank, nprocs, m);
    if (bad < 0)
        return;
    fprintf(stderr, "collsel_bench: rank %d: wrong result at byte %ld of a %llu-byte %s", rank,
            bad, m, COLLS[o->coll].name);
    if (method)
        fprintf(stderr, " (method %s)", method);
    fprintf(stderr, "\n");
    MPI_Abort(MPI_COMM_WORLD, 5);
}

/* ---- Forcing through MPI_T control variables (paired mode) ---- */

struct cvar {
    char name[128];
    MPI_T_cvar_handle handle;
    MPI_Datatype type;
    MPI_T_enum enumtype;
    int scope;                  /* MPI_T_SCOPE_*: constant / readonly ones refuse writes */
    long long initial;          /* the value before this program wrote it */
    char desc[2048];
};

union cvar_value {
    int i;
    unsigned u;
    long l;
    unsigned long ul;
    long long ll;
    unsigned long long ull;
    char pad[64];
};

static int cvar_read(const struct cvar *c, long long *v)
{
    union cvar_value x;
    memset(&x, 0, sizeof x);
    if (MPI_T_cvar_read(c->handle, &x) != MPI_SUCCESS)
        return -1;
    if (c->type == MPI_INT) *v = x.i;
    else if (c->type == MPI_C_BOOL) *v = x.ull != 0;   /* zeroed first: any width */
    else if (c->type == MPI_UNSIGNED) *v = x.u;
    else if (c->type == MPI_LONG) *v = x.l;
    else if (c->type == MPI_UNSIGNED_LONG) *v = (long long)x.ul;
    else if (c->type == MPI_LONG_LONG) *v = x.ll;
    else if (c->type == MPI_UNSIGNED_LONG_LONG) *v = (long long)x.ull;
    else return -1;
    return 0;
}

/* 0 when the variable exists, is bound to no object, and its current value was read. */
static int cvar_open(const char *name, struct cvar *c)
{
    int index = 0, count = 0, verbosity = 0, bind = 0;
    char vname[256];
    int vlen = sizeof vname, dlen = sizeof c->desc;
    snprintf(c->name, sizeof c->name, "%s", name);
    c->desc[0] = '\0';
    if (MPI_T_cvar_get_index(name, &index) != MPI_SUCCESS ||
        MPI_T_cvar_get_info(index, vname, &vlen, &verbosity, &c->type, &c->enumtype, c->desc,
                            &dlen, &bind, &c->scope) != MPI_SUCCESS ||
        bind != MPI_T_BIND_NO_OBJECT ||
        MPI_T_cvar_handle_alloc(index, NULL, &c->handle, &count) != MPI_SUCCESS || count != 1)
        return -1;
    return cvar_read(c, &c->initial);
}

/* Write v and read it back: 0 when the variable now holds v. */
static int cvar_set(const struct cvar *c, long long v)
{
    union cvar_value x;
    memset(&x, 0, sizeof x);
    if (c->type == MPI_INT) x.i = (int)v;
    else if (c->type == MPI_UNSIGNED) x.u = (unsigned)v;
    else if (c->type == MPI_LONG) x.l = (long)v;
    else if (c->type == MPI_UNSIGNED_LONG) x.ul = (unsigned long)v;
    else if (c->type == MPI_LONG_LONG) x.ll = v;
    else if (c->type == MPI_UNSIGNED_LONG_LONG) x.ull = (unsigned long long)v;
    else return -1;
    long long back = 0;
    if (MPI_T_cvar_write(c->handle, &x) != MPI_SUCCESS || cvar_read(c, &back) != 0)
        return -1;
    return back == v ? 0 : -1;
}

/* Enumeration item i of the variable: 0 on success. */
static int enum_item(const struct cvar *c, int i, long long *value, char *name, int size)
{
    int v = 0, len = size;
    if (MPI_T_enum_get_item(c->enumtype, i, &v, name, &len) != MPI_SUCCESS)
        return -1;
    *value = v;
    return 0;
}

static int enum_count(const struct cvar *c)
{
    int n = 0, len = 0;
    if (c->enumtype == MPI_T_ENUM_NULL || MPI_T_enum_get_info(c->enumtype, &n, NULL, &len) !=
                                              MPI_SUCCESS)
        return 0;
    return n;
}

/* The enumeration item named `name` (exactly), or with value `value` when name is NULL;
 * 0 when found (the value through *value). `known` gets the list of the items. */
static int enum_lookup(const struct cvar *c, const char *name, long long *value, char *known,
                       size_t known_size)
{
    int found = -1;
    known[0] = '\0';
    for (int i = 0, n = enum_count(c); i < n; i++) {
        char item[MAX_TOKEN] = "";
        long long v = 0;
        if (enum_item(c, i, &v, item, sizeof item) != 0)
            continue;
        if (found < 0 && (name ? strcmp(item, name) == 0 : v == *value)) {
            found = i;
            *value = v;
        }
        size_t used = strlen(known);
        if (name)
            snprintf(known + used, known_size - used, "%s%s", used ? ", " : "", item);
        else
            snprintf(known + used, known_size - used, "%s%lld", used ? ", " : "", v);
    }
    return found >= 0 ? 0 : -1;
}

/* MPICH 4.0 exposes its algorithm choices as plain MPI_INT variables without an MPI_T
 * enumeration; the values are the C enum's, in the order the description lists them as
 * "name   - text" entries (newlines stripped: "...algorithmauto - Internal...binomial  - Force
 * Binomial Treenb  - Force..."). The value of `name` = the number of " - " entry markers
 * before its own entry; 0 when found. An entry is `name` followed by spaces and "- ", not
 * preceded by '_' (so "tree" does not match "pipelined_tree"). */
static int described_value(const struct cvar *c, const char *name, long long *value)
{
    size_t len = strlen(name);
    for (const char *p = strstr(c->desc, name); p; p = strstr(p + 1, name)) {
        const char *q = p + len;
        while (*q == ' ')
            q++;
        if (q == p + len || q[0] != '-' || q[1] != ' ' || (p > c->desc && p[-1] == '_'))
            continue;
        long long markers = 0;
        for (const char *r = strstr(c->desc, " - "); r && r < p; r = strstr(r + 1, " - "))
            markers++;
        *value = markers;
        return 0;
    }
    return -1;
}

/* The value of the MPICH algorithm `name`: through the MPI_T enumeration where the variable
 * has one, else from its description. */
static int mpich_value(const struct cvar *c, const char *name, long long *value, char *known,
                       size_t known_size)
{
    if (enum_count(c) > 0)
        return enum_lookup(c, name, value, known, known_size);
    snprintf(known, known_size, "see MPICH's description of %s", c->name);
    return described_value(c, name, value);
}

struct forcing {
    struct cvar alg;            /* MPICH: written before every call of a method */
    int per_call;
    char fallback[MAX_TOKEN];   /* MPICH: MPIR_CVAR_COLLECTIVE_FALLBACK, for the header */
};

/* All ranks agree on the worst outcome (0 ok, 2 usage, 6 forcing failed); the lowest rank
 * with that outcome prints its message. Returns the outcome. */
static int agree(int code, const char *msg, int rank)
{
    int worst = 0, who = INT_MAX, first = INT_MAX;
    MPI_CHECK(MPI_Allreduce(&code, &worst, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD));
    if (worst == 0)
        return 0;
    if (code == worst)
        who = rank;
    MPI_CHECK(MPI_Allreduce(&who, &first, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD));
    if (rank == first)
        fprintf(stderr, "collsel_bench: %s\n", msg);
    return worst;
}

static const char *coll_name(const struct options *o)
{
    return o->coll >= 0 && o->coll < NCOLLECTIVES ? COLLS[o->coll].name : "none";
}

/* Open MPI's variables of the collective: algorithm, segment size, then the ones F writes
 * (COLLS[].fan_vars); have[i] = 0 where this MPI has none. */
#define NVARS 5

/* Open MPI: write algorithm, segment size and fan-outs (F; 0: the value the process started
 * with) of method mt, read each back; 0 or 6 with a message. */
static int force_openmpi_method(struct cvar *cv, const int *have, const struct method *mt,
                                char *msg, size_t msg_size)
{
    for (int i = 0; i < NVARS; i++) {
        long long want = i == 0 ? atoll(mt->alg) : i == 1 ? (long long)mt->segsize
                         : mt->fanout ? mt->fanout : cv[i].initial;
        if (have[i] && cvar_set(&cv[i], want) != 0) {
            int fixed = cv[i].scope == MPI_T_SCOPE_CONSTANT || cv[i].scope == MPI_T_SCOPE_READONLY;
            snprintf(msg, msg_size, "forcing did not take: cannot set %s=%lld for method "
                     "%s:%llu:%ld (%s)", cv[i].name, want, mt->alg, mt->segsize, mt->fanout,
                     fixed ? "read-only for MPI_T in this MPI: force it per launch, --mca"
                     : "write refused or reads back different");
            return 6;
        }
    }
    return 0;
}

/* Open MPI, a hierarchical method: its group communicator split while the variables name the
 * inner algorithm, the leaders' while they name the outer one; the splits' cost measured. */
static int split_hier(struct cvar *cv, const int *have, struct method *mt, int rank, char *msg,
                      size_t msg_size)
{
    int nprocs, code;
    MPI_CHECK(MPI_Comm_size(MPI_COMM_WORLD, &nprocs));
    int groups = mt->groups < nprocs ? mt->groups : nprocs;
    int color = (int)((long long)rank * groups / nprocs);
    int first = (int)(((long long)color * nprocs + groups - 1) / groups);   /* group's rank 0 */
    struct method level = *mt;
    level.groups = 0;
    level.segsize = 0;
    level.fanout = 0;
    snprintf(level.alg, sizeof level.alg, "%d", mt->inner);
    if ((code = force_openmpi_method(cv, have, &level, msg, msg_size)) != 0)
        return code;
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    double t0 = now();
    MPI_CHECK(MPI_Comm_split(MPI_COMM_WORLD, color, rank, &mt->group));
    double spent = now() - t0;
    snprintf(level.alg, sizeof level.alg, "%d", mt->outer);
    if ((code = force_openmpi_method(cv, have, &level, msg, msg_size)) != 0)
        return code;
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    t0 = now();
    MPI_CHECK(MPI_Comm_split(MPI_COMM_WORLD, rank == first ? 0 : MPI_UNDEFINED, rank,
                             &mt->leaders));
    spent += now() - t0;
    MPI_CHECK(MPI_Allreduce(&spent, &mt->split_us, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD));
    mt->split_us *= 1e6;
    return 0;
}

/* Open MPI: one communicator per method, dup'ed right after its control variables were set
 * (coll/tuned copies them into the communicator's module when it is created). */
static int force_openmpi(struct options *o, int rank)
{
    struct cvar cv[NVARS], dyn;
    int have[NVARS];
    memset(cv, 0, sizeof cv);
    memset(have, 0, sizeof have);
    char msg[8192] = "", known[4096], fans[128];
    int code = 0;
    /* the variables this MPI has, read from MPI_T: algorithm, segmentsize, fan_vars */
    const char *suffix[NVARS] = {"", "_segmentsize", NULL, NULL, NULL};
    char *save = NULL;
    snprintf(fans, sizeof fans, "%s", COLLS[o->coll].fan_vars);
    for (int i = 2; i < NVARS; i++)
        if ((suffix[i] = strtok_r(i == 2 ? fans : NULL, ",", &save)) == NULL)
            break;
    for (int i = 0; i < NVARS && suffix[i]; i++) {
        char name[128];
        snprintf(name, sizeof name, "coll_tuned_%s_algorithm%s%s", coll_name(o),
                 i > 1 ? "_" : "", suffix[i]);
        have[i] = cvar_open(name, &cv[i]) == 0;
        if (!have[i])
            snprintf(cv[i].name, sizeof cv[i].name, "%s", name);
        if (!have[i] && i == 0) {
            snprintf(msg, sizeof msg, "forcing did not take: no control variable %s "
                     "(coll/tuned not loaded?)", name);
            code = 6;
        }
    }
    for (int k = 0; !code && k < o->nmethods; k++) {   /* S and F need their variables */
        const struct method *mt = &o->methods[k];
        int fan = have[2] || have[3] || have[4];
        if ((mt->segsize && !have[1]) || (mt->fanout && !fan)) {
            snprintf(msg, sizeof msg, "forcing did not take: method %s:%llu:%ld needs %s, and "
                     "this MPI has no such control variable", mt->alg, mt->segsize, mt->fanout,
                     mt->segsize && !have[1] ? cv[1].name : "a fan-in/out variable (coll_tuned_"
                     "<coll>_algorithm_{chain_fanout,tree_fanout,max_requests})");
            code = 6;
        }
    }
    int forced = 0;
    for (int k = 0; k < o->nmethods; k++)
        forced |= atoll(o->methods[k].alg) != 0;
    long long dynamic = 0;
    if (!code && forced &&
        (cvar_open("coll_tuned_use_dynamic_rules", &dyn) != 0 || cvar_read(&dyn, &dynamic) ||
         !dynamic)) {
        snprintf(msg, sizeof msg, "forcing did not take: coll_tuned_use_dynamic_rules is off, "
                 "so coll/tuned ignores forced algorithms (launch with --mca "
                 "coll_tuned_use_dynamic_rules 1)");
        code = 6;
    }
    for (int k = 0; !code && k < o->nmethods && enum_count(&cv[0]) > 0; k++) {
        const struct method *mt = &o->methods[k];
        long long levels[2] = {mt->groups ? mt->inner : atoll(mt->alg), mt->outer};
        for (int l = 0; l < (mt->groups ? 2 : 1) && !code; l++)
            if (enum_lookup(&cv[0], NULL, &levels[l], known, sizeof known) != 0) {
                snprintf(msg, sizeof msg, "--methods: '%s'%s is not a coll/tuned %s algorithm "
                         "(known: %s)", mt->alg, mt->groups ? (l ? " (outer)" : " (inner)") : "",
                         coll_name(o), known);
                code = 2;
            }
    }
    if ((code = agree(code, msg, rank)) != 0)
        return code;
    for (int k = 0; k < o->nmethods; k++) {
        struct method *mt = &o->methods[k];
        if (mt->groups) {
            code = split_hier(cv, have, mt, rank, msg, sizeof msg);
            if ((code = agree(code, msg, rank)) != 0)
                return code;
            MPI_CHECK(MPI_Comm_dup(MPI_COMM_WORLD, &mt->comm));
            continue;
        }
        code = force_openmpi_method(cv, have, mt, msg, sizeof msg);
        if ((code = agree(code, msg, rank)) != 0)
            return code;
        MPI_CHECK(MPI_Comm_dup(MPI_COMM_WORLD, &mt->comm));
        /* a method that refuses a size returns an error: unusable there, not fatal */
        MPI_CHECK(MPI_Comm_set_errhandler(mt->comm, MPI_ERRORS_RETURN));
    }
    for (int i = 0; i < NVARS; i++)   /* later communicators get the launch's own settings */
        if (have[i])
            cvar_set(&cv[i], cv[i].initial);
    return 0;
}

/* MPICH: the algorithm cvar is read at every call, so it is set before each call of a method
 * (select_method); here the names are resolved and every value is tried once. */
static int force_mpich(struct options *o, struct forcing *fs, int rank)
{
    char name[96], msg[8192] = "", known[4096];
    int code = 0;
    int at = snprintf(name, sizeof name, "MPIR_CVAR_");
    for (const char *p = COLLS[o->coll].name; *p; p++)
        name[at++] = (char)toupper((unsigned char)*p);
    snprintf(name + at, sizeof name - (size_t)at, "_INTRA_ALGORITHM");
    if (cvar_open(name, &fs->alg) != 0) {
        snprintf(msg, sizeof msg, "forcing did not take: no control variable %s", name);
        code = 6;
    }
    for (int k = 0; !code && k < o->nmethods; k++) {
        struct method *mt = &o->methods[k];
        if (mpich_value(&fs->alg, mt->alg, &mt->enum_value, known, sizeof known) != 0) {
            snprintf(msg, sizeof msg, "--methods: '%s' is not an MPICH %s algorithm (known: %s)",
                     mt->alg, coll_name(o), known);
            code = 2;
        } else if (cvar_set(&fs->alg, mt->enum_value) != 0) {
            snprintf(msg, sizeof msg, "forcing did not take: cannot set %s=%s (write refused "
                     "or reads back different)", name, mt->alg);
            code = 6;
        }
    }
    if (!code)
        cvar_set(&fs->alg, fs->alg.initial);
    struct cvar fallback;
    long long fb = 0;
    snprintf(fs->fallback, sizeof fs->fallback, "unknown");
    if (cvar_open("MPIR_CVAR_COLLECTIVE_FALLBACK", &fallback) == 0 &&
        cvar_read(&fallback, &fb) == 0) {
        const char *names[] = {"error", "print", "silent"};
        for (int i = 0; i < 3; i++) {
            long long v = -1;
            char known[8];
            if (mpich_value(&fallback, names[i], &v, known, sizeof known) == 0 && v == fb)
                snprintf(fs->fallback, sizeof fs->fallback, "%s", names[i]);
        }
    }
    if ((code = agree(code, msg, rank)) != 0)
        return code;
    for (int k = 0; k < o->nmethods; k++) {   /* uniform with Open MPI: a communicator each */
        MPI_CHECK(MPI_Comm_dup(MPI_COMM_WORLD, &o->methods[k].comm));
        MPI_CHECK(MPI_Comm_set_errhandler(o->methods[k].comm, MPI_ERRORS_RETURN));
    }
    fs->per_call = 1;
    return 0;
}

static int setup_forcing(struct options *o, struct forcing *fs, int rank)
{
    fs->per_call = 0;
    fs->fallback[0] = '\0';
    if (strcmp(MPI_FAMILY, "openmpi") == 0)
        return force_openmpi(o, rank);
    if (strcmp(MPI_FAMILY, "mpich") == 0)
        return force_mpich(o, fs, rank);
    return agree(6, "forcing did not take: paired mode needs Open MPI or MPICH", rank);
}

/* MPICH: set method k's algorithm right before its call and the launch's own setting right
 * after (both outside the timed region), so the barriers between calls, which MPICH builds from
 * bcast internally, do not run the forced algorithm (smp there is an error on one node).
 * k < 0 (per-launch mode) and Open MPI: nothing to do, the communicator carries the method. */
static void select_method(const struct options *o, const struct forcing *fs, int k, int on)
{
    if (!fs->per_call || k < 0)
        return;
    long long v = on ? o->methods[k].enum_value : fs->alg.initial;
    if (cvar_set(&fs->alg, v) != 0) {
        fprintf(stderr, "collsel_bench: forcing did not take: cannot set %s=%lld\n",
                fs->alg.name, v);
        MPI_Abort(MPI_COMM_WORLD, 6);
    }
}

/* ---- Measuring ---- */

struct samples {
    /* Per repetition (per round and method in paired mode, index round * nmethods + k):
     * every rank's start and end-or-duration; on rank 0 the slowest rank's time. */
    double *local, *starts, *maxed, *minstart;
    double *column, *scratch;   /* rank 0: one method's times, and compute_stats' scratch */
    int *order;                 /* paired mode: the call order of each round */
};

/* `#@skipped=M,...`: the sizes at which the collective has no call (m < P for a sum of counts),
 * skipped for every method; nothing when there are none. */
static void skipped_header(FILE *out, const struct options *o, int nprocs)
{
    int n = 0;
    for (int i = 0; o->coll != COLL_NONE && i < o->nsizes; i++)
        if (coll_count(&COLLS[o->coll], o->sizes[i], nprocs) < 0)
            fprintf(out, "%s%llu", n++ ? "," : "#@skipped=", o->sizes[i]);
    if (n)
        fprintf(out, "\n");
}

static void print_header(FILE *out, const struct options *o, const struct forcing *fs,
                         int nprocs, int global, const char *rank_hosts)
{
    char host[256] = "unknown", lib[MPI_MAX_LIBRARY_VERSION_STRING] = "";
    int len = 0, major = 0, minor = 0;
    const char *coll = coll_name(o);
    char var[128];
    gethostname(host, sizeof host - 1);
    MPI_CHECK(MPI_Get_library_version(lib, &len));
    MPI_CHECK(MPI_Get_version(&major, &minor));
    for (char *p = lib; *p; p++)   /* one line per key */
        if (*p == '\n' || *p == '\r') *p = ' ';
    while (len > 0 && (lib[len - 1] == ' ' || lib[len - 1] == '\0')) lib[--len] = '\0';
    fprintf(out, "#@collsel_bench_version=%s\n", BENCH_VERSION);
    fprintf(out, "#@host=%s\n", host);
    fprintf(out, "#@mpi_library=%s\n", lib);
    fprintf(out, "#@mpi_version=%d.%d\n", major, minor);
    fprintf(out, "#@collective=%s\n", coll);
    fprintf(out, "#@nprocs=%d\n", nprocs);
    if (rank_hosts)
        fprintf(out, "#@rank_hosts=%s\n", rank_hosts);
    fprintf(out, "#@root=0\n");
    const int sum = o->coll != COLL_NONE && COLLS[o->coll].data >= D_REDUCE &&
                    COLLS[o->coll].data <= D_EXSCAN;
    fprintf(out, "#@datatype=%s\n", sum || o->coll == COLL_NONE ? "MPI_UNSIGNED_CHAR" : "MPI_BYTE");
    if (sum || o->coll == COLL_NONE)
        fprintf(out, "#@op=MPI_SUM\n");
    skipped_header(out, o, nprocs);
    struct timespec res;
    clock_getres(CLOCK_MONOTONIC, &res);
    fprintf(out, "#@timer=clock_gettime(CLOCK_MONOTONIC)\n#@timer_resolution_s=%g\n",
            (double)res.tv_sec + 1e-9 * (double)res.tv_nsec);
    fprintf(out, "#@sync=MPI_Barrier\n");
    fprintf(out, "#@runtime_type=%s\n", global ? "global_max_end_minus_min_start"
                                               : "max_over_ranks_of_local_time");
    if (o->experiment == EXP_NBFT || o->experiment == EXP_BCAST_GATHER)
        fprintf(out, "#@experiment=%s\n#@gather_size=%llu\n",
                o->experiment == EXP_NBFT ? "nbft" : "bcast-gather", o->gather_size);
    if (o->experiment == EXP_LMO)
        fprintf(out, "#@experiment=lmo\n#@schedule=%s\n#@timing=sender\n",
                o->serial ? "serial" : "parallel");
    if (o->experiment == EXP_LMO_SCAN || o->experiment == EXP_LMO_BINOMIAL)
        fprintf(out, "#@experiment=%s\n#@mapping=%s\n",
                o->experiment == EXP_LMO_SCAN ? "lmo-scan" : "lmo-binomial",
                o->mapping_arg ? o->mapping_arg : "identity");
    fprintf(out, "#@min_reps=%ld\n#@max_reps=%ld\n#@warmup=%ld\n", o->min_reps, o->max_reps,
            o->warmup);
    fprintf(out, "#@rel_ci=%g\n#@ci_level=0.95\n#@time_cap_s=%g\n", o->rel_ci, o->time_cap);
    /* MCA parameters the launch received (per-launch mode: they force the algorithm). */
    const char *suffixes[] = {"use_dynamic_rules", "algorithm", "algorithm_segmentsize"};
    for (int i = 0; i < 3 && o->coll != COLL_NONE &&
                    !(o->methods_arg && strcmp(MPI_FAMILY, "openmpi") != 0); i++) {
        if (i == 0)
            snprintf(var, sizeof var, "OMPI_MCA_coll_tuned_%s", suffixes[i]);
        else
            snprintf(var, sizeof var, "OMPI_MCA_coll_tuned_%s_%s", coll, suffixes[i]);
        const char *v = getenv(var);
        fprintf(out, "#@%s=%s\n", var + 9, v ? v : "");
    }
    if (o->methods_arg) {
        fprintf(out, "#@mode=paired\n#@seed=%llu\n#@methods=%s\n#@forcing=mpi_t\n",
                o->seed, o->methods_arg);
        probe_header(out);
        fprintf(out, "#@mpi_family=%s\n", MPI_FAMILY);
        for (int k = 0, n = 0; k < o->nmethods; k++)   /* hierarchical: the splits' cost */
            if (o->methods[k].groups)
                fprintf(out, "%s%s=%.6g", n++ ? "," : "#@hier_split_us=", o->methods[k].alg,
                        o->methods[k].split_us);
        for (int k = 0; k < o->nmethods; k++)
            if (o->methods[k].groups) {
                fprintf(out, "\n");
                break;
            }
        if (fs->per_call) {   /* MPICH: what each name resolved to */
            fprintf(out, "#@collective_fallback=%s\n#@algorithm_cvar=%s\n#@algorithm_values=",
                    fs->fallback, fs->alg.name);
            for (int k = 0; k < o->nmethods; k++)
                fprintf(out, "%s%s=%lld", k ? "," : "", o->methods[k].alg,
                        o->methods[k].enum_value);
            fprintf(out, "\n");
        }
    }
}

/* A hierarchical method (see the top comment); the reduce's group result goes through bf->tmp
 * on the leaders. */
static void run_hier(const struct options *o, struct bufs *bf, int count, const struct method *mt)
{
    if (o->coll == COLL_BCAST) {
        if (mt->leaders != MPI_COMM_NULL)
            MPI_CHECK(MPI_Bcast(bf->a, count, MPI_BYTE, 0, mt->leaders));
        MPI_CHECK(MPI_Bcast(bf->a, count, MPI_BYTE, 0, mt->group));
        return;
    }
    MPI_CHECK(MPI_Reduce(bf->a, bf->tmp, count, MPI_UNSIGNED_CHAR, MPI_SUM, 0, mt->group));
    if (mt->leaders != MPI_COMM_NULL)
        MPI_CHECK(MPI_Reduce(bf->tmp, bf->b, count, MPI_UNSIGNED_CHAR, MPI_SUM, 0, mt->leaders));
}

/* One call; its MPI error code (the per-method communicators return errors, see
 * force_openmpi; experiments, hierarchical methods and the per-launch mode abort instead). */
static int run_once(const struct options *o, struct bufs *bf, unsigned long long m, MPI_Comm comm,
                    int k)
{
    if (k >= 0 && o->methods[k].groups)
        run_hier(o, bf, (int)m, &o->methods[k]);
    else if (o->experiment != EXP_NONE)
        run_experiment(o, bf, (int)m);
    else
        return COLLS[o->coll].call(bf->a, bf->b, &bf->shape, comm);
    return MPI_SUCCESS;
}

/* All ranks: whether a call of method k failed on any rank (its communicator returns errors);
 * the per-launch mode stops at once, as MPI_CHECK would. */
static int failed_anywhere(int rc, int k)
{
    int bad = rc != MPI_SUCCESS, any = 0;
    MPI_CHECK(MPI_Allreduce(&bad, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD));
    if (k < 0)
        MPI_CHECK(rc);
    return any;
}

/* Warm-up on `comm`; the first call is also checked for a correct result. Further warm-up
 * calls only while cheap: rank 0's first duration, returned to all ranks, decides. A method
 * whose first call fails (k >= 0) gets *failed = 1 and no more calls. */
static double warm_up(const struct options *o, const struct forcing *fs, struct bufs *bf,
                      int rank, int nprocs, unsigned long long m, MPI_Comm comm, int k,
                      int *failed)
{
    prepare(o, bf, rank, nprocs, m);
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    select_method(o, fs, k, 1);
    double first = now();
    int rc = run_once(o, bf, m, comm, k);
    first = now() - first;
    select_method(o, fs, k, 0);
    if ((*failed = failed_anywhere(rc, k)) != 0)
        return 0;
    check_result(o, bf, rank, nprocs, m, k >= 0 ? o->methods[k].alg : NULL);
    MPI_CHECK(MPI_Bcast(&first, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD));
    long extra = o->warmup > 1 ? o->warmup - 1 : 0;
    if (first > 0 && extra > (long)(0.1 * o->time_cap / first))
        extra = (long)(0.1 * o->time_cap / first);
    select_method(o, fs, k, 1);
    for (long w = 0; w < extra && rc == MPI_SUCCESS; w++)
        rc = run_once(o, bf, m, comm, k);
    select_method(o, fs, k, 0);
    *failed = failed_anywhere(rc, k);
    return first;
}

/* Repetition i: one call after a barrier, this rank's start and end (global) or duration.
 * k: the paired-mode method, -1 in the per-launch mode. Returns the call's error code. */
static int timed_call(const struct options *o, const struct forcing *fs, struct bufs *bf,
                      int rank, int global, unsigned long long m, MPI_Comm comm, int k,
                      struct samples *sp, long i)
{
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    select_method(o, fs, k, 1);
    double t0 = now();
    int rc = run_once(o, bf, m, comm, k);
    double t1 = now();
    select_method(o, fs, k, 0);
    if (k < 0)
        MPI_CHECK(rc);
    sp->starts[i] = t0;
    sp->local[i] = global ? t1 : t1 - t0;   /* end time, or duration */
    if (root_timed(o) && rank != 0)
        sp->local[i] = 0;                   /* the root's time only */
    return rc;
}

/* Rank 0: the slowest rank's time of repetitions [from, from + count). */
static void collect(struct samples *sp, long from, long count, int global, int rank)
{
    MPI_CHECK(MPI_Reduce(sp->local + from, sp->maxed + from, (int)count, MPI_DOUBLE, MPI_MAX, 0,
                         MPI_COMM_WORLD));
    if (global) {
        MPI_CHECK(MPI_Reduce(sp->starts + from, sp->minstart + from, (int)count, MPI_DOUBLE,
                             MPI_MIN, 0, MPI_COMM_WORLD));
        if (rank == 0)
            for (long i = from; i < from + count; i++)
                sp->maxed[i] -= sp->minstart[i];
    }
}

/* A batch's first size: --min-reps, but a point whose single call (or round) already costs
 * more than the time cap still gets two timed repetitions (a spread needs two). */
static long first_batch(const struct options *o, double first)
{
    long batch = o->min_reps;
    if (first > 0 && batch > (long)(o->time_cap / first))
        batch = (long)(o->time_cap / first) < 2 ? 2 : (long)(o->time_cap / first);
    return batch;
}

/* Rank 0: how many more repetitions after n, 0 = stop. `met`: the CI target holds (for every
 * method); `ratio`: CI / (rel_ci * mean) (the largest over methods). Reps the CI target needs
 * (CI shrinks as 1/sqrt(n)), bounded by the remaining time and reps; at least one, at most
 * doubling. */
static long next_batch(const struct options *o, long n, double spent, int met, double ratio)
{
    if ((n >= o->min_reps && met) || n >= o->max_reps || spent >= o->time_cap)
        return 0;
    double need = n * ratio * ratio - n;
    double per_rep = spent / n;
    double afford = (o->time_cap - spent) / (per_rep > 0 ? per_rep : 1e-9);
    if (need > afford) need = afford;
    if (need > n) need = n;
    if (need > o->max_reps - n) need = o->max_reps - n;
    return need < 1 ? 1 : (long)ceil(need);
}

static void print_stats(const struct stats *st)
{
    printf("%.6g %.6g %.6g %.6g %.6g %.6g %ld", st->mean, st->median, st->min, st->max,
           st->stdev, st->ci, st->n);
}

/* One point on MPI_COMM_WORLD until the CI target: its statistics on rank 0. */
static void measure_point(const struct options *o, const struct forcing *fs, struct bufs *bf,
                          struct samples *sp, int rank, int nprocs, int global,
                          unsigned long long m, struct stats *out)
{
    int failed = 0;
    double first = warm_up(o, fs, bf, rank, nprocs, m, MPI_COMM_WORLD, -1, &failed);
    long n = 0, batch = first_batch(o, first);
    struct stats st = {0, 0, 0, 0, 0, 0, 0};
    double start = now();
    while (batch > 0) {
        for (long i = n; i < n + batch; i++)
            timed_call(o, fs, bf, rank, global, m, MPI_COMM_WORLD, -1, sp, i);
        collect(sp, n, batch, global, rank);
        n += batch;
        long next = 0;
        if (rank == 0) {
            compute_stats(sp->maxed, n, sp->scratch, &st);
            next = next_batch(o, n, now() - start, st.ci <= o->rel_ci * st.mean,
                              st.ci / (o->rel_ci * st.mean));
        }
        MPI_CHECK(MPI_Bcast(&next, 1, MPI_LONG, 0, MPI_COMM_WORLD));
        batch = next;
    }
    *out = st;
}

/* Per-launch mode: one collective on MPI_COMM_WORLD, the algorithm set from outside. */
static void measure_single(const struct options *o, const struct forcing *fs, struct bufs *bf,
                           struct samples *sp, int rank, int nprocs, int global,
                           unsigned long long m)
{
    struct stats st;
    measure_point(o, fs, bf, sp, rank, nprocs, global, m, &st);
    if (rank == 0) {
        printf("%llu ", m);
        print_stats(&st);
        printf(" %d\n", st.ci <= o->rel_ci * st.mean);
        fflush(stdout);
    }
}

/* ---- LMO experiments (Lastovetsky & Rychkov 2009) ---- */

/* One experiment: `root` sends to a (and b, one-to-two), the peers reply empty. `index`: its
 * place in the canonical output order of its kind. */
struct lmo_group {
    int root, a, b, index;
};

/* Which experiments run at once: groups[start[r] .. start[r + 1]) form round r. */
struct lmo_rounds {
    struct lmo_group *groups;
    int *start;
    int ngroups, nrounds;
};

struct lmo_schedule {
    struct lmo_rounds pairs;        /* round-trips, index = lexicographic pair number */
    struct lmo_rounds triplets;     /* one-to-two, root = first member, index = triplet number */
    int ntriplets;
};

static void lmo_line(enum lmo_kind kind, int root, int a, int b, unsigned long long m,
                     const struct stats *st, double rel_ci)
{
    printf("%s %d %d %d %llu ", LMO_KIND_NAMES[kind], root, a, b, m);
    print_stats(st);
    printf(" %d\n", st->ci <= rel_ci * st->mean);
}

/* Pairs root < a: round-robin rounds (circle method: n - 1 rounds of n / 2 pairs, a dummy
 * player when n is odd) in parallel, one pair a round serially. */
static void lmo_pair_rounds(int n, int serial, struct lmo_rounds *out, int rank)
{
    const int total = n * (n - 1) / 2, players = n + n % 2;
    out->groups = alloc_or_die((size_t)total * sizeof *out->groups, rank);
    out->start = alloc_or_die((size_t)(total + 1) * sizeof *out->start, rank);
    out->ngroups = out->nrounds = 0;
    for (int r = 0; r < (serial ? total : players - 1); r++) {
        out->start[out->nrounds++] = out->ngroups;
        for (int k = 0; k < (serial ? 1 : players / 2); k++) {
            int x = 0, y = 0;
            if (serial) {   /* pair number r, lexicographic */
                int rest = r;
                while (rest >= n - 1 - x)
                    rest -= n - 1 - x++;
                y = x + 1 + rest;
            } else {
                x = k == 0 ? players - 1 : (r + k) % (players - 1);
                y = (r - k + players - 1) % (players - 1);
            }
            if (x >= n || y >= n)
                continue;
            int lo = x < y ? x : y, hi = x < y ? y : x;
            struct lmo_group g = {lo, hi, -1, lo * (2 * n - lo - 1) / 2 + (hi - lo - 1)};
            out->groups[out->ngroups++] = g;
        }
    }
    out->start[out->nrounds] = out->ngroups;
}

/* Triplets i < j < k, numbered lexicographically: greedy rounds of disjoint triplets (each round
 * takes every unused triplet, in order, that shares no processor with those taken) in parallel,
 * one triplet a round serially. A group holds the triplet (root = i, a = j, b = k). */
static void lmo_triplet_rounds(int n, int serial, struct lmo_rounds *out, int rank)
{
    const int total = n * (n - 1) * (n - 2) / 6;
    struct lmo_group *all = alloc_or_die((size_t)(total ? total : 1) * sizeof *all, rank);
    char *used = alloc_or_die((size_t)(total ? total : 1), rank);
    char busy[LMO_MAX_PROCS];
    int t = 0;
    for (int i = 0; i < n; i++)
        for (int j = i + 1; j < n; j++)
            for (int k = j + 1; k < n; k++, t++) {
                struct lmo_group g = {i, j, k, t};
                all[t] = g;
                used[t] = 0;
            }
    out->groups = alloc_or_die((size_t)(total ? total : 1) * sizeof *out->groups, rank);
    out->start = alloc_or_die((size_t)(total + 1) * sizeof *out->start, rank);
    out->ngroups = out->nrounds = 0;
    for (int first = 0; first < total;) {
        out->start[out->nrounds++] = out->ngroups;
        memset(busy, 0, sizeof busy);
        for (int u = first; u < total && !(serial && out->ngroups > out->start[out->nrounds - 1]);
             u++) {
            const struct lmo_group *g = &all[u];
            if (used[u] || busy[g->root] || busy[g->a] || busy[g->b])
                continue;
            used[u] = 1;
            busy[g->root] = busy[g->a] = busy[g->b] = 1;
            out->groups[out->ngroups++] = *g;
        }
        while (first < total && used[first])
            first++;
    }
    out->start[out->nrounds] = out->ngroups;
    free(all);
    free(used);
}

/* One repetition of this rank's part of experiment g. */
static void lmo_call(enum lmo_kind kind, const struct lmo_group *g, int rank, struct bufs *bf,
                     int count)
{
    if (g->root == rank) {
        MPI_CHECK(MPI_Send(bf->a, count, MPI_BYTE, g->a, LMO_TAG, MPI_COMM_WORLD));
        if (kind == LMO_O2T)
            MPI_CHECK(MPI_Send(bf->a, count, MPI_BYTE, g->b, LMO_TAG, MPI_COMM_WORLD));
        MPI_CHECK(MPI_Recv(bf->b, 0, MPI_BYTE, g->a, LMO_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        if (kind == LMO_O2T)
            MPI_CHECK(MPI_Recv(bf->b, 0, MPI_BYTE, g->b, LMO_TAG, MPI_COMM_WORLD,
                               MPI_STATUS_IGNORE));
    } else {
        MPI_CHECK(MPI_Recv(bf->b, count, MPI_BYTE, g->root, LMO_TAG, MPI_COMM_WORLD,
                           MPI_STATUS_IGNORE));
        MPI_CHECK(MPI_Send(bf->a, 0, MPI_BYTE, g->root, LMO_TAG, MPI_COMM_WORLD));
    }
}

/* The experiments g[0 .. ng) at once (they share no processor): warm-up (the first call's data
 * checked on the receivers), then repetitions, each after an MPI_Barrier of all ranks, timed on
 * each root's clock, until every root meets the CI target (or --max-reps, or --time-cap for the
 * round). Rank 0 gets each experiment's statistics in res[index]. */
static void lmo_round(const struct options *o, struct bufs *bf, struct samples *sp, int rank,
                      int nprocs, enum lmo_kind kind, unsigned long long m,
                      const struct lmo_group *g, int ng, struct stats *res)
{
    const int count = kind == LMO_RT0 ? 0 : (int)m;
    const struct lmo_group *mine = NULL;
    for (int q = 0; q < ng && !mine; q++)
        if (g[q].root == rank || g[q].a == rank || (kind == LMO_O2T && g[q].b == rank))
            mine = &g[q];
    const int is_root = mine && mine->root == rank;
    double first = 0, first_all = 0;
    for (long w = 0; w < (o->warmup > 1 ? o->warmup : 1); w++) {
        MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
        double t0 = now();
        if (mine)
            lmo_call(kind, mine, rank, bf, count);
        if (w == 0)
            first = is_root ? now() - t0 : 0;
        for (size_t i = 0; w == 0 && mine && !is_root && i < (size_t)count; i++)
            if (bf->b[i] != pattern(i, m)) {
                fprintf(stderr, "collsel_bench: rank %d: wrong data at byte %zu of a %d-byte "
                        "%s message from rank %d\n", rank, i, count, LMO_KIND_NAMES[kind],
                        mine->root);
                MPI_Abort(MPI_COMM_WORLD, 5);
            }
    }
    MPI_CHECK(MPI_Allreduce(&first, &first_all, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD));
    long n = 0, batch = first_batch(o, first_all);
    struct stats st = {0, 0, 0, 0, 0, 0, 0};
    double start = now();
    while (batch > 0) {
        for (long i = n; i < n + batch; i++) {
            MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
            double t0 = now();
            if (mine)
                lmo_call(kind, mine, rank, bf, count);
            sp->local[i] = now() - t0;
        }
        n += batch;
        long next = 0;
        if (is_root) {
            compute_stats(sp->local, n, sp->scratch, &st);
            next = next_batch(o, n, now() - start, st.ci <= o->rel_ci * st.mean,
                              st.ci / (o->rel_ci * st.mean));
        }
        MPI_CHECK(MPI_Allreduce(&next, &batch, 1, MPI_LONG, MPI_MAX, MPI_COMM_WORLD));
    }
    double rec[8] = {is_root ? mine->index : -1, st.mean, st.median, st.min, st.max, st.stdev,
                     st.ci, (double)st.n};
    double *all = rank == 0 ? alloc_or_die((size_t)nprocs * sizeof rec, rank) : NULL;
    MPI_CHECK(MPI_Gather(rec, 8, MPI_DOUBLE, all, 8, MPI_DOUBLE, 0, MPI_COMM_WORLD));
    for (int r = 0; rank == 0 && r < nprocs; r++) {
        const double *x = all + 8 * (size_t)r;
        if (x[0] < 0)
            continue;
        struct stats s = {x[1], x[2], x[3], x[4], x[5], x[6], (long)x[7]};
        res[(long)x[0]] = s;
    }
    free(all);
}

/* --experiment lmo: rt0 once, then rt and o2t at every size; lines in canonical order. */
static void measure_lmo(const struct options *o, const struct lmo_schedule *sc, struct bufs *bf,
                        struct samples *sp, int rank, int nprocs)
{
    const int npairs = nprocs * (nprocs - 1) / 2;
    struct stats *res = alloc_or_die((size_t)(3 * sc->ntriplets > npairs ? 3 * sc->ntriplets
                                              : npairs) * sizeof *res, rank);
    for (int s = -1; s < o->nsizes; s++) {
        const unsigned long long m = s < 0 ? 0 : o->sizes[s];
        for (size_t i = 0; i < (size_t)m; i++)
            bf->a[i] = pattern(i, m);
        for (int kind = s < 0 ? LMO_RT0 : LMO_RT; kind <= (s < 0 ? LMO_RT0 : LMO_O2T); kind++) {
            const struct lmo_rounds *rd = kind == LMO_O2T ? &sc->triplets : &sc->pairs;
            for (int r = 0; r < rd->nrounds; r++) {
                const int from = rd->start[r], ng = rd->start[r + 1] - from;
                if (kind != LMO_O2T) {
                    lmo_round(o, bf, sp, rank, nprocs, kind, m, rd->groups + from, ng, res);
                    continue;
                }
                struct lmo_group rot[LMO_MAX_PROCS / 3];
                for (int q = 0; q < 3; q++) {   /* each member of the triplets as the root */
                    for (int u = 0; u < ng; u++) {
                        const struct lmo_group *t = &rd->groups[from + u];
                        const int who[3] = {t->root, t->a, t->b};
                        struct lmo_group g = {who[q], who[q == 0], who[q == 2 ? 1 : 2],
                                              3 * t->index + q};
                        rot[u] = g;
                    }
                    lmo_round(o, bf, sp, rank, nprocs, kind, m, rot, ng, res);
                }
            }
            if (rank != 0)
                continue;
            for (int i = 0, idx = 0; kind != LMO_O2T && i < nprocs; i++)
                for (int j = i + 1; j < nprocs; j++, idx++)
                    lmo_line(kind, i, j, -1, m, &res[idx], o->rel_ci);
            for (int i = 0, t = 0; kind == LMO_O2T && i < nprocs; i++)
                for (int j = i + 1; j < nprocs; j++)
                    for (int k = j + 1; k < nprocs; k++, t++) {
                        lmo_line(kind, i, j, k, m, &res[3 * t], o->rel_ci);
                        lmo_line(kind, j, i, k, m, &res[3 * t + 1], o->rel_ci);
                        lmo_line(kind, k, i, j, m, &res[3 * t + 2], o->rel_ci);
                    }
            fflush(stdout);
        }
    }
    free(res);
}

/* splitmix64 (Steele et al. 2014): a tiny PRNG whose stream depends only on the seed, so all
 * ranks shuffle alike without communicating. */
static uint64_t splitmix64(uint64_t *state)
{
    uint64_t z = (*state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

/* order = a uniformly shuffled 0..n-1 (Fisher-Yates; rejection sampling avoids modulo bias). */
static void shuffle(int *order, int n, uint64_t *state)
{
    for (int k = 0; k < n; k++)
        order[k] = k;
    for (int i = n - 1; i > 0; i--) {
        uint64_t bound = (uint64_t)i + 1, limit = UINT64_MAX - UINT64_MAX % bound, x;
        do
            x = splitmix64(state);
        while (x >= limit);
        int j = (int)(x % bound), t = order[i];
        order[i] = order[j];
        order[j] = t;
    }
}

/* Rank 0: statistics of every usable method (dead[k] == 0) over rounds [0, n); whether all
 * meet the CI target and the largest CI / target ratio. */
static int method_stats(const struct options *o, struct samples *sp, long n, const int *dead,
                        struct stats *st, double *ratio)
{
    int nm = o->nmethods, met = 1;
    *ratio = 0;
    for (int k = 0; k < nm; k++) {
        if (dead[k])
            continue;
        for (long r = 0; r < n; r++)
            sp->column[r] = sp->maxed[r * nm + k];
        compute_stats(sp->column, n, sp->scratch, &st[k]);
        met &= st[k].ci <= o->rel_ci * st[k].mean;
        double q = st[k].ci / (o->rel_ci * st[k].mean);
        if (!(q <= *ratio))
            *ratio = q;
    }
    return met;
}

/* Rank 0: every repetition of the size in call order, ReproMPI's per-repetition layout
 * (methods unusable at the size left out). */
static void write_raw(FILE *raw, const struct options *o, const struct samples *sp, long n,
                      unsigned long long m, const int *dead)
{
    int nm = o->nmethods;
    for (long r = 0; r < n; r++)
        for (int j = 0; j < nm; j++) {
            const struct method *mt = &o->methods[sp->order[r * nm + j]];
            if (dead[sp->order[r * nm + j]])
                continue;
            fprintf(raw, "%50s %10ld %12llu %14.10f %s %llu %ld\n",
                    COLLS[o->coll].function, r, m,
                    sp->maxed[r * nm + sp->order[r * nm + j]], mt->alg, mt->segsize, mt->fanout);
        }
    fflush(raw);
}

/* Rank 0: `#@unusable.M=A:S:F,...` (the methods whose call returned an MPI error at size m, on
 * some rank), before the size's lines; nothing when every method worked. */
static void unusable_line(const struct options *o, unsigned long long m, const int *dead)
{
    int n = 0;
    for (int k = 0; k < o->nmethods; k++)
        if (dead[k]) {
            const struct method *mt = &o->methods[k];
            if (n++ == 0)
                printf("#@unusable.%llu=", m);
            else
                printf(",");
            printf("%s:%llu:%ld", mt->alg, mt->segsize, mt->fanout);
        }
    if (n)
        printf("\n");
}

/* Paired mode: all methods of --methods at size m, interleaved in shuffled rounds. A method
 * whose call fails (MPI error on its communicator) is unusable at this size: no more calls of
 * it, no line, listed in `#@unusable.M=`; the others go on. */
static void measure_paired(const struct options *o, const struct forcing *fs, struct bufs *bf,
                           struct samples *sp, int rank, int nprocs, int global,
                           unsigned long long m, uint64_t *rng, FILE *raw)
{
    int nm = o->nmethods, dead[MAX_METHODS], failed[MAX_METHODS], alive = 0;
    struct stats st[MAX_METHODS];
    double round_first = 0, ratio = 0;
    for (int k = 0; k < nm; k++) {
        round_first += warm_up(o, fs, bf, rank, nprocs, m, o->methods[k].comm, k, &dead[k]);
        alive += !dead[k];
    }
    long n = 0, batch = alive ? first_batch(o, round_first) : 0;
    int met = 0;
    double start = now();
    while (batch > 0) {
        memset(failed, 0, sizeof failed);
        for (long r = n; r < n + batch; r++) {
            probe_round(r);
            shuffle(sp->order + r * nm, nm, rng);
            for (int j = 0; j < nm; j++) {
                int k = sp->order[r * nm + j];
                if (!dead[k] && !failed[k])
                    failed[k] = timed_call(o, fs, bf, rank, global, m, o->methods[k].comm, k,
                                           sp, r * nm + k) != MPI_SUCCESS;
                else
                    sp->local[r * nm + k] = sp->starts[r * nm + k] = 0;
            }
        }
        MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, failed, nm, MPI_INT, MPI_MAX, MPI_COMM_WORLD));
        for (int k = 0; k < nm; k++) {
            alive -= failed[k] && !dead[k];
            dead[k] |= failed[k];
        }
        collect(sp, n * nm, batch * nm, global, rank);
        n += batch;
        long next = 0;
        if (rank == 0 && alive) {
            met = method_stats(o, sp, n, dead, st, &ratio);
            next = next_batch(o, n, now() - start, met, ratio);
        }
        MPI_CHECK(MPI_Bcast(&next, 1, MPI_LONG, 0, MPI_COMM_WORLD));
        batch = next;
    }
    if (rank != 0)
        return;
    unusable_line(o, m, dead);
    for (int k = 0; k < nm; k++) {
        const struct method *mt = &o->methods[k];
        if (dead[k])
            continue;
        printf("%llu %s %llu %ld ", m, mt->alg, mt->segsize, mt->fanout);
        print_stats(&st[k]);
        printf(" %d", st[k].ci <= o->rel_ci * st[k].mean);
        probe_field();
        printf("\n");
    }
    probe_rounds_line(m);
    fflush(stdout);
    if (raw)
        write_raw(raw, o, sp, n, m, dead);
}

/* Global runtimes need one clock: all ranks on one node. */
static int use_global_clock(const struct options *o, int nprocs)
{
    if (root_timed(o) || o->experiment == EXP_LMO)
        return 0;   /* experiments are timed on the root's clock (paper section 6.1) */
    if (o->runtime != RUNTIME_AUTO)
        return o->runtime == RUNTIME_GLOBAL;
    MPI_Comm node;
    int node_size = 0;
    MPI_CHECK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node));
    MPI_CHECK(MPI_Comm_size(node, &node_size));
    MPI_CHECK(MPI_Comm_free(&node));
    return node_size == nprocs;
}

/* --mapping R0,R1,...: the rank playing each tree node, a permutation of 0..nprocs-1 (the
 * identity without it); map[v] and this rank's node. 0, or 2 after a usage message. */
static int parse_mapping(const struct options *o, int rank, int nprocs, int *map, int *node)
{
    char buf[65536];
    int n = 0;
    for (int v = 0; v < nprocs; v++)
        map[v] = v;
    if (o->mapping_arg) {
        if (strlen(o->mapping_arg) >= sizeof buf)
            return usage_error(rank, "%s", "--mapping list too long");
        strcpy(buf, o->mapping_arg);
        for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok;
             tok = strtok_r(NULL, ",", &save)) {
            long r = 0;
            if (n == nprocs || parse_long(tok, 0, nprocs - 1, &r) != 0)
                return usage_error(rank, "--mapping '%s' must list every rank 0..P-1 once",
                                   o->mapping_arg);
            for (int v = 0; v < n; v++)
                if (map[v] == (int)r)
                    return usage_error(rank, "--mapping '%s' must list every rank 0..P-1 once",
                                       o->mapping_arg);
            map[n++] = (int)r;
        }
        if (n != nprocs)
            return usage_error(rank, "--mapping '%s' must list every rank 0..P-1 once",
                               o->mapping_arg);
    }
    for (int v = 0; v < nprocs; v++)
        if (map[v] == rank)
            *node = v;
    return 0;
}

static void *alloc_or_die(size_t n, int rank)
{
    void *p = malloc(n ? n : 1);
    if (!p) {
        fprintf(stderr, "collsel_bench: rank %d: cannot allocate %zu bytes\n", rank, n);
        MPI_Abort(MPI_COMM_WORLD, 4);
    }
    return p;
}

/* Every rank's MPI_Get_processor_name, gathered to rank 0 and joined as "h0,h1,..." in rank
 * order (NULL on the other ranks), so a driver can check the ranks ran where its mapping says.
 * Characters a host name cannot hold become '?', so the list stays one comma-separated line. */
static char *gather_rank_hosts(int rank, int nprocs)
{
    char name[MPI_MAX_PROCESSOR_NAME] = "";
    int len = 0;
    MPI_CHECK(MPI_Get_processor_name(name, &len));
    const size_t width = MPI_MAX_PROCESSOR_NAME;
    char *all = rank == 0 ? alloc_or_die((size_t)nprocs * width, rank) : NULL;
    MPI_CHECK(MPI_Gather(name, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, all, MPI_MAX_PROCESSOR_NAME,
                         MPI_CHAR, 0, MPI_COMM_WORLD));
    if (rank != 0)
        return NULL;
    char *text = alloc_or_die((size_t)nprocs * width, rank);
    size_t used = 0;
    for (int r = 0; r < nprocs; r++) {
        const char *h = all + (size_t)r * width;
        if (r > 0)
            text[used++] = ',';
        for (size_t i = 0; i + 1 < width && h[i]; i++)
            text[used++] = isalnum((unsigned char)h[i]) || strchr("._-", h[i]) ? h[i] : '?';
    }
    text[used] = '\0';
    free(all);
    return text;
}

/* Rank 0 opens --raw FILE; all ranks learn whether it worked (2 if not). */
static int open_raw(const struct options *o, int rank, FILE **raw)
{
    int code = 0;
    char msg[1200] = "";
    *raw = NULL;
    if (o->raw_path && rank == 0 && !(*raw = fopen(o->raw_path, "w"))) {
        snprintf(msg, sizeof msg, "cannot write --raw file '%s': %s", o->raw_path,
                 strerror(errno));
        code = 2;
    }
    return o->raw_path ? agree(code, msg, rank) : 0;
}

/* Bytes of the send and receive buffers for the largest size (0, or 2 after a usage message:
 * barrier takes --sizes 0 only; counts times P must fit MPI's int counts). */
static int coll_buffers(const struct options *o, int rank, int nprocs, size_t *send,
                        size_t *recv)
{
    const struct coll_spec *c = &COLLS[o->coll];
    *send = *recv = 0;
    for (int i = 0; i < o->nsizes; i++) {
        long long n = coll_count(c, o->sizes[i], nprocs);
        if (c->m == M_NONE && o->sizes[i] != 0)
            return usage_error(rank, "--sizes: %s has no message size: pass --sizes 0", c->name);
        if (n > 0 && n > INT_MAX / nprocs)
            return usage_error(rank, "--sizes: P times a size exceeds INT_MAX bytes (the whole "
                               "buffer of %s)", c->name);
        size_t sb = coll_blocks(c, 0, rank, nprocs) * (size_t)(n > 0 ? n : 0);
        size_t rb = coll_blocks(c, 1, rank, nprocs) * (size_t)(n > 0 ? n : 0);
        *send = sb > *send ? sb : *send;
        *recv = rb > *recv ? rb : *recv;
    }
    if (c->data == D_BCAST || o->experiment != EXP_NONE)   /* experiments use a and b as before */
        *send = *recv = *send > *recv ? *send : *recv;
    return 0;
}

static int finish(int paired, int rc)
{
    if (paired)
        MPI_T_finalize();   /* before MPI_Finalize */
    MPI_Finalize();
    return rc;
}

int main(int argc, char **argv)
{
    int rank = 0, nprocs = 0, provided = 0;
    static struct options opt;   /* large: kept off the stack */
    struct forcing fs = {.per_call = 0, .fallback = ""};
    MPI_CHECK(MPI_Init(&argc, &argv));
    MPI_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MPI_CHECK(MPI_Comm_size(MPI_COMM_WORLD, &nprocs));
    int rc = parse_args(argc, argv, rank, &opt);
    if (rc != 0)
        return finish(0, rc);
    const int paired = opt.methods_arg != NULL;
    if (bench_probe.reps && !paired)
        return finish(0, usage_error(rank, "%s", "--probe needs --methods (paired mode)"));
    FILE *raw = NULL;
    if (opt.experiment == EXP_LMO && (nprocs < 2 || nprocs > LMO_MAX_PROCS))
        return finish(0, usage_error(rank, "%s", "--experiment lmo needs 2 to 64 processes"));
    if (paired) {
        MPI_CHECK(MPI_T_init_thread(MPI_THREAD_SINGLE, &provided));
        if ((rc = setup_forcing(&opt, &fs, rank)) != 0 || (rc = open_raw(&opt, rank, &raw)) != 0)
            return finish(paired, rc);
    }

    unsigned long long maxm = 0;
    for (int i = 0; i < opt.nsizes; i++)
        if (opt.sizes[i] > maxm) maxm = opt.sizes[i];
    size_t send_bytes = maxm, recv_bytes = maxm;
    if (opt.coll != COLL_NONE && (rc = coll_buffers(&opt, rank, nprocs, &send_bytes,
                                                    &recv_bytes)) != 0)
        return finish(paired, rc);
    struct bufs bf = {alloc_or_die(send_bytes, rank), alloc_or_die(recv_bytes, rank), NULL, NULL,
                      NULL, NULL, 0, NULL,
                      {0, alloc_or_die((size_t)nprocs * sizeof(int), rank),
                       alloc_or_die((size_t)nprocs * sizeof(int), rank)}};
    if (opt.experiment != EXP_NONE) {
        bf.reqs = alloc_or_die((size_t)nprocs * sizeof *bf.reqs, rank);
        bf.gather = alloc_or_die(rank == 0 ? (size_t)nprocs * opt.gather_size : 1, rank);
    }
    if (opt.experiment == EXP_LMO_SCAN || opt.experiment == EXP_LMO_BINOMIAL) {
        if (maxm > (unsigned long long)INT_MAX / (unsigned long long)nprocs)
            return finish(0, usage_error(rank, "%s", "--sizes: P times the largest size "
                                         "exceeds INT_MAX bytes (a scatter's whole buffer)"));
        bf.map = alloc_or_die((size_t)nprocs * sizeof *bf.map, rank);
        if ((rc = parse_mapping(&opt, rank, nprocs, bf.map, &bf.node)) != 0)
            return finish(0, rc);
        bf.big = alloc_or_die((size_t)nprocs * maxm, rank);
        memset(bf.big, 1, (size_t)nprocs * maxm);
        memset(bf.a, 1, maxm);
    }
    struct lmo_schedule sched = {{NULL, NULL, 0, 0}, {NULL, NULL, 0, 0}, 0};
    if (opt.experiment == EXP_LMO) {
        lmo_pair_rounds(nprocs, opt.serial, &sched.pairs, rank);
        lmo_triplet_rounds(nprocs, opt.serial, &sched.triplets, rank);
        sched.ntriplets = sched.triplets.ngroups;
    }
    const size_t reps = (size_t)opt.max_reps * (size_t)(paired ? opt.nmethods : 1);
    struct samples sp = {alloc_or_die(reps * sizeof(double), rank),
                         alloc_or_die(reps * sizeof(double), rank),
                         alloc_or_die(reps * sizeof(double), rank),
                         alloc_or_die(reps * sizeof(double), rank),
                         alloc_or_die((size_t)opt.max_reps * sizeof(double), rank),
                         alloc_or_die(reps * sizeof(double), rank),
                         alloc_or_die(paired ? reps * sizeof(int) : 1, rank)};
    memset(bf.b, 0, recv_bytes ? recv_bytes : 1);
    for (int k = 0; paired && k < opt.nmethods && !bf.tmp; k++)
        if (opt.methods[k].groups)
            bf.tmp = alloc_or_die(maxm ? maxm : 1, rank);
    const int global = use_global_clock(&opt, nprocs);
    char *rank_hosts = gather_rank_hosts(rank, nprocs);
    if (bench_probe.reps && (rc = probe_start(opt.max_reps, rank)) != 0)
        return finish(paired, rc);
    if (rank == 0) {
        print_header(stdout, &opt, &fs, nprocs, global, rank_hosts);
        if (opt.experiment == EXP_LMO)
            printf("#@pair_rounds=%d\n#@triplet_rounds=%d\n", sched.pairs.nrounds,
                   sched.triplets.nrounds);
        if (paired && bench_probe.reps)     /* --probe: one more field */
            printf("#msg_size algorithm segsize faninout mean_us median_us min_us max_us "
                   "stdev_us ci_halfwidth_us n ci_met probe_us\n");
        else
            printf(paired ? "#msg_size algorithm segsize faninout mean_us median_us min_us max_us "
                            "stdev_us ci_halfwidth_us n ci_met\n"
                   : opt.experiment >= EXP_LMO ? "#kind root a b msg_size mean_us median_us min_us "
                                                 "max_us stdev_us ci_halfwidth_us n ci_met\n"
                          : "#msg_size mean_us median_us min_us max_us stdev_us ci_halfwidth_us n "
                            "ci_met\n");
        fflush(stdout);
        if (raw) {
            print_header(raw, &opt, &fs, nprocs, global, NULL);
            fprintf(raw, "%50s %10s %12s %14s algorithm segsize faninout\n", "test", "nrep",
                    "count", "runtime_sec");
            fflush(raw);
        }
    }

    uint64_t rng = opt.seed;
    if (opt.experiment == EXP_LMO)
        measure_lmo(&opt, &sched, &bf, &sp, rank, nprocs);
    for (int s = 0; s < opt.nsizes && opt.experiment != EXP_LMO; s++) {
        const unsigned long long m = opt.sizes[s];
        if ((opt.fault == FAULT_CRASH || opt.fault == FAULT_HANG) && m == opt.fault_size) {
            if (opt.fault == FAULT_CRASH && rank == nprocs - 1)
                raise(SIGSEGV);
            if (opt.fault == FAULT_HANG)
                for (;;) pause();
        }
        if (opt.coll != COLL_NONE && coll_count(&COLLS[opt.coll], m, nprocs) < 0)
            continue;   /* no call of this collective at m (#@skipped) */
        if (paired)
            measure_paired(&opt, &fs, &bf, &sp, rank, nprocs, global, m, &rng, raw);
        else if (opt.experiment == EXP_LMO_SCAN || opt.experiment == EXP_LMO_BINOMIAL)
            for (int k = 0; k < 2; k++) {
                struct stats st;
                opt.lmo_kind = (enum lmo_kind)((opt.experiment == EXP_LMO_SCAN ? LMO_LSCATTER
                                                                              : LMO_BSCATTER) + k);
                measure_point(&opt, &fs, &bf, &sp, rank, nprocs, global, m, &st);
                if (rank == 0) {
                    lmo_line(opt.lmo_kind, bf.map[0], -1, -1, m, &st, opt.rel_ci);
                    fflush(stdout);
                }
            }
        else
            measure_single(&opt, &fs, &bf, &sp, rank, nprocs, global, m);
    }
    if (raw && fclose(raw) != 0)
        fprintf(stderr, "collsel_bench: writing --raw file '%s' failed\n", opt.raw_path);
    for (int k = 0; paired && k < opt.nmethods; k++) {
        MPI_CHECK(MPI_Comm_free(&opt.methods[k].comm));
        if (opt.methods[k].group != MPI_COMM_NULL)
            MPI_CHECK(MPI_Comm_free(&opt.methods[k].group));
        if (opt.methods[k].leaders != MPI_COMM_NULL)
            MPI_CHECK(MPI_Comm_free(&opt.methods[k].leaders));
    }
    free(bf.tmp);
    free(bf.a);
    free(bf.b);
    free(bf.reqs);
    free(bf.gather);
    free(bf.big);
    free(bf.map);
    free(bf.shape.counts);
    free(bf.shape.displs);
    free(sched.pairs.groups);
    free(sched.pairs.start);
    free(sched.triplets.groups);
    free(sched.triplets.start);
    free(sp.local);
    free(sp.starts);
    free(sp.maxed);
    free(sp.minstart);
    free(sp.column);
    free(sp.scratch);
    free(sp.order);
    free(rank_hosts);
    probe_stop();
    return finish(paired, 0);
}
