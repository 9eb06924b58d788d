/* The command line (options.h); the ranges here are the ones benchmark_program.py checks the
 * sweep's flags against before launching. */
#include "options.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "round_probe.h"

int options_usage_error(int rank, const char *fmt, const char *arg)
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
                        "[--probe REPS[:CAP_US]]]\n"
                        "       collsel_bench --capabilities\n");
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

int options_parse_long(const char *text, long low, long high, long *out)
{
    char *end = NULL;
    errno = 0;
    long v = strtol(text, &end, 10);
    if (errno != 0 || end == text || *end != '\0' || v < low || v > high)
        return -1;
    *out = v;
    return 0;
}

int options_parse_double(const char *text, double low, double high, double *out)
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
 * against the cvar's enumeration once MPI_T is up (forcing.c). */
static int parse_methods(const char *text, int rank, struct options *o)
{
    char buf[65536];
    if (strlen(text) >= sizeof buf)
        return options_usage_error(rank, "%s", "--methods list too long");
    strcpy(buf, text);
    o->nmethods = 0;
    for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok;
         tok = strtok_r(NULL, ",", &save)) {
        if (o->nmethods == MAX_METHODS)
            return options_usage_error(rank, "%s", "more than 256 methods in --methods");
        struct method *mt = &o->methods[o->nmethods];
        char *seg = strchr(tok, ':');
        char *fan = seg ? strchr(seg + 1, ':') : NULL;
        if (!seg || (fan && strchr(fan + 1, ':')))
            return options_usage_error(rank, "--methods entry '%s' must be "
                                       "ALG:SEGSIZE[:FANINOUT]", tok);
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
            return options_usage_error(rank, strcmp(MPI_FAMILY, "mpich") == 0
                                       ? "--methods: algorithm '%s' must be an MPICH algorithm "
                                         "name"
                                       : "--methods: algorithm '%s' must be a coll/tuned id "
                                         "(integer)", tok);
        strcpy(mt->alg, tok);
        if (parse_size(seg, &mt->segsize) != 0 || mt->segsize > (unsigned long long)INT_MAX)
            return options_usage_error(rank, "--methods: bad segment size '%s' (bytes up to "
                                       "INT_MAX)", seg);
        mt->fanout = 0;
        if (fan && options_parse_long(fan, 0, INT_MAX, &mt->fanout) != 0)
            return options_usage_error(rank, "--methods: bad fan-in/out '%s' (integer >= 0)",
                                       fan);
        mt->groups = 0;
        if (strcmp(MPI_FAMILY, "openmpi") == 0 && atoll(tok) >= HIER_BASE) {
            long long h = atoll(tok) - HIER_BASE;
            mt->groups = (int)(h / 100);
            mt->inner = (int)(h / 10 % 10);
            mt->outer = (int)(h % 10);
            if (mt->groups < 2 || mt->segsize || mt->fanout)
                return options_usage_error(rank, "--methods: hierarchical method '%s' needs "
                                           "G >= 2, segment size and fan-in/out 0", tok);
        }
        mt->group = mt->leaders = MPI_COMM_NULL;
        if (strcmp(MPI_FAMILY, "mpich") == 0 && (mt->segsize || mt->fanout))
            return options_usage_error(rank, "--methods: '%s': MPICH algorithms take segment "
                                       "size and fan-in/out 0", tok);
        for (int k = 0; k < o->nmethods; k++)
            if (strcmp(o->methods[k].alg, mt->alg) == 0 && o->methods[k].segsize == mt->segsize
                && o->methods[k].fanout == mt->fanout)
                return options_usage_error(rank, "--methods: '%s' is listed twice", tok);
        mt->comm = MPI_COMM_NULL;
        o->nmethods++;
    }
    if (o->nmethods == 0)
        return options_usage_error(rank, "%s", "--methods lists no method");
    return 0;
}

