"""The Generalize issue's ragged check: a copy of a corpus table with some methods and the
default deleted at odd P (as real tables are ragged), then build --recommend's printed
out-of-sample figures beside `collsel evaluate --candidate=--recommend`'s direct ones on the
same folds.

Usage: ragged.py TABLE [--drop-algorithms 0,2,5] [--max-folds N] [--collsel 'CMD'] [--out DIR]
(--collsel: how to run collsel, e.g. an older checkout's `env PYTHONPATH=OLD/generator python
-m collsel.cli`, with --max-folds its own MAX_FOLDS, 8 before 2026-11-29's nesting.)
"""
import argparse
import csv
import json
import os
import shlex
import subprocess
import sys

KINDS = {"P": "leave_one_P_out", "m": "leave_one_m_out"}


def ragged_copy(source, target, drop):
    """`source` without the rows of algorithms `drop` at odd P (comments kept)."""
    with open(source, newline="") as f, open(target, "w", newline="") as out:
        lines = iter(f)
        for line in lines:
            if not line.startswith("#"):
                header = line
                break
            out.write(line)
        out.write(header)
        names = next(csv.reader([header]))
        writer = csv.writer(out, lineterminator="\n")
        kept = dropped = 0
        for row in csv.reader(lines):
            fields = dict(zip(names, row))
            if int(fields["comm_size"]) % 2 and int(fields["algorithm"]) in drop:
                dropped += 1
                continue
            writer.writerow(row)
            kept += 1
    return kept, dropped


def run(words):
    done = subprocess.run(words, capture_output=True, text=True, timeout=3600)
    if done.returncode:
        sys.exit(f"ragged: {shlex.join(words)} failed: {done.stderr.strip()[-400:]}")
    return done.stdout


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("table")
    ap.add_argument("--drop-algorithms", default="0,2,5")
    ap.add_argument("--max-folds", type=int, default=None,
                    help="default: the collsel package's own MAX_FOLDS")
    ap.add_argument("--collsel", default=f"{shlex.quote(sys.executable)} -m collsel.cli",
                    help="how to run collsel (default: this python's package)")
    ap.add_argument("--out", default="build/ragged")
    args = ap.parse_args()
    if args.max_folds is None:
        from collsel.core.evaluate.fold_maps import MAX_FOLDS
        args.max_folds = MAX_FOLDS
    os.makedirs(args.out, exist_ok=True)
    copy = os.path.join(args.out, os.path.basename(args.table))
    drop = {int(a) for a in args.drop_algorithms.split(",")}
    kept, dropped = ragged_copy(args.table, copy, drop)
    print(f"{copy}: {kept} rows ({dropped} of algorithms {sorted(drop)} at odd P deleted)")
    collsel = shlex.split(args.collsel)
    tree_dir = os.path.join(args.out, "tree")
    run(collsel + ["build", copy, "--recommend", "--out", tree_dir])
    with open(os.path.join(tree_dir, "stats.json")) as f:
        stats = json.load(f)
    evaluated = os.path.join(args.out, "evaluate.json")
    run(collsel + ["evaluate", copy, "--protocol", "P,m", "--max-folds", str(args.max_folds),
                   "--candidate=--recommend", "--json", evaluated, "--quiet"])
    with open(evaluated) as f:
        direct = json.load(f)["protocols"]
    for protocol, kind in KINDS.items():
        printed = ((stats["out_of_sample"].get(kind) or {}).get("tree") or {}).get("mean")
        block = direct.get(protocol)
        d = block["configs"][0]["mean"] if block else None
        show = lambda v: "n/a" if v is None else f"{v:.2f} %"  # noqa: E731
        print(f"{protocol}: build --recommend prints {show(printed)}, "
              f"collsel evaluate measures {show(d)} ({args.max_folds} folds at most)")


if __name__ == "__main__":
    main()
