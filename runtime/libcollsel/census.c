/* Census mode (COLLSEL_CENSUS=PREFIX): what collectives a program calls and how long they take,
 * for `collsel profile`. Per (collective, communicator size, m, processes per node) every rank
 * counts its calls, their total time and a log-bucket histogram of their times in a fixed table
 * (no allocation after MPI_Init: a call costs two clock reads, one attribute lookup and a slot
 * update under a mutex); at MPI_Finalize each rank writes PREFIX.<world rank>.json, which
 * collsel.core.io.profile merges and checks. m is the one pmpi.c queries the trees with, so the
 * profile's points are the trees' points. Works with or without COLLSEL_TREES: with trees the
 * times are those of the decided methods. */
#define _POSIX_C_SOURCE 200809L   /* clock_gettime */

#include "lc_mpi.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* The histogram: STEPS buckets per octave of nanoseconds from 2^FIRST_OCTAVE ns (64 ns) over
 * OCTAVES octaves (to 2^38 ns, 4.6 minutes); the first bucket also holds shorter calls, the
 * last longer ones. A bucket is 1/8 of its octave wide, so its midpoint is within 6.25 % of any
 * time in it: the median's resolution. The file names these numbers; the reader uses those. */
#define LC_CENSUS_FIRST_OCTAVE 6
#define LC_CENSUS_OCTAVES 32
#define LC_CENSUS_STEPS 8
#define LC_CENSUS_BUCKETS (LC_CENSUS_OCTAVES * LC_CENSUS_STEPS)
/* Distinct points a rank can hold (a power of two: open addressing); calls at points beyond
 * them are counted as dropped, never lost silently. */
#define LC_CENSUS_SLOTS 1024u

struct lc_census_slot {
    int used;
    enum collsel_mpi_coll coll;
    int32_t comm_size, ppn;
    uint64_t bytes, calls, ns;
    uint64_t buckets[LC_CENSUS_BUCKETS];
};

static struct {
    int on;
    char prefix[4096];
    uint64_t start_ns;
    uint64_t dropped_calls, dropped_ns;
    int keyval;               /* per communicator: its ppn + 1, cached at its first call */
    pthread_mutex_t lock;
    struct lc_census_slot slot[LC_CENSUS_SLOTS];
} census = {.keyval = MPI_KEYVAL_INVALID, .lock = PTHREAD_MUTEX_INITIALIZER};

/* The call in progress on this thread. depth: a collective inside another (a library built on
 * MPI's own collectives) is part of the outer one's time, not a call of the program's. */
static __thread struct {
    int depth, valid;
    enum collsel_mpi_coll coll;
    int32_t comm_size, ppn;
    uint64_t bytes, start_ns;
} call;

static uint64_t now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

int lc_census_on(void)
{
    return census.on;
}

void lc_census_begin(void)
{
    const char *prefix = getenv("COLLSEL_CENSUS");
    if (census.on || !prefix || !*prefix)
        return;
    if (strlen(prefix) >= sizeof census.prefix - 32) {
        fprintf(stderr, "libcollsel: COLLSEL_CENSUS is longer than %zu characters; no census\n",
                sizeof census.prefix - 32);
        return;
    }
    strcpy(census.prefix, prefix);
    census.start_ns = now_ns();
    census.on = 1;
}

void lc_census_started(int rc)
{
    if (census.on && (rc != MPI_SUCCESS
                      || PMPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, MPI_COMM_NULL_DELETE_FN,
                                                 &census.keyval, NULL) != MPI_SUCCESS))
        census.on = 0;
}

/* comm's processes per node (comm.c's rule), -1 for an inter-communicator; computed at comm's
 * first collective, in which every rank of comm takes part, then cached in an attribute that
 * holds the number itself (nothing to allocate or free). */
static int32_t ppn_of(MPI_Comm comm, int size)
{
    void *value;
    int flag = 0, inter = 0;
    int32_t ppn = -1;
    if (PMPI_Comm_get_attr(comm, census.keyval, &value, &flag) == MPI_SUCCESS && flag)
        return (int32_t)((intptr_t)value - 1);
    PMPI_Comm_test_inter(comm, &inter);
    if (!inter && lc_comm_ppn(comm, size, &ppn) != MPI_SUCCESS)
        ppn = -1;
    PMPI_Comm_set_attr(comm, census.keyval, (void *)(intptr_t)(ppn + 1));
    return ppn;
}

void lc_census_enter(enum collsel_mpi_coll coll, MPI_Comm comm, uint64_t bytes)
{
    int size = 0;
    if (call.depth++ > 0)
        return;
    call.valid = comm != MPI_COMM_NULL && PMPI_Comm_size(comm, &size) == MPI_SUCCESS;
    if (!call.valid)   /* the MPI reports it from the call itself */
        return;
    call.coll = coll;
    call.comm_size = size;
    call.ppn = ppn_of(comm, size);
    call.bytes = bytes;
    call.start_ns = now_ns();
}

static uint32_t bucket_of(uint64_t ns)
{
    int octave;
    if (ns < (1ull << LC_CENSUS_FIRST_OCTAVE))
        return 0;
    octave = 63 - __builtin_clzll(ns);
    if (octave >= LC_CENSUS_FIRST_OCTAVE + LC_CENSUS_OCTAVES)
        return LC_CENSUS_BUCKETS - 1;
    return (uint32_t)((octave - LC_CENSUS_FIRST_OCTAVE) * LC_CENSUS_STEPS
                      + ((ns >> (octave - 3)) & (LC_CENSUS_STEPS - 1)));
}

