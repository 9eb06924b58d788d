"""`collsel model fit|predict|validate|paper|lmo-fit|lmo-mapping`: performance tables from
analytical models.

  fit       run the section-5 experiments on real Open MPI (or reuse saved ones), write parameters
  predict   parameters (file or --preset) -> a canonical performance table for any P x m grid
  validate  the model's (and Hockney's, and Open MPI's default) choices against a measured table
  paper     model choices for the presets at the P of the paper's Table 3, beside the paper's
  lmo-fit   the heterogeneous LMO model (Lastovetsky & Rychkov 2009): experiments, parameters
  lmo-mapping  predicted best and worst rank-to-processor mapping, binomial scatter/gather
  lmo-check the LMO parameters against the emulated cluster's configuration, and the three
            models' predictions against measured scatter/gather
"""
import argparse
import json
import os
import sys
import time

from collsel.core.io import sizes, values
from collsel.core.io.files import write_file
from collsel.core.maps.table import read_table
from collsel.errors import InputError
from collsel.sources.measure import benchmark_program as bench
from collsel.research.models import experiments, fit, params, predict, validation
from collsel.research.models import lmo_experiments, lmo_fit, lmo_params, lmo_predict, lmo_score
from collsel.research.models.paper import paper_comparison
from collsel.sources.sweep import launch_stats, plan as sweep_plan
from collsel.commands import add_command

PROGRESS_S = (0.0, 86400.0)         # --progress-interval: open below, a day above
FIT_COMM_SIZES = ",".join(map(str, experiments.FIT_COMM_SIZES))   # one node
FIT_NODES = (1, 2)                  # --cluster placements: 1 node (c = 0 only) and 2 nodes
FIT_PPN = (2, 4)
NBFT_MAX_RANGE = (2, 64)            # --nbft-max: an NBFT of 64 ranks is far beyond any tree's
PREDICT_PROGRESS_S = 10.0           # model predict: a progress line this often, once it is slow


