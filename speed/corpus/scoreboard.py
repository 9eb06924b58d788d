"""`make corpus-scoreboard`: every corpus table (build/corpus/*.csv, `make corpus`) scored by
`collsel evaluate`'s direct held-out protocols, and `build --recommend`'s own printed
out-of-sample figures beside the direct ones.

Per table and protocol (interior leave-one-P-out, interior leave-one-m-out, edge): the
recommended tree, the MPI's default (where measured), the best fixed method, the exact tree,
depth 2/3/4 penalty trees, and the best of them; then the count of tables meeting each target
of the Generalize issue:
- honest: the printed figure within max(1 point, 20 %) of the direct one;
- never worse than the obvious: the recommendation no worse than the default and within 0.5
  points of the best of {exact, depth 2/3/4 penalty, best fixed}; the mean regret;
- edge (tables with >= 6 P): the recommendation's beyond-range choice (its `beyond`) no worse
  than the better of keeping the edge decision and deferring (`--beyond keep|defer`), on the
  largest P held out; a table whose edge holds no scorable cell is not counted.

Usage: scoreboard.py [--max-folds N] [--out DIR] TABLE...   (writes DIR/scoreboard.{json,txt})
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

from collsel.core.evaluate.fold_maps import MAX_FOLDS
from collsel.core.maps import table as tables

CANDIDATES = ["--recommend", "", "--max-depth 2 --leaf penalty", "--max-depth 3 --leaf penalty",
              "--max-depth 4 --leaf penalty"]
NAMES = ["recommended", "exact", "depth 2", "depth 3", "depth 4"]
KIND = {"P": "leave_one_P_out", "m": "leave_one_m_out"}
BEYOND = ("keep", "defer")
EDGE_MIN_P = 6


def run(words):
    done = subprocess.run(words, capture_output=True, text=True, timeout=3600)
    if done.returncode:
        raise SystemExit(f"scoreboard: {' '.join(words)} failed: {done.stderr.strip()[-500:]}")
    return done


def score_table(path, max_folds, work):
    """The evaluate document of one table, and build --recommend's stats.json."""
    out = os.path.join(work, os.path.basename(path) + ".json")
    words = ["collsel", "evaluate", path, "--protocol", "P,m,edge", "--json", out, "--quiet"]
    words += ["--max-folds", str(max_folds)] if max_folds else []
    for c in CANDIDATES:
        words += [f"--candidate={c}"]
    run(words)
    with open(out) as f:
        evaluated = json.load(f)
    # the two beyond-range choices the recommendation chooses between, on the edge fold alone
    edge = os.path.join(work, os.path.basename(path) + ".edge.json")
    run(["collsel", "evaluate", path, "--protocol", "edge", "--json", edge, "--quiet"]
        + [f"--candidate=--recommend --beyond {b}" for b in BEYOND])
    with open(edge) as f:
        evaluated["beyond"] = json.load(f)["protocols"]["edge"]
    evaluated["comm_sizes"] = len(set(tables.read_tables([path]).comm_size.tolist()))
    built = os.path.join(work, os.path.basename(path) + ".tree")
    run(["collsel", "build", path, "--recommend", "--out", built])
    with open(os.path.join(built, "stats.json")) as f:
        stats = json.load(f)
    return evaluated, stats


def fmt(v):
    return "   n/a" if v is None else f"{v:6.2f}"


