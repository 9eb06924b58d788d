/* Forcing (forcing.h). */
#include "forcing.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "collsel_mpi_table.h"
#include "timing.h"

#define MAX_ENUM 64     /* enumeration items read of an algorithm variable (coll/tuned: < 10) */

/* The MPI table's index of the measured collective (COLLS[] has the benchmark's own order), for
 * its forcing variables; -1 with a message for a collective the table lacks. */
static int table_index(const struct options *o, char *msg, size_t msg_size)
{
    for (int c = 0; c < COLLSEL_MPI_NCOLL; c++)
        if (strcmp(collsel_mpi_coll_names[c], coll_name(o->coll)) == 0)
            return c;
    snprintf(msg, msg_size, "forcing did not take: the MPI table (collsel_mpi_table.h) has no "
             "collective %s", coll_name(o->coll));
    return -1;
}

/* The variable's enumeration for a message: its items' names (names = 1) or values. */
static void enum_list(const collsel_cvar *c, int names, char *known, size_t size)
{
    known[0] = '\0';
    for (int32_t i = 0, n = collsel_cvar_enum_count(c); i < n; i++) {
        char item[MAX_TOKEN] = "";
        int64_t v = 0;
        size_t used = strlen(known);
        if (collsel_cvar_enum_item(c, i, &v, item, sizeof item) != 0)
            continue;
        if (names)
            snprintf(known + used, size - used, "%s%s", used ? ", " : "", item);
        else
            snprintf(known + used, size - used, "%s%lld", used ? ", " : "", (long long)v);
    }
}

/* Open MPI's variables of the collective: algorithm, segment size, then the ones F writes (the
 * MPI table's collsel_mpi_ompi_fan_vars); have[i] = 0 where this MPI has none. */
#define NVARS 5
typedef char fan_vars_fit[COLLSEL_MPI_OMPI_FAN_VARS - 1 <= NVARS - 2 ? 1 : -1];

/* Open MPI: write algorithm, segment size and fan-outs (F; 0: the value the process started
 * with) of method mt, read each back; 0 or 6 with a message. */
static int force_openmpi_method(collsel_cvar *cv, const int *have, const struct method *mt,
                                char *msg, size_t msg_size)
{
    for (int i = 0; i < NVARS; i++) {
        int64_t want = i == 0 ? atoll(mt->alg) : i == 1 ? (int64_t)mt->segsize
                       : mt->fanout ? mt->fanout : cv[i].initial;
        if (have[i] && collsel_cvar_set(&cv[i], want) != 0) {
            snprintf(msg, msg_size, "forcing did not take: cannot set %s=%lld for method "
                     "%s:%llu:%ld (%s)", cv[i].name, (long long)want, mt->alg, mt->segsize,
                     mt->fanout, collsel_cvar_fixed(&cv[i])
                     ? "read-only for MPI_T in this MPI: force it per launch, --mca"
                     : "write refused or reads back different");
            return 6;
        }
    }
    return 0;
}

/* Open MPI, a hierarchical method: its group communicator split while the variables name the
 * inner algorithm, the leaders' while they name the outer one; the splits' cost measured. */
static int split_hier(collsel_cvar *cv, const int *have, struct method *mt, int rank, char *msg,
                      size_t msg_size)
{
    int nprocs, code;
    BENCH_CHECK(PMPI_Comm_size(MPI_COMM_WORLD, &nprocs));
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
    BENCH_CHECK(PMPI_Barrier(MPI_COMM_WORLD));
    double t0 = timing_now();
    BENCH_CHECK(PMPI_Comm_split(MPI_COMM_WORLD, color, rank, &mt->group));
    double spent = timing_now() - t0;
    snprintf(level.alg, sizeof level.alg, "%d", mt->outer);
    if ((code = force_openmpi_method(cv, have, &level, msg, msg_size)) != 0)
        return code;
    BENCH_CHECK(PMPI_Barrier(MPI_COMM_WORLD));
    t0 = timing_now();
    BENCH_CHECK(PMPI_Comm_split(MPI_COMM_WORLD, rank == first ? 0 : MPI_UNDEFINED, rank,
                                &mt->leaders));
    spent += timing_now() - t0;
    BENCH_CHECK(PMPI_Allreduce(&spent, &mt->split_us, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD));
    mt->split_us *= 1e6;
    return 0;
}

/* The variables this Open MPI has of the collective (cv[i], have[i]); 0, or 6 with a message
 * when the algorithm's is missing. */