def register(sub):
    top = add_command(sub, "model",
                      description=__doc__,
                      formatter_class=argparse.RawDescriptionHelpFormatter)
    msub = top.add_subparsers(title="model commands", metavar="ACTION")
    top.set_defaults(run=_no_action)

    p = msub.add_parser("fit", help="measure the model experiments and fit parameters")
    p.add_argument("--out", required=True, help="parameter file to write (JSON)")
    p.add_argument("--experiments", help="CSV of experiment results: reused if it exists, "
                   "else measured and saved there")
    p.add_argument("--comm-sizes", help="P of the bcast+gather experiments on one node "
                   f"(default {FIT_COMM_SIZES}; not with --cluster, which takes --nodes and "
                   "--ppn)")
    p.add_argument("--cluster", nargs="?", const="", metavar="DIR",
                   help="run the experiments on the emulated cluster (collsel cluster up; its "
                        "state directory DIR, default $COLLSEL_CLUSTER_DIR or "
                        "/var/lib/collsel/cluster): the bcast+gather experiments at every "
                        "--nodes x --ppn placement, and the network NBFT (root alone on its "
                        "node, the others spread over the cluster's other nodes) for gamma1 "
                        "and Q, so the parameters hold both channels (c = 0 shared memory, "
                        "c = 1 network)")
    p.add_argument("--nodes", default=",".join(map(str, FIT_NODES)),
                   help="with --cluster: node counts of the bcast+gather placements (default "
                        f"{','.join(map(str, FIT_NODES))})")
    p.add_argument("--ppn", default=",".join(map(str, FIT_PPN)),
                   help="with --cluster: ranks per node of the placements, P = nodes x ppn, "
                        f"rank r on node r // ppn (default {','.join(map(str, FIT_PPN))})")
    p.add_argument("--algorithms", help="bcast methods to fit, as collsel sweep takes them "
                   "(ids or names, ALG:SEG; default: algorithms 1-9 at segment sizes "
                   "0,1K,8K,32K,128K where they segment)")
    p.add_argument("--nbft-max", default=experiments.NBFT_MAX,
                   help=f"largest P of the NBFT experiments, gamma's table (default "
                        f"{experiments.NBFT_MAX})")
    p.add_argument("--msg-sizes", default=",".join(map(str, experiments.FIT_MSG_SIZES)),
                   help="message sizes of the experiments (default 4^k, 1 B - 4 MiB)")
    p.add_argument("--mpirun", help="mpirun program")
    p.add_argument("--bench", help="benchmark binary (default: build the shipped collsel_bench.c "
                   "with mpicc)")
    p.add_argument("--time-cap", default=0.1, help="seconds per point (0.1)")
    p.add_argument("--launches", default=3,
                   help="separate launches per point, in rounds; the fit uses the mean of the "
                        "launch medians (3, as a sweep)")
    p.add_argument("--progress-interval", default=30.0,
                   help="seconds between progress lines on stderr (30)")
    p.set_defaults(run=run_fit)

    p = msub.add_parser("predict", help="write a predicted performance table")
    p.add_argument("params", nargs="?", help="parameter file (from 'collsel model fit')")
    p.add_argument("--preset", help=f"published parameters: {', '.join(params.PRESETS)}")
    p.add_argument("--collective", default="bcast",
                   help="bcast (the only one with tau-Lop models); an LMO parameter file "
                        "(collsel model lmo-fit) also predicts scatter, gather (algorithms 1 "
                        "linear, 2 binomial) and reduce")
    p.add_argument("--model", choices=("tlop", "hockney", "lmo", "hockney-hetero"),
                   help="tau-Lop (default) or the Hockney baseline (needs 'hockney' in params); "
                        "with an LMO parameter file: lmo (default), hockney-hetero (alpha, beta "
                        "per pair) or hockney (their average)")
    p.add_argument("--mapping", help="LMO parameter file: the processor of rank 0, 1, ... as "
                   "a comma list (default: rank r on processor r)")
    p.add_argument("--comm-sizes", required=True, help="P values: lists and ranges, e.g. 2-1000")
    p.add_argument("--msg-sizes", required=True, help="sizes: lists and ranges; A-B is every "
                   "power of two from A to B, e.g. 16K-4M")
    p.add_argument("--ranks-per-node", help="override the parameter file's mapping (>= 1)")
    p.add_argument("--out", required=True, help="table to write (CSV)")
    p.add_argument("--max-rows", default=predict.MAX_ROWS,
                   help=f"refuse grids of more rows than this (P x sizes x methods; default "
                        f"{predict.MAX_ROWS}: ~45 s and ~30 MB at small P) or whose rows walk "
                        f"more than {predict.RANKS_PER_ROW} times as many ranks (the sum of P "
                        "over the rows; ~50 s more); a progress line every 10 s once it is slow")
    p.add_argument("--max-comm-size", default=predict.MAX_COMM_SIZE,
                   help=f"refuse P above this (default {predict.MAX_COMM_SIZE} = 2^20: a row "
                        "at P walks arrays of P ranks, ~0.15 s and ~200 MB at 2^20, the "
                        "memory the prediction needs)")
    p.set_defaults(run=run_predict)

    p = msub.add_parser("validate", help="score model choices against a measured table")
    p.add_argument("params", help="parameter file")
    p.add_argument("--measured", required=True, metavar="TABLE",
                   help="measured bcast table to score the choices on, e.g. "
                   "bench-data/repeated/bcast-default-sweep.csv")
    p.add_argument("--journal", help="the sweep journal of --measured (default: "
                   "MEASURED.launches if it exists): adds the reproducibility floor, the "
                   "measured best of one launch scored on the others")
    p.add_argument("--json", help="also write the figures as JSON here")
    p.set_defaults(run=run_validate)

    p = msub.add_parser("paper", help="preset choices at the P of the paper's Table 3")
    p.set_defaults(run=run_paper)
    _register_lmo(msub)
    _register_lmo_check(msub)


def _no_action(args):
    raise InputError("collsel model: give an action: fit, predict, validate or paper (see "
                     "collsel model --help)")


def _load_params(args):
    if bool(args.params) == bool(args.preset):
        raise InputError("give a parameter file or --preset NAME (one of them)")
    if args.params:
        return params.load(args.params)
    try:
        path = params.preset_path(args.preset)
    except InputError as e:
        raise InputError(f"--preset: {e}") from None
    return params.load(path)


def _progress_every(seconds, label):
    """A progress callback: one stderr line every `seconds` (none for a quick run)."""
    start = last = time.monotonic()

    def show(text):
        nonlocal last
        now = time.monotonic()
        if now - last >= seconds:
            print(f"collsel model {label}: {text}, {now - start:.0f} s", file=sys.stderr,
                  flush=True)
            last = now
    return show


