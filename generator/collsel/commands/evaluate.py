"""`collsel evaluate`: direct held-out evaluation of build configurations on a table
(core.evaluate.held_out: the protocol collsel is judged by)."""
import argparse
import contextlib
import csv
import io
import json
import shlex
import sys

from collsel.core.evaluate import build_config, held_out, model_selection
from collsel.core.io.files import write_file
from collsel.errors import InputError, printable
from collsel.commands.options import (add_interpolate_option, add_table_options,
                                      add_tree_options, build_options, load_launches,
                                      map_settings, read_tables, select_collective)
from collsel.commands import add_command

DEFAULT_CANDIDATES = ("--recommend", "", "--max-depth 2 --leaf penalty",
                      "--max-depth 3 --leaf penalty", "--max-depth 4 --leaf penalty")


def register(sub):
    p = add_command(
        sub, "evaluate",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description="For each protocol, hold out one value at a time, build each candidate "
        "configuration on the rest exactly as `collsel build` does, ask the tree at the "
        "held-out cells as `collsel query` does, and score each answer against the fastest "
        "forced method measured there (a defer at the MPI default's measured time), on the "
        "cells where the default was measured when the table has one. A method the tree names "
        "that was not measured there is counted as unscorable. Beside every candidate: the "
        "default and the best fixed method chosen on each fold's training rows.",
        epilog="example:\n  collsel evaluate bcast.csv --candidate '--recommend' "
        "--candidate '--max-depth 3 --leaf penalty' --candidate '' --json eval.json\n"
        "  ('' is the exact tree; candidates default to: "
        + ", ".join(repr(c) for c in DEFAULT_CANDIDATES) + ")")
    add_table_options(p)
    add_interpolate_option(p)
    p.add_argument("--candidate", action="append", metavar="FLAGS",
                   help="`collsel build` flags of one configuration (quoted; repeatable)")
    p.add_argument("--protocol", default="P,m", metavar="LIST",
                   help="comma-separated among P (interior leave-one-P-out), m (interior "
                        "leave-one-m-out), edge (the largest P held out), launches (each "
                        "launch of the sweep's journal held out, the tree built on the mean "
                        "of the others: needs --launches or TABLE.launches); default P,m")
    p.add_argument("--launches", metavar="JOURNAL",
                   help="the sweep's per-launch journal for --protocol launches (default: "
                        "TABLE.launches beside a single TABLE)")
    p.add_argument("--max-folds", type=int, metavar="N",
                   help="hold out at most N values per protocol, evenly spaced (always the "
                        "first and last interior value with scorable cells); default: all")
    p.add_argument("--json", metavar="FILE", help="write the figures as JSON")
    p.add_argument("--csv", metavar="FILE", help="write one row per protocol and chooser")
    p.add_argument("--quiet", action="store_true", help="no progress on stderr")
    p.set_defaults(run=run_evaluate)


def _candidate_parser():
    p = argparse.ArgumentParser(prog="--candidate", add_help=False, exit_on_error=False)
    add_tree_options(p)
    p.add_argument("--recommend", action="store_true")
    p.add_argument("--criterion", choices=model_selection.CRITERIA, default="combined")
    p.add_argument("--beyond", choices=("defer", "keep"))
    p.add_argument("--z")
    p.add_argument("--tolerance", type=float)
    p.add_argument("--no-defer", dest="defer", action="store_false")
    add_interpolate_option(p)
    return p


def parse_candidate(text, table_args):
    """The build_config.Config of one --candidate's flags (map settings default to the
    command's own --z/--tolerance/--no-defer)."""
    parser = _candidate_parser()
    try:
        words = shlex.split(text)
        args, rest = parser.parse_known_args(words)
    except (argparse.ArgumentError, ValueError) as e:
        raise InputError(f"--candidate {printable(text)!r}: {e}") from None
    if rest:
        raise InputError(f"--candidate {printable(text)!r}: not a build flag: "
                         f"{printable(' '.join(rest))}")
    for name in ("z", "tolerance"):
        if getattr(args, name) is None:
            setattr(args, name, getattr(table_args, name))
    args.defer = args.defer and table_args.defer
    args.interpolate = args.interpolate or getattr(table_args, "interpolate", False)
    if args.recommend and (args.max_depth is not None or args.threshold is not None):
        raise InputError(f"--candidate {printable(text)!r}: --recommend chooses the tree's "
                         "size: give it without --max-depth and --threshold")
    return build_config.Config(text.strip() or "exact", build_options(args),
                               map_settings(args), args.recommend, args.criterion,
                               args.beyond)