static int open_openmpi_vars(const struct options *o, collsel_cvar *cv, int *have, char *msg,
                             size_t msg_size)
{
    const char *suffix[NVARS] = {"", "_segmentsize", NULL, NULL, NULL};
    int code = 0, t = table_index(o, msg, msg_size);
    if (t < 0)
        return 6;
    for (int i = 2; i < NVARS && collsel_mpi_ompi_fan_vars[t][i - 2]; i++)
        suffix[i] = collsel_mpi_ompi_fan_vars[t][i - 2];
    for (int i = 0; i < NVARS && suffix[i]; i++) {
        char name[128];
        snprintf(name, sizeof name, "%s%s", collsel_mpi_ompi_cvar[t], suffix[i]);
        have[i] = collsel_cvar_open(name, &cv[i]) == 0;
        if (!have[i] && i == 0) {
            snprintf(msg, msg_size, "forcing did not take: no control variable %s "
                     "(coll/tuned not loaded?)", name);
            code = 6;
        }
    }
    return code;
}

/* Whether the methods' values can be forced at all here: S and F need their variables, forcing
 * needs coll_tuned_use_dynamic_rules, every algorithm (each level of a hierarchical one) must be
 * in the variable's enumeration. 0, 2 or 6 with a message. */
static int check_openmpi_methods(const struct options *o, const collsel_cvar *cv, const int *have,
                                 char *msg, size_t msg_size)
{
    int forced = 0;
    for (int k = 0; k < o->nmethods; k++) {
        const struct method *mt = &o->methods[k];
        int fan = have[2] || have[3] || have[4];
        if ((mt->segsize && !have[1]) || (mt->fanout && !fan)) {
            snprintf(msg, msg_size, "forcing did not take: method %s:%llu:%ld needs %s, and "
                     "this MPI has no such control variable", mt->alg, mt->segsize, mt->fanout,
                     mt->segsize && !have[1] ? cv[1].name : "a fan-in/out variable (coll_tuned_"
                     "<coll>_algorithm_{chain_fanout,tree_fanout,max_requests})");
            return 6;
        }
        forced |= atoll(mt->alg) != 0;
    }
    collsel_cvar dyn;
    if (forced && collsel_cvar_open("coll_tuned_use_dynamic_rules", &dyn) == 0) {
        forced = !dyn.initial;
        collsel_cvar_close(&dyn);
    }
    if (forced) {
        snprintf(msg, msg_size, "forcing did not take: coll_tuned_use_dynamic_rules is off, so "
                 "coll/tuned ignores forced algorithms (launch with --mca "
                 "coll_tuned_use_dynamic_rules 1)");
        return 6;
    }
    int64_t values[MAX_ENUM];
    int32_t n = collsel_cvar_enum_values(&cv[0], values, MAX_ENUM);
    for (int k = 0; k < o->nmethods; k++) {
        const struct method *mt = &o->methods[k];
        int64_t levels[2] = {mt->groups ? mt->inner : atoll(mt->alg), mt->outer};
        for (int l = 0; l < (mt->groups ? 2 : 1); l++)
            if (!collsel_cvar_in_values(values, n, levels[l])) {
                char known[4096];
                enum_list(&cv[0], 0, known, sizeof known);
                snprintf(msg, msg_size, "--methods: '%s'%s is not a coll/tuned %s algorithm "
                         "(known: %s)", mt->alg, mt->groups ? (l ? " (outer)" : " (inner)") : "",
                         coll_name(o->coll), known);
                return 2;
            }
    }
    return 0;
}

/* Open MPI: one communicator per method, dup'ed right after its control variables were set
 * (coll/tuned copies them into the communicator's module when it is created). */
static int force_openmpi(struct options *o, int rank)
{
    collsel_cvar cv[NVARS];
    int have[NVARS];
    char msg[8192] = "";
    memset(cv, 0, sizeof cv);
    memset(have, 0, sizeof have);
    int code = open_openmpi_vars(o, cv, have, msg, sizeof msg);
    if (!code)
        code = check_openmpi_methods(o, cv, have, msg, sizeof msg);
    code = bench_agree(code, msg, rank);
    for (int k = 0; !code && k < o->nmethods; k++) {
        struct method *mt = &o->methods[k];
        if (mt->groups) {
            code = bench_agree(split_hier(cv, have, mt, rank, msg, sizeof msg), msg, rank);
            if (!code)
                BENCH_CHECK(PMPI_Comm_dup(MPI_COMM_WORLD, &mt->comm));
            continue;
        }
        code = bench_agree(force_openmpi_method(cv, have, mt, msg, sizeof msg), msg, rank);
        if (code)
            break;
        BENCH_CHECK(PMPI_Comm_dup(MPI_COMM_WORLD, &mt->comm));
        /* a method that refuses a size returns an error: unusable there, not fatal */
        BENCH_CHECK(PMPI_Comm_set_errhandler(mt->comm, MPI_ERRORS_RETURN));
    }
    for (int i = 0; i < NVARS; i++)   /* later communicators get the launch's own settings */
        if (have[i]) {
            if (!code)
                collsel_cvar_set(&cv[i], cv[i].initial);
            collsel_cvar_close(&cv[i]);
        }
    return code;
}