def run_predict(args):
    # Every flag and the grid's size are checked before any prediction (and the output path
    # before anything is computed).
    values.output_file(values.one_line(args.out, "--out"), "--out")
    if args.params and lmo_params.is_lmo_file(args.params):
        return _run_predict_lmo(args)
    if args.mapping is not None or args.model in ("lmo", "hockney-hetero"):
        raise InputError(f"{'--mapping' if args.mapping is not None else '--model'}: needs an "
                         "LMO parameter file (collsel model lmo-fit)")
    args.model = args.model or "tlop"
    if args.collective not in predict.TAU_LOP_COLLECTIVES:
        raise InputError(f"--collective {args.collective}: only "
                         f"{' and '.join(predict.TAU_LOP_COLLECTIVES)} has tau-Lop models "
                         "(reduce models are in collsel.research.models.reduce)")
    ranks_per_node = (None if args.ranks_per_node is None else
                      sizes.parse_size(args.ranks_per_node, "--ranks-per-node",
                                       *values.COMM_SIZE, "ranks per node"))
    max_rows = values.integer(args.max_rows, "--max-rows", *predict.MAX_ROWS_RANGE)
    max_comm_size = sizes.parse_size(args.max_comm_size, "--max-comm-size", *values.COMM_SIZE,
                                     "communicator size")
    ranges = sizes.comm_size_ranges(args.comm_sizes)
    msg_sizes = sizes.parse_size_list(args.msg_sizes, "--msg-sizes", *values.TABLE_MSG_SIZE,
                                      "message size")
    par = _load_params(args)
    predict.grid_check(par, ranges, len(msg_sizes), max_rows, max_comm_size)
    comm_sizes = [v for lo, hi in ranges for v in range(lo, hi + 1)]
    start = time.monotonic()
    show = _progress_every(PREDICT_PROGRESS_S, "predict")
    text, count = predict.predict_csv(
        par, comm_sizes, msg_sizes, args.model, ranks_per_node=ranks_per_node,
        preset=bool(args.preset), comm_sizes_text=args.comm_sizes,
        msg_sizes_text=args.msg_sizes,
        progress=lambda done, rows: show(f"P {done}/{len(comm_sizes)}, {rows} rows"))
    write_file(args.out, text)
    print(f"collsel model predict: {count} rows ({len(comm_sizes)} P x {len(msg_sizes)} "
          f"sizes x {count // max(1, len(comm_sizes) * len(msg_sizes))} methods) -> "
          f"{args.out} ({time.monotonic() - start:.1f} s)", file=sys.stderr)


def _progress(text):
    print(f"collsel model fit: {text}", file=sys.stderr, flush=True)


def run_fit(args):
    values.output_file(values.one_line(args.out, "--out"), "--out")
    values.one_line(args.experiments, "--experiments")
    reuse = bool(args.experiments) and os.path.isfile(args.experiments)
    if args.experiments and not reuse:
        values.output_file(args.experiments, "--experiments")
    if args.cluster is not None and args.comm_sizes:
        raise InputError("--comm-sizes is for one node; with --cluster give --nodes and --ppn "
                         "(P = nodes x ppn)")
    comm_sizes = sizes.parse_comm_sizes(args.comm_sizes or FIT_COMM_SIZES)
    values.integer(comm_sizes[0], "communicator size", 2, values.COMM_SIZE[1], "--comm-sizes")
    msg_sizes = sizes.parse_size_list(args.msg_sizes, "--msg-sizes", *bench.MSG_SIZE,
                                      "message size")
    nbft_max = values.integer(args.nbft_max, "--nbft-max", *NBFT_MAX_RANGE)
    methods = None
    if args.algorithms:
        methods = sorted((m.algorithm, m.segsize) for m in sweep_plan.plan_methods(
            "bcast", args.algorithms, baseline=False))
    time_cap = values.number(args.time_cap, "--time-cap", *bench.TIME_CAP_S)
    launches = values.integer(args.launches, "--launches", *launch_stats.LAUNCHES)
    interval = values.number(args.progress_interval, "--progress-interval", *PROGRESS_S,
                      low_open=True)
    placements, net_nodes, cluster = None, 0, None
    if args.cluster is not None:
        placements = _placements(args.nodes, args.ppn)
    if reuse:
        rows = experiments.load(args.experiments)
        meta = experiments.base_metadata()
    else:
        if args.cluster is not None:
            from collsel import cluster as emulated    # only fits on the cluster need it
            cluster = emulated.load(args.cluster or None)
            net_nodes = len(cluster.node_names)
            if max(n for n, _ in placements) > net_nodes:
                raise InputError(f"--nodes {args.nodes}: the emulated cluster has "
                                 f"{net_nodes} node{'s' if net_nodes != 1 else ''}")
        # Measured whole, then written at once (core.io.files): an experiment file is never
        # written incrementally, so two fits into one file cannot interleave (the last wins).
        runner = experiments.Runner(mpirun=args.mpirun, bench_path=args.bench,
                                    time_cap=time_cap, cluster=cluster)
        rows, meta = experiments.measure(
            runner, comm_sizes, msg_sizes, launches,
            command="collsel " + " ".join(sys.argv[1:]),
            comm_sizes_text=args.comm_sizes or ("" if cluster else FIT_COMM_SIZES),
            msg_sizes_text=args.msg_sizes, progress_interval=interval,
            log=_progress, methods=methods, nbft_max=nbft_max, placements=placements,
            net_nodes=net_nodes)
        if args.experiments:
            write_file(args.experiments, experiments.save(rows, meta))
    doc = fit.parameter_document(rows, meta, args.experiments)
    write_file(args.out, params.dumps(doc))
    source = f" (from {args.experiments})" if reuse else ""
    plat = doc["platform"]
    channels = (f"; network channel: Q {plat['Q']}, gamma1 {plat['gamma1']}"
                if plat["Q"] is not None else "; one node (no network channel)")
    print(f"collsel model fit: {len(doc['methods'])} methods from {len(rows)} measurements"
          f"{source}{channels} -> {args.out}", file=sys.stderr)


