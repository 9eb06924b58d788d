/* What rank 0 prints (output.h). */
#include "output.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "round_probe.h"

void output_capabilities(void)
{
    printf("{\"collectives\": [");
    for (int c = 0; c < NCOLLECTIVES; c++)
        printf("%s\"%s\"", c ? ", " : "", COLLS[c].name);
    printf("], \"sizeless\": [");
    for (int c = 0, n = 0; c < NCOLLECTIVES; c++)
        if (COLLS[c].m == M_NONE)
            printf("%s\"%s\"", n++ ? ", " : "", COLLS[c].name);
    printf("], \"max_sizes\": %d, \"max_methods\": %d, \"max_reps\": %d}\n", MAX_SIZES,
           MAX_METHODS, MAX_REPS);
}

/* Characters a host name cannot hold become '?', so the list stays one comma-separated line. */
char *output_rank_hosts(int rank, int nprocs)
{
    char name[MPI_MAX_PROCESSOR_NAME] = "";
    int len = 0;
    BENCH_CHECK(PMPI_Get_processor_name(name, &len));
    const size_t width = MPI_MAX_PROCESSOR_NAME;
    char *all = rank == 0 ? bench_alloc((size_t)nprocs * width, rank) : NULL;
    BENCH_CHECK(PMPI_Gather(name, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, all, MPI_MAX_PROCESSOR_NAME,
                            MPI_CHAR, 0, MPI_COMM_WORLD));
    if (rank != 0)
        return NULL;
    char *text = bench_alloc((size_t)nprocs * width, rank);
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

int output_open_raw(const struct options *o, int rank, FILE **raw)
{
    int code = 0;
    char msg[1200] = "";
    *raw = NULL;
    if (o->raw_path && rank == 0 && !(*raw = fopen(o->raw_path, "w"))) {
        snprintf(msg, sizeof msg, "cannot write --raw file '%s': %s", o->raw_path,
                 strerror(errno));
        code = 2;
    }
    return o->raw_path ? bench_agree(code, msg, rank) : 0;
}

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
    const char *coll = coll_name(o->coll);
    char var[128];
    gethostname(host, sizeof host - 1);
    BENCH_CHECK(PMPI_Get_library_version(lib, &len));
    BENCH_CHECK(PMPI_Get_version(&major, &minor));
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
    const int sum = o->coll != COLL_NONE && coll_is_reduction(&COLLS[o->coll]);
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
        round_probe_header(out);
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
                        (long long)o->methods[k].enum_value);
            fprintf(out, "\n");
        }
    }
}

void output_start(const struct options *o, const struct forcing *fs, int nprocs, int global,
                  const char *rank_hosts, int pair_rounds, int triplet_rounds, FILE *raw)
{
    const int paired = o->methods_arg != NULL;
    print_header(stdout, o, fs, nprocs, global, rank_hosts);
    if (o->experiment == EXP_LMO)
        printf("#@pair_rounds=%d\n#@triplet_rounds=%d\n", pair_rounds, triplet_rounds);
    if (paired && round_probe_active())     /* --probe: one more field */
        printf("#msg_size algorithm segsize faninout mean_us median_us min_us max_us "
               "stdev_us ci_halfwidth_us n ci_met probe_us\n");
    else
        printf(paired ? "#msg_size algorithm segsize faninout mean_us median_us min_us max_us "
                        "stdev_us ci_halfwidth_us n ci_met\n"
               : o->experiment >= EXP_LMO ? "#kind root a b msg_size mean_us median_us min_us "
                                            "max_us stdev_us ci_halfwidth_us n ci_met\n"
                      : "#msg_size mean_us median_us min_us max_us stdev_us ci_halfwidth_us n "
                        "ci_met\n");
    fflush(stdout);
    if (raw) {
        print_header(raw, o, fs, nprocs, global, NULL);
        fprintf(raw, "%50s %10s %12s %14s algorithm segsize faninout\n", "test", "nrep",
                "count", "runtime_sec");
        fflush(raw);
    }
}

static void print_stats(const struct stats *st)
{
    printf("%.6g %.6g %.6g %.6g %.6g %.6g %ld", st->mean, st->median, st->min, st->max,
           st->stdev, st->ci, st->n);
}

void output_point(unsigned long long m, const struct stats *st, double rel_ci)
{
    printf("%llu ", m);
    print_stats(st);
    printf(" %d\n", st->ci <= rel_ci * st->mean);
    fflush(stdout);
}

void output_lmo_line(enum lmo_kind kind, int root, int a, int b, unsigned long long m,
                     const struct stats *st, double rel_ci)
{
    printf("%s %d %d %d %llu ", lmo_kind_names[kind], root, a, b, m);
    print_stats(st);
    printf(" %d\n", st->ci <= rel_ci * st->mean);
}

/* Every repetition of the size in call order, ReproMPI's per-repetition layout (methods
 * unusable at the size left out). */
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

/* `#@unusable.M=A:S:F,...` (the methods whose call returned an MPI error at size m, on some
 * rank), before the size's lines; nothing when every method worked. */
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

void output_size(const struct options *o, const struct samples *sp, long n,
                 unsigned long long m, const int *dead, const struct stats *st, FILE *raw)
{
    unusable_line(o, m, dead);
    for (int k = 0; k < o->nmethods; k++) {
        const struct method *mt = &o->methods[k];
        if (dead[k])
            continue;
        printf("%llu %s %llu %ld ", m, mt->alg, mt->segsize, mt->fanout);
        print_stats(&st[k]);
        printf(" %d", st[k].ci <= o->rel_ci * st[k].mean);
        round_probe_field();
        printf("\n");
    }
    round_probe_rounds_line(m);
    fflush(stdout);
    if (raw)
        write_raw(raw, o, sp, n, m, dead);
}
