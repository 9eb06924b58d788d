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

from collsel.core.files import write_file
from collsel.core.sizes import parse_comm_sizes, parse_msg_sizes
from collsel.core.table import render_table
from collsel.errors import InputError
from collsel.sources.models import experiments, fit, params, predict, validation
from collsel.sources.models.paper import paper_comparison


def register(sub):
    top = sub.add_parser("model", help="analytical performance models (fit, predict, validate)",
                         description=__doc__,
                         formatter_class=argparse.RawDescriptionHelpFormatter)
    msub = top.add_subparsers(title="model commands", metavar="ACTION")
    top.set_defaults(run=lambda args: (top.print_help(sys.stderr), 2)[1])

    p = msub.add_parser("fit", help="measure the model experiments and fit parameters")
    p.add_argument("--out", required=True, help="parameter file to write (JSON)")
    p.add_argument("--experiments", help="CSV of experiment results: reused if it exists, "
                   "else measured and saved there")
    p.add_argument("--comm-sizes", default="4,8,16", help="P of the bcast+gather experiments")
    p.add_argument("--msg-sizes", default=",".join(map(str, experiments.FIT_MSG_SIZES)),
                   help="message sizes of the experiments (default 4^k, 1 B - 4 MiB)")
    p.add_argument("--mpirun", help="mpirun program")
    p.add_argument("--bench", help="benchmark binary (default: build the shipped collsel_bench.c with mpicc)")
    p.add_argument("--time-cap", type=float, default=0.1, help="seconds per point (0.1)")
    p.add_argument("--launches", type=int, default=3,
                   help="separate launches per point, in rounds; the fit uses the mean of the "
                        "launch medians (3, as a sweep)")
    p.add_argument("--progress-interval", type=float, default=30.0,
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
    p.add_argument("--ranks-per-node", type=int, help="override the parameter file's mapping")
    p.add_argument("--out", required=True, help="table to write (CSV)")
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


def _load_params(args):
    if bool(args.params) == bool(args.preset):
        raise InputError("give a parameter file or --preset NAME (one of them)")
    return params.load(args.params or params.preset_path(args.preset))


def run_predict(args):
    if args.collective != "bcast":
        raise InputError(f"--collective {args.collective}: only bcast has tau-Lop models "
                         "(reduce models are in collsel.sources.models.reduce)")
    par = _load_params(args)
    comm_sizes = parse_comm_sizes(args.comm_sizes)
    msg_sizes = parse_msg_sizes(args.msg_sizes)
    start = time.monotonic()
    rows, meta = predict.predict_table(par, comm_sizes, msg_sizes, args.model,
                                       ranks_per_node=args.ranks_per_node,
                                       preset=bool(args.preset),
                                       comm_sizes_text=args.comm_sizes,
                                       msg_sizes_text=args.msg_sizes)
    write_file(args.out, render_table(rows, meta))
    print(f"collsel model predict: {len(rows)} rows ({len(comm_sizes)} P x {len(msg_sizes)} "
          f"sizes x {len(rows) // max(1, len(comm_sizes) * len(msg_sizes))} methods) -> "
          f"{args.out} ({time.monotonic() - start:.1f} s)", file=sys.stderr)


def _progress(text):
    print(f"collsel model fit: {text}", file=sys.stderr, flush=True)


def run_fit(args):
    comm_sizes = parse_comm_sizes(args.comm_sizes)
    msg_sizes = parse_msg_sizes(args.msg_sizes)
    if args.experiments and os.path.exists(args.experiments):
        rows = experiments.load(args.experiments)
        meta = experiments.base_metadata()
        print(f"collsel model fit: {len(rows)} measurements from {args.experiments}",
              file=sys.stderr)
    else:
        if args.launches < 1:
            raise InputError(f"--launches {args.launches}: must be at least 1")
        runner = experiments.Runner(mpirun=args.mpirun, bench_path=args.bench,
                                    time_cap=args.time_cap)
        rows, meta = experiments.measure(
            runner, comm_sizes, msg_sizes, args.launches,
            command="collsel " + " ".join(sys.argv[1:]), comm_sizes_text=args.comm_sizes,
            msg_sizes_text=args.msg_sizes, progress_interval=args.progress_interval,
            log=_progress)
        if args.experiments:
            write_file(args.experiments, experiments.save(rows, meta))
    doc = fit.parameter_document(rows, meta, args.experiments)
    write_file(args.out, params.dumps(doc))
    print(f"collsel model fit: {len(doc['methods'])} methods from {len(rows)} measurements "
          f"-> {args.out}", file=sys.stderr)


def run_validate(args):
    result = validation.validate(params.load(args.params), args.params, args.measured,
                                 args.journal)
    text = json.dumps(result, indent=1)
    print(text)
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