def _placements(nodes_text, ppn_text):
    """[(nodes, ppn)] of --nodes x --ppn (P >= 2), by P."""
    nodes = sizes.parse_comm_sizes(nodes_text, "--nodes")
    ppn = sizes.parse_comm_sizes(ppn_text, "--ppn")
    if max(nodes) < 2:
        raise InputError(f"--nodes {nodes_text}: a fit across nodes needs 2 nodes or more in "
                         "the list (the network channel)")
    placements = sorted({(n, p) for n in nodes for p in ppn if n * p >= 2},
                        key=lambda np_: (np_[0] * np_[1], np_[0]))
    if not placements:
        raise InputError("--nodes x --ppn: every placement has one rank (P = 1)")
    for n, p in placements:
        values.integer(n * p, f"--nodes {n} x --ppn {p}", 2, values.COMM_SIZE[1])
    return placements


def run_validate(args):
    if args.json:
        values.output_file(values.one_line(args.json, "--json"), "--json")
    result = validation.validate(params.load(args.params), args.params, args.measured,
                                 args.journal)
    text = json.dumps(result, indent=1)
    print(text)
    print(validation.summary(result), file=sys.stderr, end="")
    if args.json:
        write_file(args.json, text + "\n")


def run_paper(args):
    rows = paper_comparison()
    agree = sum(r[3] == r[4] for r in rows)
    print("| cluster | P | m (KiB) | collsel model | paper model-based |")
    print("|---|---|---|---|---|")
    for name, P, kb, ours, paper in rows:
        mark = "" if ours == paper else " ✗"
        print(f"| {name} | {P} | {kb} | {ours}{mark} | {paper} |")
    print(f"\nagreement: {agree} / {len(rows)}")


# --- the heterogeneous LMO model (Lastovetsky & Rychkov 2009) ----------------------------------

LMO_PROCS = (3, lmo_experiments.MAX_PROCS)
LMO_LOCAL_PROCS = 4                 # lmo-fit on this machine: 4 ranks (oversubscribed here)


