"""`collsel model fit|predict|validate|paper`: performance tables from analytical models.

  fit       run the section-5 experiments on real Open MPI (or reuse saved ones), write parameters
  predict   parameters (file or --preset) -> a canonical performance table for any P x m grid
  validate  compare the model's (and Hockney's, and Open MPI's default) choices with a measured table
  paper     model choices for the presets at the P of the paper's Table 3, beside the paper's
"""
import json
import sys
import time
from pathlib import Path

import numpy as np

from collsel import __version__
from collsel.errors import InputError
from collsel.sources.sweep import driver
from collsel.core.files import write_file
from collsel.core.table import render_table
from collsel.sources.models import bcast, experiments, fit, params, validation

PAPER_TABLE3 = {
    # Nuriyev et al. 2022, Table 3, "Model-based" column, m = 16 KiB .. 4 MiB (9 sizes).
    ("grisou", 450): ["chain"] * 9,
    ("grisou", 600): ["chain"] * 9,
    ("gros", 400): ["binary", "binary"] + ["split_binary"] * 2 + ["k-chain"] * 5,
    ("gros", 1000): ["binomial"] + ["split_binary"] * 5 + ["k-chain"] * 3,
    ("marenostrum4", 96): ["k-chain"] * 7 + ["chain"] * 2,
    ("marenostrum4", 480): ["k-chain"] * 9,
}
PAPER_NAMES = {1: "flat", 2: "k-chain", 3: "chain", 4: "split_binary", 5: "binary",
               6: "binomial"}
PAPER_SIZES = [2 ** k * 1024 for k in range(4, 13)]


def register(sub):
    top = sub.add_parser("model", help="analytical performance models (fit, predict, validate)",
                         description=__doc__,
                         formatter_class=__import__("argparse").RawDescriptionHelpFormatter)
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
    p.add_argument("--measured", default="bench-data/bcast-sweep.csv")
    p.add_argument("--journal", help="the sweep journal of --measured (default: "
                   "MEASURED.launches if it exists): adds the reproducibility floor, the "
                   "measured best of one launch scored on the others")
    p.add_argument("--json", help="also write the figures as JSON here")
    p.set_defaults(run=run_validate)

    p = msub.add_parser("paper", help="preset choices at the P of the paper's Table 3")
    p.set_defaults(run=run_paper)


def parse_msg_sizes(text):
    out = set()
    for part in (x.strip() for x in text.split(",")):
        if not part:
            continue
        if "-" in part:
            a, b = (driver.parse_size(x, "--msg-sizes") for x in part.split("-", 1))
            if a < 1 or b < a:
                raise InputError(f"--msg-sizes: bad range '{part}'")
            k = 1 << (a - 1).bit_length()
            out.add(a)
            while k <= b:
                out.add(k)
                k <<= 1
            out.add(b)
        else:
            out.add(driver.parse_size(part, "--msg-sizes"))
    if not out:
        raise InputError("--msg-sizes: empty list")
    return sorted(out)


def _load_params(args):
    if bool(args.params) == bool(args.preset):
        raise InputError("give a parameter file or --preset NAME (one of them)")
    return params.load(args.params or params.preset_path(args.preset))


def predict_times(par, P, msg_sizes, model="tlop", platform=None):
    """{(alg, seg): array of predicted µs over msg_sizes} for the bcast methods of `par`."""
    platform = platform or par.platform
    out = {}
    for (coll, alg, seg), theta in sorted(par.methods.items()):
        if coll != "bcast":
            continue
        if model == "tlop":
            A = np.array([bcast.tlop_coefficients(alg, P, m, seg, platform) for m in msg_sizes])
            out[(alg, seg)] = A @ np.array(theta)
        else:
            h = par.hockney
            A = np.array([bcast.hockney_coefficients(alg, P, m, seg, platform.chain_fanout,
                                                      platform.knomial_radix)
                          for m in msg_sizes])
            out[(alg, seg)] = A @ np.array([h["alpha"], h["beta"]])
    return out


