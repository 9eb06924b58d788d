/* collsel_bench: time one MPI collective (or a model-fitting experiment) over a list of message
 * sizes; every option and output line: docs/formats/benchmark-output.md. This file: the launch
 * from start to end (buffers, the loop over sizes); the parts it calls: bench.h. */
#include "bench.h"

#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "forcing.h"
#include "lmo.h"
#include "measure.h"
#include "options.h"
#include "output.h"
#include "round_probe.h"
#include "timing.h"

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
            return options_usage_error(rank, "--sizes: %s has no message size: pass --sizes 0",
                                       c->name);
        if (n > 0 && n > INT_MAX / nprocs)
            return options_usage_error(rank, "--sizes: P times a size exceeds INT_MAX bytes "
                                       "(the whole buffer of %s)", c->name);
        size_t sb = coll_blocks(c, 0, rank, nprocs) * (size_t)(n > 0 ? n : 0);
        size_t rb = coll_blocks(c, 1, rank, nprocs) * (size_t)(n > 0 ? n : 0);
        *send = sb > *send ? sb : *send;
        *recv = rb > *recv ? rb : *recv;
    }
    if (c->data == D_BCAST || o->experiment != EXP_NONE)   /* experiments use a and b as before */
        *send = *recv = *send > *recv ? *send : *recv;
    return 0;
}

static int finish(int paired, struct forcing *fs, int rc)
{
    if (paired) {
        forcing_finish(fs);
        MPI_T_finalize();   /* before MPI_Finalize */
    }
    MPI_Finalize();
    return rc;
}

