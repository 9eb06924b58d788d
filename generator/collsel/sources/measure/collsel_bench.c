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
 * Output (stdout, rank 0): `#@key=value` header lines, then one line per message size,
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
 */
#define _POSIX_C_SOURCE 200809L
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
#define MAX_SIZES 4096

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

enum collective { COLL_BCAST, COLL_REDUCE };
enum fault { FAULT_NONE, FAULT_CRASH, FAULT_HANG };

enum runtime { RUNTIME_AUTO, RUNTIME_GLOBAL, RUNTIME_LOCAL };
enum experiment { EXP_NONE, EXP_NBFT, EXP_BCAST_GATHER };

struct options {
    enum collective coll;
    enum runtime runtime;
    unsigned long long sizes[MAX_SIZES];
    int nsizes;
    long min_reps, max_reps, warmup;
    double rel_ci, time_cap;
    enum fault fault;               /* test hook: make the run fail at one size */
    unsigned long long fault_size;
    enum experiment experiment;
    unsigned long long gather_size;
};

struct stats {
    double mean, median, min, max, stdev, ci;
    long n;
};

static int usage_error(int rank, const char *fmt, const char *arg)
{
    if (rank == 0) {
        fprintf(stderr, "collsel_bench: ");
        fprintf(stderr, fmt, arg);
        fprintf(stderr, "\nusage: collsel_bench --collective bcast|reduce --sizes M[,M...] "
                        "[--min-reps N] [--max-reps N] [--warmup N] [--rel-ci F] "
                        "[--time-cap SEC] [--runtime global|local|auto] "
                        "[--fault crash@M|hang@M] [--experiment nbft|bcast-gather] "
                        "[--gather-size G]\n");
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
    for (int i = 1; i < argc; i++) {
        const char *key = argv[i];
        if (strcmp(key, "--help") == 0 || strcmp(key, "-h") == 0)
            return usage_error(rank, "%s", "help");
        if (i + 1 >= argc)
            return usage_error(rank, "option '%s' needs a value", key);
        const char *val = argv[++i];
        if (strcmp(key, "--collective") == 0) {
            if (strcmp(val, "bcast") == 0) o->coll = COLL_BCAST;
            else if (strcmp(val, "reduce") == 0) o->coll = COLL_REDUCE;
            else return usage_error(rank, "unknown collective '%s' (known: bcast, reduce)", val);
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
            if (parse_long(val, 2, 100000000, &o->min_reps) != 0)
                return usage_error(rank, "--min-reps '%s' must be an integer >= 2", val);
        } else if (strcmp(key, "--max-reps") == 0) {
            if (parse_long(val, 2, 100000000, &o->max_reps) != 0)
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
            else return usage_error(rank, "--experiment '%s' must be nbft or bcast-gather", val);
            o->coll = COLL_BCAST;
            have_coll = 1;
        } else if (strcmp(key, "--gather-size") == 0) {
            if (parse_size(val, &o->gather_size) != 0 || o->gather_size == 0 ||
                o->gather_size > (unsigned long long)INT_MAX)
                return usage_error(rank, "--gather-size '%s' must be a size of 1 byte or more", val);
        } else if (strcmp(key, "--fault") == 0) {
            const char *at = strchr(val, '@');
            if (at && strncmp(val, "crash@", 6) == 0) o->fault = FAULT_CRASH;
            else if (at && strncmp(val, "hang@", 5) == 0) o->fault = FAULT_HANG;
            else return usage_error(rank, "--fault '%s' must be crash@SIZE or hang@SIZE", val);
            if (parse_size(at + 1, &o->fault_size) != 0)
                return usage_error(rank, "bad size in --fault '%s'", val);
        } else {
            return usage_error(rank, "unknown option '%s'", key);
        }
    }
    if (!have_coll)
        return usage_error(rank, "%s", "--collective is required");
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

/* Byte i of the root's data for a message of m bytes: varies with both, so stale data from
 * an earlier size cannot pass the check. */
static unsigned char pattern(size_t i, unsigned long long m)
{
    return (unsigned char)((i * 131u + m * 7u + 1u) & 0xffu);
}

struct bufs {
    unsigned char *a, *b;   /* bcast: a; reduce: a = send, b = receive */
    MPI_Request *reqs;      /* experiments: one per rank */
    unsigned char *gather;  /* bcast-gather: nprocs * gather_size bytes on the root */
};

static void run_experiment(const struct options *o, struct bufs *bf, int count)
{
    int rank = 0, nprocs = 0;
    MPI_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MPI_CHECK(MPI_Comm_size(MPI_COMM_WORLD, &nprocs));
    if (o->experiment == EXP_NBFT) {
        if (rank == 0) {
            for (int r = 1; r < nprocs; r++)
                MPI_CHECK(MPI_Isend(bf->a, count, MPI_BYTE, r, 77, MPI_COMM_WORLD, &bf->reqs[r - 1]));
            MPI_CHECK(MPI_Waitall(nprocs - 1, bf->reqs, MPI_STATUSES_IGNORE));
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

static void run_once(const struct options *o, struct bufs *bf, int count)
{
    if (o->experiment != EXP_NONE)
        run_experiment(o, bf, count);
    else if (o->coll == COLL_BCAST)
        MPI_CHECK(MPI_Bcast(bf->a, count, MPI_BYTE, 0, MPI_COMM_WORLD));
    else
        MPI_CHECK(MPI_Reduce(bf->a, bf->b, count, MPI_UNSIGNED_CHAR, MPI_SUM, 0, MPI_COMM_WORLD));
}

/* Fill buffers for size m and check the result of one call, so a forced algorithm that
 * computes the wrong answer is caught instead of timed (see verify()). */
/* Reduce inputs are kept small enough that the sum over ranks never exceeds 255: Open MPI
 * 4.1.4's vectorised MPI_SUM on MPI_UNSIGNED_CHAR saturates at 255 instead of wrapping
 * (seen on this machine for 4 KiB messages), so results that overflow are not portable. */
static unsigned char reduce_input(size_t i, unsigned long long m, int nprocs)
{
    return nprocs > 255 ? 0 : (unsigned char)(pattern(i, m) % (255 / nprocs + 1));
}

static void prepare(const struct options *o, struct bufs *bf, int rank, int nprocs,
                    unsigned long long m)
{
    for (size_t i = 0; i < (size_t)m; i++)
        bf->a[i] = o->coll == COLL_REDUCE ? reduce_input(i, m, nprocs)
                                          : rank == 0 ? pattern(i, m) : 0;
}

static long verify(const struct options *o, const struct bufs *bf, int rank, int nprocs,
                   unsigned long long m)
{
    for (size_t i = 0; i < (size_t)m; i++) {
        if (o->coll == COLL_BCAST && bf->a[i] != pattern(i, m))
            return (long)i;
        if (o->coll == COLL_REDUCE && rank == 0 &&
            bf->b[i] != (unsigned)reduce_input(i, m, nprocs) * (unsigned)nprocs)
            return (long)i;
    }
    return -1;
}

static void print_header(const struct options *o, int nprocs, int global)
{
    char host[256] = "unknown", lib[MPI_MAX_LIBRARY_VERSION_STRING] = "";
    int len = 0, major = 0, minor = 0;
    const char *coll = o->coll == COLL_BCAST ? "bcast" : "reduce";
    char var[128];
    gethostname(host, sizeof host - 1);
    MPI_CHECK(MPI_Get_library_version(lib, &len));
    MPI_CHECK(MPI_Get_version(&major, &minor));
    for (char *p = lib; *p; p++)   /* one line per key */
        if (*p == '\n' || *p == '\r') *p = ' ';
    while (len > 0 && (lib[len - 1] == ' ' || lib[len - 1] == '\0')) lib[--len] = '\0';
    printf("#@collsel_bench_version=%s\n", BENCH_VERSION);
    printf("#@host=%s\n", host);
    printf("#@mpi_library=%s\n", lib);
    printf("#@mpi_version=%d.%d\n", major, minor);
    printf("#@collective=%s\n", coll);
    printf("#@nprocs=%d\n", nprocs);
    printf("#@root=0\n");
    printf("#@datatype=%s\n", o->coll == COLL_BCAST ? "MPI_BYTE" : "MPI_UNSIGNED_CHAR");
    if (o->coll == COLL_REDUCE)
        printf("#@op=MPI_SUM\n");
    struct timespec res;
    clock_getres(CLOCK_MONOTONIC, &res);
    printf("#@timer=clock_gettime(CLOCK_MONOTONIC)\n#@timer_resolution_s=%g\n",
           (double)res.tv_sec + 1e-9 * (double)res.tv_nsec);
    printf("#@sync=MPI_Barrier\n");
    printf("#@runtime_type=%s\n", global ? "global_max_end_minus_min_start"
                                           : "max_over_ranks_of_local_time");
    if (o->experiment != EXP_NONE)
        printf("#@experiment=%s\n#@gather_size=%llu\n",
               o->experiment == EXP_NBFT ? "nbft" : "bcast-gather", o->gather_size);
    printf("#@min_reps=%ld\n#@max_reps=%ld\n#@warmup=%ld\n", o->min_reps, o->max_reps, o->warmup);
    printf("#@rel_ci=%g\n#@ci_level=0.95\n#@time_cap_s=%g\n", o->rel_ci, o->time_cap);
    /* The algorithm is forced by MCA parameters; echo what this process received. */
    const char *suffixes[] = {"use_dynamic_rules", "algorithm", "algorithm_segmentsize"};
    for (int i = 0; i < 3; i++) {
        if (i == 0)
            snprintf(var, sizeof var, "OMPI_MCA_coll_tuned_%s", suffixes[i]);
        else
            snprintf(var, sizeof var, "OMPI_MCA_coll_tuned_%s_%s", coll, suffixes[i]);
        const char *v = getenv(var);
        printf("#@%s=%s\n", var + 9, v ? v : "");
    }
    printf("#msg_size mean_us median_us min_us max_us stdev_us ci_halfwidth_us n ci_met\n");
    fflush(stdout);
}

int main(int argc, char **argv)
{
    int rank = 0, nprocs = 0;
    struct options opt;
    MPI_CHECK(MPI_Init(&argc, &argv));
    MPI_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MPI_CHECK(MPI_Comm_size(MPI_COMM_WORLD, &nprocs));
    int rc = parse_args(argc, argv, rank, &opt);
    if (rc != 0) {
        MPI_Finalize();
        return rc;
    }

    unsigned long long maxm = 0;
    for (int i = 0; i < opt.nsizes; i++)
        if (opt.sizes[i] > maxm) maxm = opt.sizes[i];
    struct bufs bf = {malloc(maxm ? maxm : 1), malloc(maxm ? maxm : 1), NULL, NULL};
    if (opt.experiment != EXP_NONE) {
        bf.reqs = malloc((size_t)nprocs * sizeof *bf.reqs);
        bf.gather = malloc(rank == 0 ? (size_t)nprocs * opt.gather_size : 1);
        if (!bf.reqs || !bf.gather) {
            fprintf(stderr, "collsel_bench: rank %d: cannot allocate experiment buffers\n", rank);
            MPI_Abort(MPI_COMM_WORLD, 4);
        }
    }
    /* Samples are kept on every rank (local) and on rank 0 (max over ranks). */
    double *local = malloc((size_t)opt.max_reps * sizeof *local);
    double *maxed = malloc((size_t)opt.max_reps * sizeof *maxed);
    double *starts = malloc((size_t)opt.max_reps * sizeof *starts);
    double *minstart = malloc((size_t)opt.max_reps * sizeof *minstart);
    double *scratch = malloc((size_t)opt.max_reps * sizeof *scratch);
    if (!bf.a || !bf.b || !local || !maxed || !scratch || !starts || !minstart) {
        fprintf(stderr, "collsel_bench: rank %d: cannot allocate %llu-byte buffers\n", rank, maxm);
        MPI_Abort(MPI_COMM_WORLD, 4);
    }
    memset(bf.b, 0, maxm ? maxm : 1);
    /* Global runtimes need one clock: all ranks on one node. */
    int global = opt.runtime == RUNTIME_GLOBAL;
    if (opt.experiment != EXP_NONE) {
        global = 0;   /* experiments are timed on the root's clock (paper section 6.1) */
    } else if (opt.runtime == RUNTIME_AUTO) {
        MPI_Comm node;
        int node_size = 0;
        MPI_CHECK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL,
                                      &node));
        MPI_CHECK(MPI_Comm_size(node, &node_size));
        MPI_CHECK(MPI_Comm_free(&node));
        global = node_size == nprocs;
    }
    if (rank == 0)
        print_header(&opt, nprocs, global);

    for (int s = 0; s < opt.nsizes; s++) {
        const unsigned long long m = opt.sizes[s];
        const int count = (int)m;
        if (opt.fault != FAULT_NONE && m == opt.fault_size) {
            if (opt.fault == FAULT_CRASH && rank == nprocs - 1)
                raise(SIGSEGV);
            if (opt.fault == FAULT_HANG)
                for (;;) pause();
        }
        /* Warm-up; the first call is also checked for a correct result. */
        prepare(&opt, &bf, rank, nprocs, m);
        MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
        double first = now();
        run_once(&opt, &bf, count);
        first = now() - first;
        long bad = verify(&opt, &bf, rank, nprocs, m);
        if (bad >= 0) {
            fprintf(stderr, "collsel_bench: rank %d: wrong result at byte %ld of a %llu-byte %s\n",
                    rank, bad, m, opt.coll == COLL_BCAST ? "bcast" : "reduce");
            MPI_Abort(MPI_COMM_WORLD, 5);
        }
        /* Further warm-up calls only while cheap: rank 0's first duration decides for all. */
        MPI_CHECK(MPI_Bcast(&first, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD));
        long extra = opt.warmup > 1 ? opt.warmup - 1 : 0;
        if (first > 0 && extra > (long)(0.1 * opt.time_cap / first))
            extra = (long)(0.1 * opt.time_cap / first);
        for (long w = 0; w < extra; w++)
            run_once(&opt, &bf, count);

        /* A point whose single call already costs more than the time cap still gets two
         * timed repetitions (a spread needs two), not --min-reps. */
        long n = 0, batch = opt.min_reps;
        if (first > 0 && batch > (long)(opt.time_cap / first))
            batch = (long)(opt.time_cap / first) < 2 ? 2 : (long)(opt.time_cap / first);
        int stop = 0;
        struct stats st = {0, 0, 0, 0, 0, 0, 0};
        double start = now();
        while (!stop) {
            for (long i = n; i < n + batch; i++) {
                MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
                double t0 = now();
                run_once(&opt, &bf, count);
                double t1 = now();
                starts[i] = t0;
                local[i] = global ? t1 : t1 - t0;   /* end time, or duration */
                if (opt.experiment != EXP_NONE && rank != 0)
                    local[i] = 0;                   /* the root's time only */
            }
            MPI_CHECK(MPI_Reduce(local + n, maxed + n, (int)batch, MPI_DOUBLE, MPI_MAX, 0,
                                 MPI_COMM_WORLD));
            if (global) {
                MPI_CHECK(MPI_Reduce(starts + n, minstart + n, (int)batch, MPI_DOUBLE, MPI_MIN,
                                     0, MPI_COMM_WORLD));
                if (rank == 0)
                    for (long i = n; i < n + batch; i++)
                        maxed[i] -= minstart[i];
            }
            n += batch;
            long next = 0;
            if (rank == 0) {
                compute_stats(maxed, n, scratch, &st);
                double spent = now() - start;
                if ((n >= opt.min_reps && st.ci <= opt.rel_ci * st.mean) || n >= opt.max_reps ||
                    spent >= opt.time_cap) {
                    next = 0;
                } else {
                    /* Reps the CI target needs (CI shrinks as 1/sqrt(n)), bounded by the
                     * remaining time and reps; at least one, at most doubling. */
                    double want = st.ci / (opt.rel_ci * st.mean);
                    double need = n * want * want - n;
                    double per_rep = spent / n;
                    double afford = (opt.time_cap - spent) / (per_rep > 0 ? per_rep : 1e-9);
                    if (need > afford) need = afford;
                    if (need > n) need = n;
                    if (need > opt.max_reps - n) need = opt.max_reps - n;
                    next = need < 1 ? 1 : (long)ceil(need);
                }
            }
            MPI_CHECK(MPI_Bcast(&next, 1, MPI_LONG, 0, MPI_COMM_WORLD));
            stop = next == 0;
            batch = next;
        }
        if (rank == 0) {
            printf("%llu %.6g %.6g %.6g %.6g %.6g %.6g %ld %d\n", m, st.mean, st.median, st.min,
                   st.max, st.stdev, st.ci, st.n, st.ci <= opt.rel_ci * st.mean);
            fflush(stdout);
        }
    }
    free(bf.a);
    free(bf.b);
    free(bf.reqs);
    free(bf.gather);
    free(local);
    free(maxed);
    free(starts);
    free(minstart);
    free(scratch);
    MPI_CHECK(MPI_Finalize());
    return 0;
}