def run_predict(args):
    if args.collective != "bcast":
        raise InputError(f"--collective {args.collective}: only bcast has tau-Lop models "
                         "(reduce models are in collsel.models.reduce)")
    par = _load_params(args)
    if args.model == "hockney" and not par.hockney:
        raise InputError(f"{par.path}: no \"hockney\" parameters for --model hockney")
    comm_sizes = driver.parse_comm_sizes(args.comm_sizes)
    msg_sizes = parse_msg_sizes(args.msg_sizes)
    platform = par.platform
    if args.ranks_per_node:
        platform.ppn = args.ranks_per_node
    rows = []
    start = time.monotonic()
    for P in comm_sizes:
        for (alg, seg), times in predict_times(par, P, msg_sizes, args.model, platform).items():
            for m, t in zip(msg_sizes, times):
                rows.append({"collective": "bcast", "comm_size": P, "msg_size": m,
                             "algorithm": alg, "segsize": seg, "faninout": 0,
                             "time_us": float(f"{max(t, 1e-9):.6g}")})
    rows.sort(key=lambda r: (r["comm_size"], r["msg_size"], r["algorithm"], r["segsize"]))
    meta = {"source": f"collsel model predict ({'tau-Lop' if args.model == 'tlop' else 'Hockney'}"
                      " analytical model; predicted, not measured)",
            "collsel_version": __version__, "collective": "bcast", "predicted": "yes",
            "model": args.model, "params": par.name,
            "params_file": (f"generator/collsel/sources/models/presets/{Path(par.path).name} (preset)" if args.preset
                            else par.path),
            "params_source": par.doc.get("source", ""),
            "ranks_per_node": platform.ppn or "all (one node)",
            "chain_fanout": platform.chain_fanout, "knomial_radix": platform.knomial_radix,
            "statistic": "time_us = model prediction (µs)",
            "comm_sizes": args.comm_sizes, "msg_sizes": args.msg_sizes}
    write_file(args.out, render_table(rows, meta))
    print(f"collsel model predict: {len(rows)} rows ({len(comm_sizes)} P x {len(msg_sizes)} "
          f"sizes x {len(rows) // max(1, len(comm_sizes) * len(msg_sizes))} methods) -> "
          f"{args.out} ({time.monotonic() - start:.1f} s)", file=sys.stderr)


def run_fit(args):
    comm_sizes = driver.parse_comm_sizes(args.comm_sizes)
    msg_sizes = parse_msg_sizes(args.msg_sizes)
    meta = {"source": "collsel model fit", "collsel_version": __version__}
    if args.experiments and __import__("os").path.exists(args.experiments):
        rows = experiments.load(args.experiments)
        print(f"collsel model fit: {len(rows)} measurements from {args.experiments}",
              file=sys.stderr)
    else:
        if args.launches < 1:
            raise InputError(f"--launches {args.launches}: must be at least 1")
        runner = experiments.Runner(mpirun=args.mpirun, bench_path=args.bench,
                                    time_cap=args.time_cap)
        launches = experiments.plan(comm_sizes, msg_sizes, launches=args.launches)
        meta.update({"command": "collsel " + " ".join(sys.argv[1:]), **driver.machine_metadata(),
                     "date": driver.now_iso(), "loadavg_start": driver.loadavg()})
        start = time.monotonic()
        rows = experiments.run_all(runner, launches, args.progress_interval)
        meta.update({"comm_sizes": args.comm_sizes, "msg_sizes": args.msg_sizes,
                     "launches_per_point": args.launches,
                     "launches": runner.launches, "wall_s": f"{time.monotonic() - start:.1f}",
                     "mapping": "; ".join(f"P={P}: {runner.launcher.mapping(P)}"
                                         for P in comm_sizes)})
        if args.experiments:
            write_file(args.experiments, experiments.save(rows, meta))
    meta["comm_sizes"] = ",".join(map(str, sorted({r["comm_size"] for r in rows
                                                    if r["experiment"] == "bcast-gather"})))
    doc = fit.fit(experiments.mean_over_launches(rows))
    n_nbft = sum(r["experiment"] == "nbft" for r in rows)
    out = {"format": params.FORMAT, "version": params.VERSION, "name": "fitted",
           "source": "collsel model fit: experiments of Nuriyev et al. 2022 section 5 on this "
                     "machine (NBFT for gamma0, bcast + flat gather per method, Huber fit)",
           **doc,
           "fit": {"measurements": len(rows), "nbft_measurements": n_nbft,
                   "bcast_gather_measurements": len(rows) - n_nbft,
                   "experiments_file": args.experiments or "", **{
                       k: v for k, v in meta.items() if k not in ("source",)}}}
    write_file(args.out, params.dumps(out))
    print(f"collsel model fit: {len(doc['methods'])} methods from {len(rows)} measurements "
          f"-> {args.out}", file=sys.stderr)


