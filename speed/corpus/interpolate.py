"""`--interpolate` against the plain map on the corpus tables, by `collsel evaluate`.

For each table: `collsel evaluate` on the same folds (6 held-out values per protocol, as
`build --recommend` uses) of the exact tree, the depth-3 penalty tree and the recommendation,
each without and with --interpolate. Prints per table and protocol the mean held-out penalty of
each pair, then per configuration how many (table, protocol) pairs --interpolate makes better or
worse by more than half a point, and the means over the pairs.

  PATH=$PWD/.venv/bin:$PATH .venv/bin/python speed/corpus/interpolate.py build/corpus/*.csv
"""
import argparse
import json
import os
import subprocess
import tempfile

CONFIGS = {"exact": "", "depth 3": "--max-depth 3 --leaf penalty", "recommended": "--recommend"}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("tables", nargs="+")
    ap.add_argument("--json", help="write every figure here")
    args = ap.parse_args()
    flags = [f for c in CONFIGS.values() for f in (c, (c + " --interpolate").strip())]
    rows, everything = [], {}
    with tempfile.TemporaryDirectory() as work:
        for path in args.tables:
            out = os.path.join(work, "e.json")
            words = ["collsel", "evaluate", path, "--protocol", "P,m", "--max-folds", "6",
                     "--json", out, "--quiet"] + [f"--candidate={f}" for f in flags]
            done = subprocess.run(words, capture_output=True, text=True, timeout=3600)
            if done.returncode:
                raise SystemExit(f"{' '.join(words)} failed: {done.stderr.strip()[-500:]}")
            with open(out) as f:
                evaluated = json.load(f)
            everything[path] = evaluated
            for protocol, block in evaluated["protocols"].items():
                if block is None:
                    continue
                means = [c["mean"] for c in block["configs"]]
                pairs = dict(zip(CONFIGS, zip(means[::2], means[1::2])))
                rows.append(pairs)
                print(f"{os.path.basename(path):36} {protocol}  " + "  ".join(
                    f"{name} {a:8.2f} -> {b:8.2f}" for name, (a, b) in pairs.items()),
                    flush=True)
    for name in CONFIGS:
        got = [r[name] for r in rows if None not in r[name]]
        better = sum(b < a - 0.5 for a, b in got)
        worse = sum(b > a + 0.5 for a, b in got)
        mean = lambda xs: sum(xs) / len(xs)  # noqa: E731
        print(f"{name}: --interpolate better on {better}, worse on {worse} of {len(got)} "
              f"(table, protocol) pairs by more than 0.5 points; mean "
              f"{mean([a for a, _ in got]):.2f} -> {mean([b for _, b in got]):.2f} %")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(everything, f, indent=1, sort_keys=True)


if __name__ == "__main__":
    main()