static uint32_t hash_of(enum collsel_mpi_coll coll, int32_t size, int32_t ppn, uint64_t bytes)
{
    uint64_t h = bytes * 0x9e3779b97f4a7c15ull;
    h ^= ((uint64_t)(uint32_t)size << 20) ^ ((uint64_t)(uint32_t)ppn << 40) ^ (uint64_t)coll;
    h *= 0xff51afd7ed558ccdull;
    return (uint32_t)(h >> 40);
}

void lc_census_leave(void)
{
    uint64_t ns;
    uint32_t i, k;
    if (--call.depth > 0 || !call.valid)
        return;
    ns = now_ns() - call.start_ns;
    pthread_mutex_lock(&census.lock);
    for (k = 0, i = hash_of(call.coll, call.comm_size, call.ppn, call.bytes);
         k < LC_CENSUS_SLOTS; k++, i++) {
        struct lc_census_slot *s = &census.slot[i & (LC_CENSUS_SLOTS - 1)];
        if (!s->used) {
            s->used = 1;
            s->coll = call.coll;
            s->comm_size = call.comm_size;
            s->ppn = call.ppn;
            s->bytes = call.bytes;
        } else if (s->coll != call.coll || s->comm_size != call.comm_size
                   || s->ppn != call.ppn || s->bytes != call.bytes) {
            continue;
        }
        s->calls++;
        s->ns += ns;
        s->buckets[bucket_of(ns)]++;
        break;
    }
    if (k == LC_CENSUS_SLOTS) {
        census.dropped_calls++;
        census.dropped_ns += ns;
    }
    pthread_mutex_unlock(&census.lock);
}

/* `text` into f as a JSON string: printable ASCII but the quote and backslash, a tab as a space
 * (MPICH's "Version:\t4.0.2"), else '?' (the MPI's version line and the host name are only
 * shown), up to the first line break. */
static void put_string(FILE *f, const char *text)
{
    fputc('"', f);
    for (; *text && *text != '\n'; text++)
        fputc(*text == '\t' ? ' '
              : *text >= 0x20 && *text < 0x7f && *text != '"' && *text != '\\' ? *text : '?', f);
    fputc('"', f);
}

static int write_rank(FILE *f, int rank, int size, uint64_t wall_ns)
{
    char library[MPI_MAX_LIBRARY_VERSION_STRING] = "", host[MPI_MAX_PROCESSOR_NAME] = "";
    int length = 0, first = 1;
    uint32_t i, b;
    PMPI_Get_library_version(library, &length);
    PMPI_Get_processor_name(host, &length);
    fprintf(f, "{\"format\": \"collsel-census\", \"version\": 1, \"rank\": %d, \"size\": %d, "
            "\"host\": ", rank, size);
    put_string(f, host);
    fputs(", \"library\": ", f);
    put_string(f, library);
    fprintf(f, ",\n \"clock\": \"CLOCK_MONOTONIC\", \"wall_ns\": %llu,\n \"histogram\": "
            "{\"first_octave\": %d, \"octaves\": %d, \"steps_per_octave\": %d},\n \"dropped\": "
            "{\"calls\": %llu, \"ns\": %llu},\n \"entries\": [",
            (unsigned long long)wall_ns, LC_CENSUS_FIRST_OCTAVE, LC_CENSUS_OCTAVES,
            LC_CENSUS_STEPS, (unsigned long long)census.dropped_calls,
            (unsigned long long)census.dropped_ns);
    for (i = 0; i < LC_CENSUS_SLOTS; i++) {
        const struct lc_census_slot *s = &census.slot[i];
        int first_bucket = 1;
        if (!s->used)
            continue;
        fprintf(f, "%s\n  {\"collective\": \"%s\", \"comm_size\": %ld, \"m\": %llu, \"ppn\": %ld, "
                "\"calls\": %llu, \"ns\": %llu, \"buckets\": [", first ? "" : ",",
                collsel_mpi_coll_names[s->coll], (long)s->comm_size, (unsigned long long)s->bytes,
                (long)s->ppn, (unsigned long long)s->calls, (unsigned long long)s->ns);
        for (b = 0; b < LC_CENSUS_BUCKETS; b++)
            if (s->buckets[b]) {
                fprintf(f, "%s[%u, %llu]", first_bucket ? "" : ", ", b,
                        (unsigned long long)s->buckets[b]);
                first_bucket = 0;
            }
        fputs("]}", f);
        first = 0;
    }
    fputs("\n ]}\n", f);
    return ferror(f);
}

/* PREFIX.<rank>.json, written whole under a temporary name and renamed into place, so the
 * merge never reads half a file. One line on stderr when it cannot be written. */
void lc_census_finish(void)
{
    char path[4096 + 32], tmp[4096 + 48];
    uint64_t wall_ns;
    int rank = 0, size = 0, failed;
    FILE *f;
    if (!census.on)
        return;
    wall_ns = now_ns() - census.start_ns;
    census.on = 0;
    PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
    PMPI_Comm_size(MPI_COMM_WORLD, &size);
    snprintf(path, sizeof path, "%s.%d.json", census.prefix, rank);
    snprintf(tmp, sizeof tmp, "%s.%d.json.tmp", census.prefix, rank);
    if (!(f = fopen(tmp, "w"))) {
        fprintf(stderr, "libcollsel: census: cannot write %s\n", tmp);
        return;
    }
    failed = write_rank(f, rank, size, wall_ns);
    failed |= fclose(f) != 0;
    if (failed || rename(tmp, path) != 0) {
        fprintf(stderr, "libcollsel: census: cannot write %s\n", path);
        remove(tmp);
    }
    if (census.keyval != MPI_KEYVAL_INVALID)
        PMPI_Comm_free_keyval(&census.keyval);
}