def _register_lmo(msub):
    p = msub.add_parser(
        "lmo-fit", help="run the LMO experiments and fit the heterogeneous LMO model",
        description="Measure the experiments of Lastovetsky & Rychkov 2009 with collsel_bench "
        "(one rank per processor), solve the LMO equations per triplet, average the redundant "
        "estimates, and write an LMO parameter file (processor delays C_i, t_i, link rates "
        "beta_ij, scatter/gather thresholds; also the heterogeneous Hockney model and its "
        "homogeneous average from the same round-trips). First a linear scatter/gather scan "
        "(thresholds S, M1, M2), then empty round-trips, round-trips with an M-byte message "
        "and one-to-two experiments at sizes M <= S.")
    p.add_argument("--out", required=True, help="LMO parameter file to write (JSON, schema "
                   "lmo-params.schema.json)")
    p.add_argument("--experiments", help="CSV of the experiment results: reused if it exists "
                   "(nothing is measured), else measured and saved there")
    p.add_argument("--procs", help=f"processors (ranks, one per processor), "
                   f"{LMO_PROCS[0]}-{LMO_PROCS[1]} (default: {LMO_LOCAL_PROCS} on this "
                   "machine; every node with --cluster)")
    p.add_argument("--cluster", nargs="?", const="", metavar="DIR",
                   help="run on the emulated cluster (collsel cluster up; its state directory "
                        "DIR, default $COLLSEL_CLUSTER_DIR or /var/lib/collsel/cluster): rank r "
                        "alone on node r, so every experiment crosses the network; the "
                        "configured link rates and CPU shares are recorded (collsel model "
                        "lmo-check compares them with the estimates); give --msg-sizes well "
                        "above tbf's 256 KiB bucket there (e.g. 512K,2M): a smaller message on "
                        "a link that idled passes unshaped")
    p.add_argument("--msg-sizes", help="message sizes M of the round-trips and one-to-two "
                   "experiments (default: the largest scan size <= min(S, 64 KiB) and a "
                   "quarter of it)")
    p.add_argument("--scan-sizes", help="sizes of the linear scatter/gather scan, or 'none' "
                   "to skip it (no thresholds) (default: 1 KiB - 256 KiB, two an octave)")
    p.add_argument("--schedule", choices=lmo_experiments.SCHEDULES, default="parallel",
                   help="parallel (default): experiments sharing no processor run at once "
                        "(round-robin pairs, greedy disjoint triplets); serial: one at a time")
    p.add_argument("--compare-schedules", action="store_true",
                   help="also run the experiments with the other schedule: their wall time and "
                        "repetitions, and how far the parameters from either differ, go into "
                        "the file's fit section (the parameters are the --schedule ones)")
    p.add_argument("--statistic", choices=lmo_fit.STATISTICS, default="median",
                   help="time of an experiment: median (default: robust to preemption on a "
                        "shared machine) or mean of its repetitions (the paper's)")
    p.add_argument("--rel-ci", default=lmo_experiments.REL_CI,
                   help="repeat each experiment until the 95 %% confidence interval of its "
                        "mean is within this fraction of the mean (default 0.025, the paper's)")
    p.add_argument("--time-cap", default=0.05,
                   help="seconds per round of experiments at most (default 0.05)")
    p.add_argument("--max-reps", default=1000, help="repetitions per round at most (1000)")
    p.add_argument("--mpirun", help="mpirun program")
    p.add_argument("--bench", help="benchmark binary (default: build the shipped "
                   "collsel_bench.c with mpicc)")
    p.set_defaults(run=run_lmo_fit)

    p = msub.add_parser(
        "lmo-mapping", help="best and worst rank-to-processor mapping of binomial scatter/gather",
        description="From an LMO parameter file: the predicted best and worst mapping of the "
        "processors to the nodes of the binomial scatter or gather tree (in-order binomial, "
        "the root fixed), exhaustive up to 9 processors, else the paper's greedy mapping "
        "improved by pairwise swaps; --measure runs both with collsel_bench.")
    p.add_argument("params", help="LMO parameter file (collsel model lmo-fit)")
    p.add_argument("--collective", choices=("scatter", "gather"), default="scatter",
                   help="scatter (default) or gather")
    p.add_argument("--msg-size", required=True, help="bytes per rank, e.g. 64K")
    p.add_argument("--model", choices=lmo_predict.MODELS, default="lmo",
                   help="model of the prediction: lmo (default), hockney-hetero, hockney")
    p.add_argument("--root", default="0", help="processor of the root (default 0)")
    p.add_argument("--measure", action="store_true",
                   help="also measure the best, worst and identity mappings (collsel_bench "
                        "--experiment lmo-binomial, one rank per processor; with --cluster on "
                        "the emulated cluster), and the linear scatter and gather (--experiment "
                        "lmo-scan, rank r on processor r), at --measure-sizes")
    p.add_argument("--measure-sizes", help="with --measure: message sizes per rank to measure "
                   "(lists and ranges, e.g. 16K,64K,256K; default --msg-size)")
    p.add_argument("--experiments", help="with --measure: save every measured row here (the "
                   "LMO experiment CSV format; `collsel model lmo-check --measured` scores it)")
    p.add_argument("--cluster", nargs="?", const="", metavar="DIR",
                   help="with --measure: on the emulated cluster, rank r on node r")
    p.add_argument("--time-cap", default=0.2, help="with --measure: seconds per point (0.2)")
    p.add_argument("--mpirun", help="mpirun program")
    p.add_argument("--bench", help="benchmark binary")
    p.set_defaults(run=run_lmo_mapping)


def _run_predict_lmo(args):
    if args.preset:
        raise InputError("--preset: give an LMO parameter file or a preset, not both")
    if args.ranks_per_node is not None:
        raise InputError("--ranks-per-node: an LMO prediction places rank r on processor "
                         "--mapping[r] (one rank per processor)")
    model = args.model or "lmo"
    if model == "tlop":
        raise InputError("--model tlop: an LMO parameter file predicts with lmo, "
                         "hockney-hetero or hockney")
    par = lmo_params.load(args.params)
    comm_sizes = sizes.parse_comm_sizes(args.comm_sizes)
    msg_sizes = sizes.parse_size_list(args.msg_sizes, "--msg-sizes", *values.TABLE_MSG_SIZE,
                                      "message size")
    mapping = None
    if args.mapping is not None:
        mapping = [values.integer(x, "--mapping", 0, par.n - 1, "--mapping")
                   for x in args.mapping.split(",")]
    lmo_predict.check_request(par, args.collective, comm_sizes, len(msg_sizes), mapping)
    start = time.monotonic()
    text, count = lmo_predict.table_csv(par, model, args.collective, comm_sizes, msg_sizes,
                                        mapping, args.comm_sizes, args.msg_sizes)
    write_file(args.out, text)
    print(f"collsel model predict: {count} rows ({args.collective}, {model} model, "
          f"{len(comm_sizes)} P x {len(msg_sizes)} sizes) -> {args.out} "
          f"({time.monotonic() - start:.1f} s)", file=sys.stderr)