/* MPICH: the algorithm cvar is read at every call, so it is set before each call of a method
 * (forcing_select); here the names are resolved and every value is tried once. */
static int force_mpich(struct options *o, struct forcing *fs, int rank)
{
    char msg[8192] = "", known[4096];
    int code = 0, t = table_index(o, msg, sizeof msg);
    const char *name = t < 0 ? "" : collsel_mpi_mpich_cvar[t];
    fs->alg_open = t >= 0 && collsel_cvar_open(name, &fs->alg) == 0;
    if (t < 0) {
        code = 6;
    } else if (!fs->alg_open) {
        snprintf(msg, sizeof msg, "forcing did not take: no control variable %s", name);
        code = 6;
    }
    for (int k = 0; !code && k < o->nmethods; k++) {
        struct method *mt = &o->methods[k];
        if (collsel_cvar_named_value(&fs->alg, mt->alg, &mt->enum_value) != 0) {
            if (collsel_cvar_enum_count(&fs->alg) > 0)
                enum_list(&fs->alg, 1, known, sizeof known);
            else
                snprintf(known, sizeof known, "see MPICH's description of %s", fs->alg.name);
            snprintf(msg, sizeof msg, "--methods: '%s' is not an MPICH %s algorithm (known: %s)",
                     mt->alg, coll_name(o->coll), known);
            code = 2;
        } else if (collsel_cvar_set(&fs->alg, mt->enum_value) != 0) {
            snprintf(msg, sizeof msg, "forcing did not take: cannot set %s=%s (write refused "
                     "or reads back different)", name, mt->alg);
            code = 6;
        }
    }
    if (!code)
        collsel_cvar_set(&fs->alg, fs->alg.initial);
    collsel_cvar fallback;
    snprintf(fs->fallback, sizeof fs->fallback, "unknown");
    if (collsel_cvar_open("MPIR_CVAR_COLLECTIVE_FALLBACK", &fallback) == 0) {
        const char *names[] = {"error", "print", "silent"};
        for (int i = 0; i < 3; i++) {
            int64_t v = -1;
            if (collsel_cvar_named_value(&fallback, names[i], &v) == 0 && v == fallback.initial)
                snprintf(fs->fallback, sizeof fs->fallback, "%s", names[i]);
        }
        collsel_cvar_close(&fallback);
    }
    if ((code = bench_agree(code, msg, rank)) != 0)
        return code;
    for (int k = 0; k < o->nmethods; k++) {   /* uniform with Open MPI: a communicator each */
        BENCH_CHECK(PMPI_Comm_dup(MPI_COMM_WORLD, &o->methods[k].comm));
        BENCH_CHECK(PMPI_Comm_set_errhandler(o->methods[k].comm, MPI_ERRORS_RETURN));
    }
    fs->per_call = 1;
    return 0;
}

int forcing_setup(struct options *o, struct forcing *fs, int rank)
{
    fs->per_call = 0;
    fs->alg_open = 0;
    fs->fallback[0] = '\0';
    if (strcmp(MPI_FAMILY, "openmpi") == 0)
        return force_openmpi(o, rank);
    if (strcmp(MPI_FAMILY, "mpich") == 0)
        return force_mpich(o, fs, rank);
    return bench_agree(6, "forcing did not take: paired mode needs Open MPI or MPICH", rank);
}

void forcing_select(const struct options *o, const struct forcing *fs, int k, int on)
{
    if (!fs->per_call || k < 0)
        return;
    int64_t v = on ? o->methods[k].enum_value : fs->alg.initial;
    if (collsel_cvar_set(&fs->alg, v) != 0) {
        fprintf(stderr, "collsel_bench: forcing did not take: cannot set %s=%lld\n",
                fs->alg.name, (long long)v);
        PMPI_Abort(MPI_COMM_WORLD, 6);
    }
}

void forcing_finish(struct forcing *fs)
{
    if (fs->alg_open)
        collsel_cvar_close(&fs->alg);
    fs->alg_open = fs->per_call = 0;
}