def judge(path, evaluated, stats):
    """Lines of the table's scoreboard and its verdicts per target."""
    lines, verdicts = [], {}
    for protocol, block in evaluated["protocols"].items():
        if block is None:
            lines.append(f"  {protocol:4} no fold")
            continue
        mean = {n: s["mean"] for n, s in zip(NAMES, block["configs"])}
        mean["default"], mean["best fixed"] = block["default"]["mean"], \
            block["best_fixed"]["mean"]
        rec = mean["recommended"]
        others = [mean[n] for n in ("exact", "depth 2", "depth 3", "depth 4", "best fixed")
                  if mean[n] is not None]
        best = min(others) if others else None
        regret = None if rec is None or best is None else rec - best
        line = (f"  {protocol:4} " + " ".join(f"{n} {fmt(mean[n])}" for n in
                                             ["recommended", "default", "best fixed", "exact",
                                              "depth 2", "depth 3", "depth 4"])
                + f" | best {fmt(best)} regret {fmt(regret)}")
        if protocol in KIND:
            printed = (((stats.get("out_of_sample") or {}).get(KIND[protocol]) or {})
                       .get("tree") or {}).get("mean")
            honest = (printed is not None and rec is not None
                      and abs(printed - rec) <= max(1.0, 0.2 * abs(rec)))
            line += f" | printed {fmt(printed)} direct {fmt(rec)}"
            verdicts[protocol] = {
                "regret": regret, "honest": honest,
                "not_worse_than_default": mean["default"] is None or rec is None
                or rec <= mean["default"] + 1e-9,
                "within_half_point": regret is not None and regret <= 0.5}
        else:
            verdicts[protocol] = {"regret": regret}
            line += edge_verdict(evaluated, rec, verdicts[protocol])
        lines.append(line)
    return lines, verdicts


def edge_verdict(evaluated, rec, verdict):
    """The edge line's ending: keep and defer beside the recommendation's own choice; sets
    verdict["edge_no_worse"] where the target counts the table (>= EDGE_MIN_P values of P, a
    scorable cell at the edge)."""
    block = evaluated.get("beyond")
    if block is None:
        return ""
    means = dict(zip(BEYOND, (c["mean"] for c in block["configs"])))
    known = [v for v in means.values() if v is not None]
    if rec is not None and known and evaluated["comm_sizes"] >= EDGE_MIN_P:
        verdict["edge_no_worse"] = rec <= min(known) + 1e-9
    return " | " + " ".join(f"{b} {fmt(v)}" for b, v in means.items())


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("tables", nargs="+")
    ap.add_argument("--max-folds", type=int, default=MAX_FOLDS,
                    help="held-out values per protocol (default: build --recommend's own, "
                         f"{MAX_FOLDS}, so its printed figures and the direct ones share folds)")
    ap.add_argument("--out", default="build/corpus-scoreboard")
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    started, report, everything = time.monotonic(), [], {}
    with tempfile.TemporaryDirectory() as work:
        for path in args.tables:
            t0 = time.monotonic()
            evaluated, stats = score_table(path, args.max_folds, work)
            lines, verdicts = judge(path, evaluated, stats)
            everything[path] = {"evaluate": evaluated, "verdicts": verdicts,
                                "printed": stats.get("out_of_sample"),
                                "seconds": time.monotonic() - t0}
            report += [f"{path} ({time.monotonic() - t0:.0f} s)"] + lines
            print("\n".join(report[-(len(lines) + 1):]), flush=True)
    counts = {}
    regrets = []
    for v in everything.values():
        for protocol in ("P", "m"):
            got = v["verdicts"].get(protocol)
            if not got:
                continue
            for target in ("honest", "not_worse_than_default", "within_half_point"):
                counts.setdefault(target, [0, 0])
                counts[target][0] += bool(got[target])
                counts[target][1] += 1
            if got["regret"] is not None:
                regrets.append(got["regret"])
        edge = v["verdicts"].get("edge", {})
        if "edge_no_worse" in edge:
            counts.setdefault("edge_no_worse", [0, 0])
            counts["edge_no_worse"][0] += edge["edge_no_worse"]
            counts["edge_no_worse"][1] += 1
    summary = [f"{t}: {a} of {n} " + ("tables" if t == "edge_no_worse" else
                                      "(table, protocol) pairs") for t, (a, n) in counts.items()]
    if regrets:
        summary.append(f"mean regret over the corpus: {sum(regrets) / len(regrets):.2f} points "
                       f"(target <= 0.2)")
    summary.append(f"took {time.monotonic() - started:.0f} s")
    print("\n".join(summary))
    with open(os.path.join(args.out, "scoreboard.json"), "w") as f:
        json.dump({"tables": everything, "summary": summary}, f, indent=1, sort_keys=True)
    with open(os.path.join(args.out, "scoreboard.txt"), "w") as f:
        f.write("\n".join(report + summary) + "\n")


if __name__ == "__main__":
    sys.exit(main())