def _lmo_runner(args, cluster_arg, time_cap, max_reps=1000, rel_ci=lmo_experiments.REL_CI):
    cluster = None
    if cluster_arg is not None:
        from collsel import cluster as emulated    # only runs on the cluster need it
        cluster = emulated.load(cluster_arg or None)
    return lmo_experiments.Runner(mpirun=args.mpirun, bench_path=args.bench, time_cap=time_cap,
                                  max_reps=max_reps, rel_ci=rel_ci, cluster=cluster)


def _lmo_progress(text):
    print(f"collsel model lmo-fit: {text}", file=sys.stderr, flush=True)


def run_lmo_fit(args):
    values.output_file(values.one_line(args.out, "--out"), "--out")
    values.one_line(args.experiments, "--experiments")
    reuse = bool(args.experiments) and os.path.isfile(args.experiments)
    if args.experiments and not reuse:
        values.output_file(args.experiments, "--experiments")
    time_cap = values.number(args.time_cap, "--time-cap", *bench.TIME_CAP_S)
    max_reps = values.integer(args.max_reps, "--max-reps", *bench.REPS)
    rel_ci = values.number(args.rel_ci, "--rel-ci", *bench.REL_CI)
    msg_sizes = (None if args.msg_sizes is None else
                 sizes.parse_size_list(args.msg_sizes, "--msg-sizes", 1, bench.MSG_SIZE[1]))
    scan_sizes = (lmo_experiments.SCAN_SIZES if args.scan_sizes is None else () if
                  args.scan_sizes.strip() == "none" else
                  sizes.parse_size_list(args.scan_sizes, "--scan-sizes", 1, bench.MSG_SIZE[1]))
    if reuse:
        rows, meta = lmo_experiments.load(args.experiments)
    else:
        runner = _lmo_runner(args, args.cluster, time_cap, max_reps, rel_ci)
        nodes = len(runner.cluster.node_names) if runner.cluster else LMO_PROCS[1]
        P = values.integer(args.procs or (nodes if runner.cluster else LMO_LOCAL_PROCS),
                           "--procs", LMO_PROCS[0], min(nodes, LMO_PROCS[1]), "--procs")
        meta = lmo_experiments.launch_metadata(runner, "collsel " + " ".join(sys.argv[1:]), P)
        rows = []
        if scan_sizes:
            _lmo_progress(f"lmo-scan: linear scatter and gather at {len(scan_sizes)} sizes, P={P}")
            rows += runner.launch("lmo-scan", P, scan_sizes)[0]
        if msg_sizes is None:
            msg_sizes = lmo_fit.auto_msg_sizes(rows, args.statistic, scan_sizes)
        schedules = [args.schedule] + ([s for s in lmo_experiments.SCHEDULES
                                        if s != args.schedule] if args.compare_schedules else [])
        for schedule in schedules:
            _lmo_progress(f"lmo ({schedule}): round-trips and one-to-two at M = "
                      f"{','.join(map(str, msg_sizes))}")
            got, head = runner.launch("lmo", P, msg_sizes, schedule)
            rows += got
            meta.update({"rank_hosts": head.get("rank_hosts", ""),
                         f"rounds_{schedule}": f"{head.get('pair_rounds')} pair, "
                                               f"{head.get('triplet_rounds')} triplet"})
        meta["wall_s"] = "; ".join(f"{k} {v:.2f}" for k, v in runner.wall.items())
        if args.experiments:
            write_file(args.experiments, lmo_experiments.save(rows, meta))
    doc = lmo_fit.document(rows, meta, args.statistic, args.schedule, args.experiments or "")
    lmo_params.check_document(doc, args.out)
    write_file(args.out, lmo_params.dumps(doc))
    _lmo_summary(doc, args.out, "from " + args.experiments if reuse else "measured")


def _lmo_summary(doc, out, how):
    """Parameters on stdout, the cost and thresholds on stderr."""
    n, lmo_doc = len(doc["processors"]), doc["lmo"]
    print("processor  host  C_us  t_us_per_byte  (beta_ij bytes/us by row)")
    for i in range(n):
        rates = " ".join("-" if x is None else f"{x:.4g}" for x in lmo_doc["beta_bytes_per_us"][i])
        print(f"{i}  {doc['processors'][i]}  {lmo_doc['C_us'][i]:.4g}  "
              f"{lmo_doc['t_us_per_byte'][i]:.4g}  {rates}")
    fit_doc, th = doc["fit"], doc["thresholds"]
    counts = "; ".join(f"{k} {v['experiments']} ({v['repetitions']} reps, CI met "
                       f"{v['ci_met']})" for k, v in fit_doc["experiments"].items())
    print(f"collsel model lmo-fit: {n} processors, {how}: {counts}; wall "
          f"{fit_doc.get('wall_s', '?')}; S={th['scatter_S']} M1={th['gather_M1']} "
          f"M2={th['gather_M2']}; Hockney alpha {doc['hockney']['alpha']} us, beta "
          f"{doc['hockney']['beta']} us/B -> {out}", file=sys.stderr)
    truth = lmo_fit.against_configuration(doc)
    if truth:
        print(f"against the cluster's configuration (collsel model lmo-check {out}): beta "
              f"|relative error| mean {truth['beta_rel_error_mean_abs']}, max "
              f"{truth['beta_rel_error_max_abs']}; whole per-byte rate mean "
              f"{truth['effective_rel_error_mean_abs']}, max "
              f"{truth['effective_rel_error_max_abs']}", file=sys.stderr)


