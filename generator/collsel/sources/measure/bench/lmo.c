/* The LMO point-to-point experiments (lmo.h); lmo_call's messages are the measured calls. */
#include "lmo.h"

#include <stdlib.h>
#include <string.h>

#include "output.h"
#include "timing.h"

const char *const lmo_kind_names[] = {"rt0", "rt", "o2t", "lscatter", "lgather", "bscatter",
                                      "bgather"};

/* Pairs root < a: round-robin rounds (circle method: n - 1 rounds of n / 2 pairs, a dummy
 * player when n is odd) in parallel, one pair a round serially. */
static void lmo_pair_rounds(int n, int serial, struct lmo_rounds *out, int rank)
{
    const int total = n * (n - 1) / 2, players = n + n % 2;
    out->groups = bench_alloc((size_t)total * sizeof *out->groups, rank);
    out->start = bench_alloc((size_t)(total + 1) * sizeof *out->start, rank);
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
    struct lmo_group *all = bench_alloc((size_t)(total ? total : 1) * sizeof *all, rank);
    char *used = bench_alloc((size_t)(total ? total : 1), rank);
    char busy[LMO_MAX_PROCS];
    int t = 0;
    for (int i = 0; i < n; i++)
        for (int j = i + 1; j < n; j++)
            for (int k = j + 1; k < n; k++, t++) {
                struct lmo_group g = {i, j, k, t};
                all[t] = g;
                used[t] = 0;
            }
    out->groups = bench_alloc((size_t)(total ? total : 1) * sizeof *out->groups, rank);
    out->start = bench_alloc((size_t)(total + 1) * sizeof *out->start, rank);
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

void lmo_schedule_make(int n, int serial, struct lmo_schedule *sc, int rank)
{
    lmo_pair_rounds(n, serial, &sc->pairs, rank);
    lmo_triplet_rounds(n, serial, &sc->triplets, rank);
    sc->ntriplets = sc->triplets.ngroups;
}

void lmo_schedule_free(struct lmo_schedule *sc)
{
    free(sc->pairs.groups);
    free(sc->pairs.start);
    free(sc->triplets.groups);
    free(sc->triplets.start);
}

/* One repetition of this rank's part of experiment g. */
static void lmo_call(enum lmo_kind kind, const struct lmo_group *g, int rank, struct bufs *bf,
                     int count)
{
    if (g->root == rank) {
        BENCH_CHECK(MPI_Send(bf->a, count, MPI_BYTE, g->a, LMO_TAG, MPI_COMM_WORLD));
        if (kind == LMO_O2T)
            BENCH_CHECK(MPI_Send(bf->a, count, MPI_BYTE, g->b, LMO_TAG, MPI_COMM_WORLD));
        BENCH_CHECK(MPI_Recv(bf->b, 0, MPI_BYTE, g->a, LMO_TAG, MPI_COMM_WORLD,
                             MPI_STATUS_IGNORE));
        if (kind == LMO_O2T)
            BENCH_CHECK(MPI_Recv(bf->b, 0, MPI_BYTE, g->b, LMO_TAG, MPI_COMM_WORLD,
                                 MPI_STATUS_IGNORE));
    } else {
        BENCH_CHECK(MPI_Recv(bf->b, count, MPI_BYTE, g->root, LMO_TAG, MPI_COMM_WORLD,
                             MPI_STATUS_IGNORE));
        BENCH_CHECK(MPI_Send(bf->a, 0, MPI_BYTE, g->root, LMO_TAG, MPI_COMM_WORLD));
    }
}

/* The experiments g[0 .. ng) at once (they share no processor): warm-up (the first call's data
 * checked on the receivers), then repetitions, each after a barrier of all ranks, timed on
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
        BENCH_CHECK(PMPI_Barrier(MPI_COMM_WORLD));
        double t0 = timing_now();
        if (mine)
            lmo_call(kind, mine, rank, bf, count);
        if (w == 0)
            first = is_root ? timing_now() - t0 : 0;
        for (size_t i = 0; w == 0 && mine && !is_root && i < (size_t)count; i++)
            if (bf->b[i] != coll_pattern(i, m)) {
                fprintf(stderr, "collsel_bench: rank %d: wrong data at byte %zu of a %d-byte "
                        "%s message from rank %d\n", rank, i, count, lmo_kind_names[kind],
                        mine->root);
                PMPI_Abort(MPI_COMM_WORLD, 5);
            }
    }
    BENCH_CHECK(PMPI_Allreduce(&first, &first_all, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD));
    long n = 0, batch = timing_first_batch(o, first_all);
    struct stats st = {0, 0, 0, 0, 0, 0, 0};
    double start = timing_now();
    while (batch > 0) {
        for (long i = n; i < n + batch; i++) {
            BENCH_CHECK(PMPI_Barrier(MPI_COMM_WORLD));
            double t0 = timing_now();
            if (mine)
                lmo_call(kind, mine, rank, bf, count);
            sp->local[i] = timing_now() - t0;
        }
        n += batch;
        long next = 0;
        if (is_root) {
            timing_stats(sp->local, n, sp->scratch, &st);
            next = timing_next_batch(o, n, timing_now() - start, st.ci <= o->rel_ci * st.mean,
                                     st.ci / (o->rel_ci * st.mean));
        }
        BENCH_CHECK(PMPI_Allreduce(&next, &batch, 1, MPI_LONG, MPI_MAX, MPI_COMM_WORLD));
    }
    double rec[8] = {is_root ? mine->index : -1, st.mean, st.median, st.min, st.max, st.stdev,
                     st.ci, (double)st.n};
    double *all = rank == 0 ? bench_alloc((size_t)nprocs * sizeof rec, rank) : NULL;
    BENCH_CHECK(PMPI_Gather(rec, 8, MPI_DOUBLE, all, 8, MPI_DOUBLE, 0, MPI_COMM_WORLD));
    for (int r = 0; rank == 0 && r < nprocs; r++) {
        const double *x = all + 8 * (size_t)r;
        if (x[0] < 0)
            continue;
        struct stats s = {x[1], x[2], x[3], x[4], x[5], x[6], (long)x[7]};
        res[(long)x[0]] = s;
    }
    free(all);
}

void lmo_measure(const struct options *o, const struct lmo_schedule *sc, struct bufs *bf,
                 struct samples *sp, int rank, int nprocs)
{
    const int npairs = nprocs * (nprocs - 1) / 2;
    struct stats *res = bench_alloc((size_t)(3 * sc->ntriplets > npairs ? 3 * sc->ntriplets
                                             : npairs) * sizeof *res, rank);
    for (int s = -1; s < o->nsizes; s++) {
        const unsigned long long m = s < 0 ? 0 : o->sizes[s];
        for (size_t i = 0; i < (size_t)m; i++)
            bf->a[i] = coll_pattern(i, m);
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
                    output_lmo_line(kind, i, j, -1, m, &res[idx], o->rel_ci);
            for (int i = 0, t = 0; kind == LMO_O2T && i < nprocs; i++)
                for (int j = i + 1; j < nprocs; j++)
                    for (int k = j + 1; k < nprocs; k++, t++) {
                        output_lmo_line(kind, i, j, k, m, &res[3 * t], o->rel_ci);
                        output_lmo_line(kind, j, i, k, m, &res[3 * t + 1], o->rel_ci);
                        output_lmo_line(kind, k, i, j, m, &res[3 * t + 2], o->rel_ci);
                    }
            fflush(stdout);
        }
    }
    free(res);
}
