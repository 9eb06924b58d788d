"""`make apps-tune-cost` (issue 41): does a profile-driven tune reach a full tune's decisions,
on the cells the application uses, at a fraction of its cost?

On the emulated cluster (as `make apps-bench`: 4 nodes x 2 ranks, speed/apps/bench.py's Place):
  1. `collsel tune --profile PROFILE --budget B1`: the profiled region only (the collectives that
     hold the program's time in collectives, at its own P and m);
  2. `collsel tune --collectives <the same> --budget B2`: the full tune of those collectives on
     the default grid (no profile);
  3. at every profiled point of those collectives, both trees are asked (`collsel query --ids`)
     and their choices compared on the profiled tune's own measurements at that very point (its
     table has every method there): the same method; a different one inside the point's tie set
     (the paired sweep's `tied` verdict against the point's fastest method); or a different one
     outside it, with what it costs there. Weighted by the point's time in the profiled run.
The cost of each tune is its command's wall time (measuring, then trees, rules and reports).
Everything, with the machine, the command and the load, goes to --out; nothing is asserted.
"""
import argparse
import os
import shlex
import shutil
import subprocess
import sys
import time

import numpy as np

from collsel.core.io import jsonfile, profile as profiles
from collsel.core.maps.table import read_table

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench  # noqa: E402  (speed/apps/bench.py: the cluster, run(), the load)

COLLSEL = bench.COLLSEL


def tune(place, out, extra, timeout):
    """(wall seconds, summary text) of one `collsel tune` on the place."""
    argv = [COLLSEL, "tune", "--out", out, *extra, *place.tune_flags()]
    print(f"profile-vs-full: {shlex.join(['collsel', *argv[1:]])}", file=sys.stderr, flush=True)
    return bench.run(argv, timeout, place.env, quiet=True)


def choices(tree_json, points):
    """The tree's (algorithm, segsize, faninout) at each (P, m, ppn) point."""
    n_axes = len(jsonfile.read(tree_json)["axes"])
    lines = "".join(f"{p} {m}" + (f" {ppn}" if n_axes == 3 else "") + "\n"
                    for p, m, ppn in points)
    done = subprocess.run([COLLSEL, "query", tree_json, "--points", "-", "--ids"], input=lines,
                          capture_output=True, text=True, check=True)
    return [tuple(int(v) for v in line.split()) for line in done.stdout.splitlines()]


def measured(table, p, m):
    """{(algorithm, segsize, faninout): (time_us, tied)} of the table at cell (p, m)."""
    at = (table.comm_size == p) & (table.msg_size == np.uint64(m))
    tied = table.extra.get("tied", np.full(len(table.time_us), ""))
    return {(int(a), int(s), int(f)): (float(t), str(k).strip() == "1")
            for a, s, f, t, k in zip(table.algorithm[at], table.segsize[at],
                                     table.faninout[at], table.time_us[at], tied[at])}