int options_parse(int argc, char **argv, int rank, struct options *o)
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
            return options_usage_error(rank, "%s", "help");
        if (i + 1 >= argc)
            return options_usage_error(rank, "option '%s' needs a value", key);
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
                return options_usage_error(rank, "%s", msg);
            }
            have_coll = 1;
        } else if (strcmp(key, "--sizes") == 0) {
            char buf[65536];
            if (strlen(val) >= sizeof buf)
                return options_usage_error(rank, "%s", "--sizes list too long");
            strcpy(buf, val);
            for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok;
                 tok = strtok_r(NULL, ",", &save)) {
                if (o->nsizes == MAX_SIZES)
                    return options_usage_error(rank, "%s", "more than 4096 message sizes");
                if (parse_size(tok, &o->sizes[o->nsizes]) != 0)
                    return options_usage_error(rank, "bad message size '%s' (bytes, optional "
                                               "K/M/G)", tok);
                if (o->sizes[o->nsizes] > (unsigned long long)INT_MAX)
                    return options_usage_error(rank, "message size '%s' exceeds INT_MAX "
                                               "elements", tok);
                o->nsizes++;
            }
        } else if (strcmp(key, "--min-reps") == 0) {
            if (options_parse_long(val, 2, MAX_REPS, &o->min_reps) != 0)
                return options_usage_error(rank, "--min-reps '%s' must be an integer >= 2", val);
        } else if (strcmp(key, "--max-reps") == 0) {
            if (options_parse_long(val, 2, MAX_REPS, &o->max_reps) != 0)
                return options_usage_error(rank, "--max-reps '%s' must be an integer >= 2", val);
        } else if (strcmp(key, "--warmup") == 0) {
            if (options_parse_long(val, 0, 1000000, &o->warmup) != 0)
                return options_usage_error(rank, "--warmup '%s' must be an integer >= 0", val);
        } else if (strcmp(key, "--rel-ci") == 0) {
            if (options_parse_double(val, 1e-6, 10.0, &o->rel_ci) != 0)
                return options_usage_error(rank, "--rel-ci '%s' must be a number in (0, 10]",
                                           val);
        } else if (strcmp(key, "--time-cap") == 0) {
            if (options_parse_double(val, 1e-6, 1e6, &o->time_cap) != 0)
                return options_usage_error(rank, "--time-cap '%s' must be a positive number of "
                                           "seconds", val);
        } else if (strcmp(key, "--runtime") == 0) {
            if (strcmp(val, "global") == 0) o->runtime = RUNTIME_GLOBAL;
            else if (strcmp(val, "local") == 0) o->runtime = RUNTIME_LOCAL;
            else if (strcmp(val, "auto") == 0) o->runtime = RUNTIME_AUTO;
            else return options_usage_error(rank, "--runtime '%s' must be global, local or auto",
                                            val);
        } else if (strcmp(key, "--experiment") == 0) {
            if (strcmp(val, "nbft") == 0) o->experiment = EXP_NBFT;
            else if (strcmp(val, "bcast-gather") == 0) o->experiment = EXP_BCAST_GATHER;
            else if (strcmp(val, "lmo") == 0) o->experiment = EXP_LMO;
            else if (strcmp(val, "lmo-scan") == 0) o->experiment = EXP_LMO_SCAN;
            else if (strcmp(val, "lmo-binomial") == 0) o->experiment = EXP_LMO_BINOMIAL;
            else return options_usage_error(rank, "--experiment '%s' must be nbft, "
                                            "bcast-gather, lmo, lmo-scan or lmo-binomial", val);
            o->coll = o->experiment >= EXP_LMO ? COLL_NONE : COLL_BCAST;
            have_coll = 1;
        } else if (strcmp(key, "--schedule") == 0) {
            if (strcmp(val, "parallel") == 0) o->serial = 0;
            else if (strcmp(val, "serial") == 0) o->serial = 1;
            else return options_usage_error(rank, "--schedule '%s' must be parallel or serial",
                                            val);
            have_schedule = 1;
        } else if (strcmp(key, "--mapping") == 0) {
            o->mapping_arg = val;
        } else if (strcmp(key, "--gather-size") == 0) {
            if (parse_size(val, &o->gather_size) != 0 || o->gather_size == 0 ||
                o->gather_size > (unsigned long long)INT_MAX)
                return options_usage_error(rank, "--gather-size '%s' must be a size of 1 byte "
                                           "or more", val);
        } else if (strcmp(key, "--fault") == 0) {
            const char *at = strchr(val, '@');
            if (at && strncmp(val, "crash@", 6) == 0) o->fault = FAULT_CRASH;
            else if (at && strncmp(val, "hang@", 5) == 0) o->fault = FAULT_HANG;
            else if (at && strncmp(val, "corrupt@", 8) == 0) o->fault = FAULT_CORRUPT;
            else return options_usage_error(rank, "--fault '%s' must be crash@SIZE, hang@SIZE "
                                            "or corrupt@SIZE", val);
            if (parse_size(at + 1, &o->fault_size) != 0)
                return options_usage_error(rank, "bad size in --fault '%s'", val);
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
                return options_usage_error(rank, "--seed '%s' must be an integer in [0, 2^64)",
                                           val);
            have_seed = 1;
        } else if (strcmp(key, "--raw") == 0) {
            if (val[0] == '\0')
                return options_usage_error(rank, "%s", "--raw needs a file name");
            o->raw_path = val;
        } else if (round_probe_option(key, val, rank, &probe_rc)) {
            if (probe_rc)
                return probe_rc;
        } else {
            return options_usage_error(rank, "unknown option '%s'", key);
        }
    }
    if (!o->methods_arg && (have_seed || o->raw_path))
        return options_usage_error(rank, "%s", "--seed and --raw need --methods (paired mode)");
    if (o->methods_arg && o->max_reps > MAX_REPS / o->nmethods)
        return options_usage_error(rank, "%s", "--max-reps times the number of methods exceeds "
                                   "MAX_REPS (10^8)");
    if (o->methods_arg && o->experiment != EXP_NONE)
        return options_usage_error(rank, "%s", "--methods and --experiment exclude each other");
    if (have_schedule && o->experiment != EXP_LMO)
        return options_usage_error(rank, "%s", "--schedule needs --experiment lmo");
    if (o->mapping_arg && o->experiment != EXP_LMO_BINOMIAL)
        return options_usage_error(rank, "%s", "--mapping needs --experiment lmo-binomial");
    if (!have_coll)
        return options_usage_error(rank, "%s", "--collective is required");
    for (int k = 0; k < o->nmethods; k++)
        if (o->methods[k].groups && o->coll != COLL_BCAST && o->coll != COLL_REDUCE)
            return options_usage_error(rank, "--methods: hierarchical method '%s' exists for "
                                       "bcast and reduce only", o->methods[k].alg);
    if (o->nsizes == 0)
        return options_usage_error(rank, "%s", "--sizes is required");
    if (o->max_reps < o->min_reps)
        return options_usage_error(rank, "%s", "--max-reps is smaller than --min-reps");
    return 0;
}

int options_mapping(const struct options *o, int rank, int nprocs, int *map, int *node)
{
    char buf[65536];
    int n = 0;
    for (int v = 0; v < nprocs; v++)
        map[v] = v;
    if (o->mapping_arg) {
        if (strlen(o->mapping_arg) >= sizeof buf)
            return options_usage_error(rank, "%s", "--mapping list too long");
        strcpy(buf, o->mapping_arg);
        for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok;
             tok = strtok_r(NULL, ",", &save)) {
            long r = 0;
            if (n == nprocs || options_parse_long(tok, 0, nprocs - 1, &r) != 0)
                return options_usage_error(rank, "--mapping '%s' must list every rank 0..P-1 "
                                           "once", o->mapping_arg);
            for (int v = 0; v < n; v++)
                if (map[v] == (int)r)
                    return options_usage_error(rank, "--mapping '%s' must list every rank "
                                               "0..P-1 once", o->mapping_arg);
            map[n++] = (int)r;
        }
        if (n != nprocs)
            return options_usage_error(rank, "--mapping '%s' must list every rank 0..P-1 once",
                                       o->mapping_arg);
    }
    for (int v = 0; v < nprocs; v++)
        if (map[v] == rank)
            *node = v;
    return 0;
}