def model_choices(par, cells, model):
    """{(P, m): the method with the smallest predicted time} over the measured cells."""
    choice = {}
    msg_sizes = sorted({m for _, m in cells})
    for P in sorted({P for P, _ in cells}):
        pred = predict_times(par, P, msg_sizes, model)
        for i, m in enumerate(msg_sizes):
            choice[(P, m)] = min(pred, key=lambda k: (pred[k][i], k))
    return choice


def run_validate(args):
    par = params.load(args.params)
    cells, n_sweep = validation.measured_cells(args.measured)
    choices = {"model_tlop": model_choices(par, cells, "tlop")}
    if par.hockney:
        choices["model_hockney"] = model_choices(par, cells, "hockney")
    choices["open_mpi_default"] = {cell: (0, 0) for cell in cells}
    fit_P = {int(p) for p in str(par.doc.get("fit", {}).get("comm_sizes", "")).split(",") if p}
    held = {k: v for k, v in cells.items() if k[0] not in fit_P}
    result = {"measured": args.measured, "params": args.params}
    for name, subset in (("all", cells), ("held_out_P", held)):
        result[name] = {n: validation.score(subset, c) for n, c in choices.items()}
    journal = args.journal or validation.default_journal(args.measured)
    if journal:
        result["reproducibility"] = validation.reproducibility(journal, choices)
    n_fit = par.doc.get("fit", {}).get("measurements")
    result["measurements"] = {"fit": n_fit, "sweep": n_sweep,
                              "fit_fraction_pct": round(100.0 * n_fit / n_sweep, 1)
                              if n_fit else None, "fit_P": sorted(fit_P)}
    text = json.dumps(result, indent=1)
    print(text)
    if args.json:
        write_file(args.json, text + "\n")


def paper_comparison():
    """Rows (preset, P, m KiB, ours, paper) for the paper's Table 3 cases."""
    rows = []
    for (name, P), paper in PAPER_TABLE3.items():
        par = params.load(params.preset_path(name))
        pred = predict_times(par, P, PAPER_SIZES)
        for i, m in enumerate(PAPER_SIZES):
            alg, _ = min(pred, key=lambda k: (pred[k][i], k))
            rows.append((name, P, m // 1024, PAPER_NAMES[alg], paper[i]))
    return rows


def run_paper(args):
    rows = paper_comparison()
    agree = sum(r[3] == r[4] for r in rows)
    print("| cluster | P | m (KiB) | collsel model | paper model-based |")
    print("|---|---|---|---|---|")
    for name, P, kb, ours, paper in rows:
        mark = "" if ours == paper else " ✗"
        print(f"| {name} | {P} | {kb} | {ours}{mark} | {paper} |")
    print(f"\nagreement: {agree} / {len(rows)}")