def compare(collective, profiled_dir, full_dir, entries, ranks, say):
    """Per point of `collective`: the two trees' choices and their verdict. Returns (seconds in
    the point, verdict, extra penalty of the full tree's choice in %) per point."""
    points = [(e["comm_size"], e["m"], e["ppn"]) for e in entries]
    mine = choices(os.path.join(profiled_dir, collective, "tree", "tree.json"), points)
    full = choices(os.path.join(full_dir, collective, "tree", "tree.json"), points)
    table = read_table(os.path.join(profiled_dir, collective, "table.csv"))
    rows = []
    for entry, (p, m, _), a, b in zip(entries, points, mine, full):
        cell = measured(table, p, m)
        if a == b:
            verdict, extra = "same", 0.0
        elif a not in cell or b not in cell:
            verdict, extra = "unmeasured", float("nan")
        else:
            best = min(t for t, _ in cell.values())
            extra = 100 * (cell[b][0] - cell[a][0]) / best
            verdict = "tied" if cell[a][1] and cell[b][1] else "differs"
        rows.append((entry["time_s"], verdict, extra))
        say(f"  {collective:<10} P={p} m={m:<8} {entry['time_s'] / ranks * 1e3:8.2f} ms/rank  "
            f"profiled {' '.join(map(str, a)):<10} full {' '.join(map(str, b)):<10} {verdict}"
            + (f" ({extra:+.1f} % of the point's best)" if verdict in ("tied", "differs")
               else ""))
    return rows


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--profile", default=os.path.join(bench.ROOT, "bench-data", "apps",
                                                          "lammps", "profile-default.json"))
    parser.add_argument("--profiled-budget", default="2m")
    parser.add_argument("--full-budget", default="20m",
                        help="the full tune's (tune's own default is 30m)")
    parser.add_argument("--out", default=os.path.join(bench.ROOT, "bench-data", "apps",
                                                      "tune-cost"))
    parser.add_argument("--timeout", type=int, default=3600, help="seconds per tune")
    args = parser.parse_args(argv)
    args.out, args.profile = os.path.abspath(args.out), os.path.abspath(args.profile)
    doc = profiles.read(args.profile)
    work = os.path.join(bench.ROOT, "build", "apps", "tune-cost")
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    os.makedirs(args.out, exist_ok=True)
    before_load, before = bench.load_average(), bench.uptime()
    started = time.strftime("%Y-%m-%d %H:%M:%S %Z")
    report = []
    say = report.append
    place = bench.Place(False, os.path.join(bench.ROOT, "build", "apps", "cluster"))
    where = place.describe()            # before close(), which forgets the cluster
    try:
        if not place.cluster:
            print(f"profile-vs-full: error: the emulated cluster did not come up ({place.why})",
                  file=sys.stderr)
            return 1
        profiled, full = os.path.join(work, "profiled"), os.path.join(work, "full")
        cost_p, summary_p = tune(place, profiled, ["--profile", args.profile, "--budget",
                                                   args.profiled_budget], args.timeout)
        plan = jsonfile.read(os.path.join(profiled, "tune.json"))
        collectives = plan["collectives"]
        cost_f, summary_f = tune(place, full, ["--collectives", ",".join(collectives),
                                               "--budget", args.full_budget], args.timeout)
        for name, summary in (("profiled", summary_p), ("full", summary_f)):
            with open(os.path.join(args.out, f"{name}-summary.txt"), "w") as f:
                f.write(summary)
            shutil.copy(os.path.join(work, name, "tune.json"),
                        os.path.join(args.out, f"{name}-tune.json"))
        say(f"profile: {args.profile} ({doc['command'][-6:]})")
        say(f"profiled tune: {cost_p:.0f} s wall (--budget {args.profiled_budget}); full tune of "
            f"{', '.join(collectives)}: {cost_f:.0f} s wall (--budget {args.full_budget}); "
            f"cost ratio {cost_p / cost_f:.3f}")
        say("at the profiled points (ids: algorithm segsize faninout; 0 0 0 defers to the MPI):")
        rows = []
        for c in collectives:
            entries = [e for e in doc["entries"] if e["collective"] == c]
            rows += compare(c, profiled, full, entries, doc["ranks"], say)
        total = sum(t for t, _, _ in rows)
        for verdict in ("same", "tied", "differs", "unmeasured"):
            share = sum(t for t, v, _ in rows if v == verdict)
            say(f"  {verdict:<10} {sum(v == verdict for _, v, _ in rows):3d} points, "
                f"{share / total:6.1%} of the time in these collectives")
        cost = sum(t * x for t, v, x in rows if v in ("tied", "differs")) / total
        say(f"  the full tree's choices cost {cost:+.2f} % of the best, time-weighted over the "
            f"points, against the profiled tree's (on the profiled tune's measurements: in "
            f"sample for the profiled tree)")
    finally:
        place.close()
    after = bench.uptime()
    state = "idle" if before_load <= bench.IDLE_LOAD else f"loaded ({before_load:.2f})"
    head = [f"profile-vs-full: {started}, {os.uname().nodename}, {os.cpu_count()} cores",
            f"command: {shlex.join(['speed/apps/profile_vs_full.py', *(argv or sys.argv[1:])])}",
            f"where: {where}", f"uptime before: {before}", f"uptime after:  {after}",
            f"machine: {state}"]
    text = "\n".join(head + report) + "\n"
    with open(os.path.join(args.out, "RESULTS.txt"), "w") as f:
        f.write(text)
    print(text, end="")
    return 0


if __name__ == "__main__":
    sys.exit(main())