int main(int argc, char **argv)
{
    int rank = 0, nprocs = 0, provided = 0;
    static struct options opt;   /* large: kept off the stack */
    struct forcing fs = {.alg_open = 0, .per_call = 0, .fallback = ""};
    if (argc == 2 && strcmp(argv[1], "--capabilities") == 0) {   /* no MPI, no launcher */
        output_capabilities();
        return 0;
    }
    BENCH_CHECK(MPI_Init(&argc, &argv));
    BENCH_CHECK(PMPI_Comm_rank(MPI_COMM_WORLD, &rank));
    BENCH_CHECK(PMPI_Comm_size(MPI_COMM_WORLD, &nprocs));
    int rc = options_parse(argc, argv, rank, &opt);
    if (rc != 0)
        return finish(0, &fs, rc);
    const int paired = opt.methods_arg != NULL;
    if (round_probe_active() && !paired)
        return finish(0, &fs, options_usage_error(rank, "%s", "--probe needs --methods (paired "
                                                  "mode)"));
    FILE *raw = NULL;
    if (opt.experiment == EXP_LMO && (nprocs < 2 || nprocs > LMO_MAX_PROCS))
        return finish(0, &fs, options_usage_error(rank, "%s", "--experiment lmo needs 2 to 64 "
                                                  "processes"));
    if (paired) {
        BENCH_CHECK(MPI_T_init_thread(MPI_THREAD_SINGLE, &provided));
        if ((rc = forcing_setup(&opt, &fs, rank)) != 0
            || (rc = output_open_raw(&opt, rank, &raw)) != 0)
            return finish(paired, &fs, rc);
    }

    unsigned long long maxm = 0;
    for (int i = 0; i < opt.nsizes; i++)
        if (opt.sizes[i] > maxm) maxm = opt.sizes[i];
    size_t send_bytes = maxm, recv_bytes = maxm;
    if (opt.coll != COLL_NONE && (rc = coll_buffers(&opt, rank, nprocs, &send_bytes,
                                                    &recv_bytes)) != 0)
        return finish(paired, &fs, rc);
    struct bufs bf = {bench_alloc(send_bytes, rank), bench_alloc(recv_bytes, rank), NULL, NULL,
                      NULL, NULL, 0, NULL,
                      {0, bench_alloc((size_t)nprocs * sizeof(int), rank),
                       bench_alloc((size_t)nprocs * sizeof(int), rank)}};
    if (opt.experiment != EXP_NONE) {
        bf.reqs = bench_alloc((size_t)nprocs * sizeof *bf.reqs, rank);
        bf.gather = bench_alloc(rank == 0 ? (size_t)nprocs * opt.gather_size : 1, rank);
    }
    if (opt.experiment == EXP_LMO_SCAN || opt.experiment == EXP_LMO_BINOMIAL) {
        if (maxm > (unsigned long long)INT_MAX / (unsigned long long)nprocs)
            return finish(0, &fs, options_usage_error(rank, "%s", "--sizes: P times the largest "
                                                      "size exceeds INT_MAX bytes (a scatter's "
                                                      "whole buffer)"));
        bf.map = bench_alloc((size_t)nprocs * sizeof *bf.map, rank);
        if ((rc = options_mapping(&opt, rank, nprocs, bf.map, &bf.node)) != 0)
            return finish(0, &fs, rc);
        bf.big = bench_alloc((size_t)nprocs * maxm, rank);
        memset(bf.big, 1, (size_t)nprocs * maxm);
        memset(bf.a, 1, maxm);
    }
    struct lmo_schedule sched = {{NULL, NULL, 0, 0}, {NULL, NULL, 0, 0}, 0};
    if (opt.experiment == EXP_LMO)
        lmo_schedule_make(nprocs, opt.serial, &sched, rank);
    const size_t reps = (size_t)opt.max_reps * (size_t)(paired ? opt.nmethods : 1);
    struct samples sp = {bench_alloc(reps * sizeof(double), rank),
                         bench_alloc(reps * sizeof(double), rank),
                         bench_alloc(reps * sizeof(double), rank),
                         bench_alloc(reps * sizeof(double), rank),
                         bench_alloc((size_t)opt.max_reps * sizeof(double), rank),
                         bench_alloc(reps * sizeof(double), rank),
                         bench_alloc(paired ? reps * sizeof(int) : 1, rank)};
    memset(bf.b, 0, recv_bytes ? recv_bytes : 1);
    for (int k = 0; paired && k < opt.nmethods && !bf.tmp; k++)
        if (opt.methods[k].groups)
            bf.tmp = bench_alloc(maxm ? maxm : 1, rank);
    const int global = timing_global_clock(&opt, nprocs);
    char *rank_hosts = output_rank_hosts(rank, nprocs);
    if (round_probe_active() && (rc = round_probe_start(opt.max_reps, rank)) != 0)
        return finish(paired, &fs, rc);
    if (rank == 0)
        output_start(&opt, &fs, nprocs, global, rank_hosts, sched.pairs.nrounds,
                     sched.triplets.nrounds, raw);

    uint64_t rng = opt.seed;
    if (opt.experiment == EXP_LMO)
        lmo_measure(&opt, &sched, &bf, &sp, rank, nprocs);
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
                    output_lmo_line(opt.lmo_kind, bf.map[0], -1, -1, m, &st, opt.rel_ci);
                    fflush(stdout);
                }
            }
        else
            measure_single(&opt, &fs, &bf, &sp, rank, nprocs, global, m);
    }
    if (raw && fclose(raw) != 0)
        fprintf(stderr, "collsel_bench: writing --raw file '%s' failed\n", opt.raw_path);
    for (int k = 0; paired && k < opt.nmethods; k++) {
        BENCH_CHECK(PMPI_Comm_free(&opt.methods[k].comm));
        if (opt.methods[k].group != MPI_COMM_NULL)
            BENCH_CHECK(PMPI_Comm_free(&opt.methods[k].group));
        if (opt.methods[k].leaders != MPI_COMM_NULL)
            BENCH_CHECK(PMPI_Comm_free(&opt.methods[k].leaders));
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
    lmo_schedule_free(&sched);
    free(sp.local);
    free(sp.starts);
    free(sp.maxed);
    free(sp.minstart);
    free(sp.column);
    free(sp.scratch);
    free(sp.order);
    free(rank_hosts);
    round_probe_stop();
    return finish(paired, &fs, 0);
}