def run_evaluate(args):
    protocols = [p.strip() for p in args.protocol.split(",") if p.strip()]
    bad = [p for p in protocols if p not in held_out.PROTOCOLS]
    if bad or not protocols:
        raise InputError(f"--protocol {printable(args.protocol)}: choose among "
                         f"{', '.join(held_out.PROTOCOLS)}")
    if args.max_folds is not None and args.max_folds < 1:
        raise InputError(f"--max-folds {args.max_folds}: give 1 or more")
    table = select_collective(args, read_tables(args.tables))
    configs = [parse_candidate(c, args) for c in (args.candidate or DEFAULT_CANDIDATES)]
    launch_runs = None
    if "launches" in protocols:
        journal, launch_runs = load_launches(args)
        if len(launch_runs) < 2:
            raise InputError("--protocol launches: needs the sweep's journal of 2+ launches "
                             + (f"({journal} has {len(launch_runs)} of {args.collective})"
                                if journal else "(TABLE.launches beside the table, or "
                                "--launches JOURNAL)"))

    tty = sys.stderr.isatty()

    def progress(done, total):
        if not args.quiet and (tty or done == total or done % 10 == 0):
            print(f"{chr(13) if tty else ''}collsel evaluate: fold {done}/{total}",
                  end="" if tty and done < total else "\n", file=sys.stderr, flush=True)

    if any(c.recommend for c in configs):
        # only here: a pool costs a plain evaluation time
        from collsel.core.evaluate import parallel
    with (parallel.pool() if any(c.recommend for c in configs)
          else contextlib.nullcontext()) as workers:
        result = held_out.evaluate(table, configs, protocols, args.max_folds, progress,
                                   workers, launch_runs)
    document = {"tables": list(args.tables), "collective": args.collective,
                "candidates": [c.label for c in configs], "protocols": result}
    print(text(document))
    outputs = {}
    if args.json:
        outputs[args.json] = json.dumps(document, indent=1, sort_keys=True) + "\n"
    if args.csv:
        outputs[args.csv] = csv_text(document)
    for path, body in outputs.items():
        write_file(path, body)
    return 0


def _rows(document):
    for protocol, block in document["protocols"].items():
        if block is None:
            continue
        named = list(zip(document["candidates"], block["configs"]))
        named += [("default", block["default"]), ("best fixed method", block["best_fixed"])]
        for name, s in named:
            yield protocol, block, name, s


def text(document):
    lines = [f"{document['collective']} on {', '.join(document['tables'])}: held-out mean "
             "penalty against the fastest forced method (negative: the default beats them)"]
    for protocol, block in document["protocols"].items():
        if block is None:
            lines.append(f"{held_out.LABELS[protocol]}: no fold (too few values with "
                         "scorable cells)")
    last = None
    for protocol, block, name, s in _rows(document):
        if protocol != last:
            lines.append(f"{block['label']}, {block['folds']} folds:")
            last = protocol
        figure = ("n/a" if s["mean"] is None else
                  f"{s['mean']:7.2f}% mean {s['median']:7.2f}% median {s['max']:8.2f}% max")
        lines.append(f"  {name[:40]:40} {figure}  {s['cells']} cells"
                     + (f", {s['unscorable']} unscorable" if s["unscorable"] else ""))
    return "\n".join(lines)


def csv_text(document):
    out = io.StringIO()
    w = csv.writer(out, lineterminator="\n")
    w.writerow(["protocol", "chooser", "mean", "median", "max", "cells", "unscorable", "folds"])
    for protocol, block, name, s in _rows(document):
        w.writerow([protocol, name] + ["" if s[k] is None else f"{s[k]:.6g}"
                                       for k in ("mean", "median", "max")]
                   + [s["cells"], s["unscorable"], block["folds"]])
    return out.getvalue()