def run_lmo_mapping(args):
    par = lmo_params.load(args.params)
    m = sizes.parse_size(args.msg_size, "--msg-size", 1, bench.MSG_SIZE[1])
    root = values.integer(args.root, "--root", 0, par.n - 1, "--root")
    time_cap = values.number(args.time_cap, "--time-cap", *bench.TIME_CAP_S)
    for flag, given in (("--cluster", args.cluster is not None),
                        ("--measure-sizes", args.measure_sizes is not None),
                        ("--experiments", args.experiments is not None)):
        if given and not args.measure:
            raise InputError(f"{flag}: only with --measure")
    if args.experiments:
        values.output_file(values.one_line(args.experiments, "--experiments"), "--experiments")
    measure_sizes = ([m] if args.measure_sizes is None else
                     sizes.parse_size_list(args.measure_sizes, "--measure-sizes", 1,
                                           bench.MSG_SIZE[1]))
    advice = lmo_predict.mapping_advice(par.models[args.model], args.collective, m, root=root)
    print(f"binomial {args.collective}, {m} B per rank, root processor {root}, {par.n} "
          f"processors, {args.model} model ({advice['method']}, {advice['searched']} mappings)")
    measured, rows = {}, []
    if args.measure:
        runner = _lmo_runner(args, args.cluster, time_cap)
        kind = "bscatter" if args.collective == "scatter" else "bgather"
        meta = lmo_experiments.launch_metadata(runner, "collsel " + " ".join(sys.argv[1:]),
                                               par.n)
        for label in ("best", "worst", "identity"):
            got, _ = runner.launch("lmo-binomial", par.n, measure_sizes,
                                   mapping=advice[label][0])
            rows += got
            measured[label] = next((r["median_us"] for r in got
                                    if r["kind"] == kind and r["msg_size"] == m), None)
        rows += runner.launch("lmo-scan", par.n, measure_sizes)[0]
        meta["wall_s"] = "; ".join(f"{k} {v:.2f}" for k, v in runner.wall.items())
        if args.experiments:
            write_file(args.experiments, lmo_experiments.save(rows, meta))
    best = advice["best"][1]
    for label in ("best", "worst", "identity"):
        mapping, t = advice[label]
        extra = (f", measured {measured[label]:.4g} us (median)"
                 if measured.get(label) is not None else "")
        print(f"{label:8s} --mapping {','.join(map(str, mapping))}: predicted {t:.4g} us "
              f"({100 * (t / best - 1):+.1f} % vs best){extra}")


def _register_lmo_check(msub):
    p = msub.add_parser(
        "lmo-check", help="LMO parameters against the cluster's configuration and measured "
        "scatter/gather",
        description="(1) When the parameter file was fitted on the emulated cluster (lmo-fit "
        "--cluster records each node's tbf rate and CPU share): the estimated beta_ij and the "
        "model's whole per-byte rate of a message i -> j, 1 / (t_i + t_j + 1/beta_ij), against "
        "the configured rate of link i-j, min(rate_i, rate_j) (traffic leaves through node i's "
        "shaped egress and enters through node j's shaped ingress): relative error per link, "
        "mean and max; and the Spearman rank correlation of C_i and t_i with 1 / cpu share and "
        "with 1 / link rate. (2) With --measured: the predictions of the LMO, heterogeneous "
        "Hockney and homogeneous Hockney models against every measured linear scatter/gather "
        "and binomial scatter/gather row (lmo-mapping --measure --experiments, or lmo-fit's "
        "scan): mean and max relative error per collective, mapping and model.")
    p.add_argument("params", help="LMO parameter file (collsel model lmo-fit)")
    p.add_argument("--measured", action="append", default=[], metavar="FILE",
                   help="LMO experiment CSV with lscatter/lgather/bscatter/bgather rows "
                        "(repeatable)")
    p.add_argument("--statistic", choices=lmo_fit.STATISTICS, default="median",
                   help="measured time of a row: median (default) or mean of its repetitions")
    p.add_argument("--sweep", metavar="TABLE",
                   help="a measured sweep of the same cluster (collsel sweep): its measurements "
                        "(points x launches, the sum of its launches column) and repetitions "
                        "(sum of n) beside the fit's experiments and repetitions")
    p.add_argument("--json", help="also write every figure (per link, per point) as JSON here")
    p.set_defaults(run=run_lmo_check)


