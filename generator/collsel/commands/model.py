"""`collsel model fit|predict|validate|paper`: performance tables from analytical models.

  fit       run the section-5 experiments on real Open MPI (or reuse saved ones), write parameters
  predict   parameters (file or --preset) -> a canonical performance table for any P x m grid
  validate  compare the model's (and Hockney's, and Open MPI's default) choices with a measured table
  paper     model choices for the presets at the P of the paper's Table 3, beside the paper's
"""
import argparse
import json
import os
import sys
import time

from collsel.core import sizes, values
from collsel.core.files import write_file
from collsel.errors import InputError
from collsel.sources.measure import benchmark_program as bench
from collsel.sources.models import experiments, fit, params, predict, validation
from collsel.sources.models.paper import paper_comparison
from collsel.sources.sweep import launch_stats, plan as sweep_plan

PROGRESS_S = (0.0, 86400.0)         # --progress-interval: open below, a day above
FIT_COMM_SIZES = ",".join(map(str, experiments.FIT_COMM_SIZES))   # one node
FIT_NODES = (1, 2)                  # --cluster placements: 1 node (c = 0 only) and 2 nodes
FIT_PPN = (2, 4)
NBFT_MAX_RANGE = (2, 64)            # --nbft-max: an NBFT of 64 ranks is far beyond any tree's
PREDICT_PROGRESS_S = 10.0           # model predict: a progress line this often, once it is slow


def register(sub):
    top = sub.add_parser("model", help="analytical performance models (fit, predict, validate)",
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
    p.add_argument("--bench", help="benchmark binary (default: build the shipped collsel_bench.c with mpicc)")
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
    p.add_argument("--collective", default="bcast", help="bcast (the only modelled one)")
    p.add_argument("--model", choices=("tlop", "hockney"), default="tlop",
                   help="tau-Lop (default) or the Hockney baseline (needs 'hockney' in params)")
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
    if args.collective != "bcast":
        raise InputError(f"--collective {args.collective}: only bcast has tau-Lop models "
                         "(reduce models are in collsel.sources.models.reduce)")
    ranks_per_node = (None if args.ranks_per_node is None else
                      values.integer(args.ranks_per_node, "--ranks-per-node",
                                     *values.COMM_SIZE))
    max_rows = values.integer(args.max_rows, "--max-rows", *predict.MAX_ROWS_RANGE)
    max_comm_size = values.integer(args.max_comm_size, "--max-comm-size", *values.COMM_SIZE)
    ranges = sizes.comm_size_ranges(args.comm_sizes)
    msg_sizes = sizes.parse_msg_sizes(args.msg_sizes)
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
    msg_sizes = sizes.parse_msg_sizes(args.msg_sizes, high=bench.MSG_SIZE[1])
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
            from collsel.sources import cluster as emulated    # only fits on the cluster need it
            cluster = emulated.load(args.cluster or None)
            net_nodes = len(cluster.node_names)
            if max(n for n, _ in placements) > net_nodes:
                raise InputError(f"--nodes {args.nodes}: the emulated cluster has "
                                 f"{net_nodes} node{'s' if net_nodes != 1 else ''}")
        # Measured whole, then written at once (core.files): an experiment file is never
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