def _sweep_cost(path):
    """Points x launches, repetitions and wall time (its run.K.wall_s lines) of a sweep table
    (every measured row, also those of a method that fell back)."""
    table = read_table(path, measured=True)
    meta = table.sources[0].metadata
    count = {k: (sum(int(x) for x in table.extra[k]) if k in table.extra
                 else len(table.time_us)) for k in ("launches", "n")}
    wall = sum(float(v) for k, v in meta.items() if k.startswith("run.") and k.endswith(".wall_s"))
    return {"table": str(path), "measurements": count["launches"], "repetitions": count["n"],
            "wall_s": wall}


def _fmt(x, spec=".3g"):
    return "-" if x is None else format(x, spec)


def run_lmo_check(args):
    if args.json:
        values.output_file(values.one_line(args.json, "--json"), "--json")
    par = lmo_params.load(args.params)
    out = {"params": par.path, "configuration": lmo_fit.against_configuration(par.doc)}
    truth = out["configuration"]
    if truth is None:
        print(f"{par.path}: not fitted on the emulated cluster (no fit.cluster_nodes): no "
              "configured truth to compare with")
    else:
        print("link  configured_B/us  beta  rel_err  effective  rel_err")
        for x in truth["links"]:
            print(f"{x['link']}  {x['configured']:.4g}  {_fmt(x['beta'], '.4g')}  "
                  f"{_fmt(x['beta_rel_error'], '+.3f')}  {_fmt(x['effective'], '.4g')}  "
                  f"{_fmt(x['effective_rel_error'], '+.3f')}")
        for key in ("beta", "effective"):
            print(f"{key}: |relative error| mean {_fmt(truth[f'{key}_rel_error_mean_abs'])}, "
                  f"max {_fmt(truth[f'{key}_rel_error_max_abs'])} "
                  f"({truth[f'{key}_links_infinite']} links without a finite estimate)")
        lmo_doc = par.doc["lmo"]
        print("node  rate_B/us  cpu_share  C_us  t_us_per_byte")
        for i, name in enumerate(par.processors):
            print(f"{name}  {truth['node_rate_bytes_per_us'][i]:.4g}  {truth['cpu_share'][i]:g}  "
                  f"{lmo_doc['C_us'][i]:.4g}  {lmo_doc['t_us_per_byte'][i]:.4g}")
        print("Spearman: " + ", ".join(
            f"{p} vs 1/{q} {_fmt(truth[f'spearman_{p}_vs_inverse_{q}'], '+.2f')}"
            for p in ("C", "t") for q in ("share", "rate")))
    out["cost"] = lmo_fit.estimation_cost(par.doc)
    print("estimation cost: schedule  experiments  repetitions  ci_met  wall_s  (" +
          f"rel-ci {par.doc['fit'].get('rel_ci', '?')})")
    for c in out["cost"]:
        print(f"  {c['schedule']}  {c['experiments']}  {c['repetitions']}  {c['ci_met']}  "
              f"{_fmt(c['wall_s'], '.2f')}")
    if args.sweep:
        out["sweep_cost"] = _sweep_cost(args.sweep)
        used = [c for c in out["cost"]
                if c["schedule"] in ("scan", par.doc["fit"].get("schedule"))]
        fit_points = sum(c["experiments"] for c in used)
        fit_reps = sum(c["repetitions"] for c in used)
        sc = out["sweep_cost"]
        print(f"measurements: the fit {fit_points} experiments ({fit_reps} repetitions; the "
              f"scan and the {par.doc['fit'].get('schedule')} schedule the parameters come "
              f"from), the sweep {sc['measurements']} points x launches "
              f"({sc['repetitions']} repetitions, {sc['wall_s']:.1f} s): "
              f"{100 * fit_points / max(sc['measurements'], 1):.1f} %")
    if args.measured:
        rows = []
        for path in args.measured:
            rows += lmo_experiments.load(path)[0]
        out["prediction"] = lmo_score.score(par, rows, args.statistic)
        names = list(par.models)
        print("collective  algorithm  mapping  sizes  " + "  ".join(
            f"{n}_mean {n}_max" for n in names) + "  (|relative error|)")
        for g in out["prediction"]["groups"]:
            print(f"{g['collective']}  {g['algorithm']}  {g['mapping']}  {len(g['sizes'])}  "
                  + "  ".join(f"{g['models'][n]['mean_abs']:.3f} {g['models'][n]['max_abs']:.3f}"
                              for n in names))
    if args.json:
        write_file(args.json, json.dumps(out, indent=1) + "\n")
