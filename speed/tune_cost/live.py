"""`make tune-cost-live` (issue 40, item 3): does a tune at a tenth of a full sweep's time
recommend what the full sweep does, judged on a fresh sweep made afterwards? (`make
tune-cost-budgets`: the same at 5, 10 and 20 %, on that run's sweeps.)

On this machine, one after the other, each step on the idle machine (the sweeps' own lock and
idle watch; the load is recorded before each step):
  1. reference: a full paired sweep (every method at every cell, 5 launches) of each collective
     on tune's default grid (`collsel tune --dry-run`'s P and m), its wall time measured;
  2. tune: `collsel tune --budget B` with B each share (--shares, default a tenth) of the
     reference sweeps' summed wall time, once per strategy (coarse-refine, adaptive);
  3. fresh: the same full sweeps again (another seed);
  4. score: on the fresh tables, `collsel compare --tree` of each tune's deployed tree and of the
     tree `collsel build --recommend` makes from the reference table (what tune would deploy
     with unlimited time), beside Open MPI's default and the reference's exact tree; each
     tune's tree on the reference tables too (another full sweep it did not see).
Tables, tune summaries and RESULTS.txt go to --out; a step whose output is there is skipped (so
an interrupted run continues). --tables DIR takes the reference and fresh sweeps of an earlier
run (its DIR/reference, DIR/fresh) instead of measuring them. Nothing is asserted: the figures
are what was measured.
"""
import argparse
import glob
import json
import os
import shlex
import shutil
import subprocess
import sys
import time

from collsel.core.io import csvfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
COLLSEL = os.path.join(os.path.dirname(sys.executable), "collsel")
COMM_SIZES = "2,3,4,6,8,12,16"
MSG_SIZES = ",".join(str(1 << k) for k in range(23))     # tune's default: 1 B .. 4 MiB
STRATEGIES = ("coarse-refine", "adaptive")
ISSUE_SHARE = 0.10      # its tunes keep the folder names tune-<strategy>; others add -<N>pct
IDLE_LOAD = 0.5
_waited = False


def load_average():
    return os.getloadavg()[0]


def wait_idle(say, limit_s=900):
    """Wait (at most limit_s) for the 1-minute load to fall below IDLE_LOAD; returns it. Only
    before a run's first step: after a step the load average is that step's own ranks decaying
    (a minute's time constant), and each sweep's own idle watch records any other busy process
    beside it (`# run.N.not_idle=` in its table)."""
    global _waited
    if _waited:
        time.sleep(15)                  # the last step's ranks gone
        return load_average()
    _waited = True
    deadline = time.monotonic() + limit_s
    while load_average() > IDLE_LOAD and time.monotonic() < deadline:
        time.sleep(10)
    load = load_average()
    if load > IDLE_LOAD:
        say(f"  (not idle: load {load:.2f} after waiting {limit_s} s)")
    return load


def run(argv, log, refusable=False):
    """Run argv, its output to `log`; its wall seconds. A failure stops the script, but for a
    refusal (exit 2: bad input, e.g. a budget too small) when `refusable`: None."""
    print(f"tune-cost-live: {shlex.join(['collsel', *argv[1:]])}", file=sys.stderr, flush=True)
    start = time.monotonic()
    with open(log, "w") as f:
        done = subprocess.run(argv, stdout=f, stderr=subprocess.STDOUT)
    if refusable and done.returncode == 2:
        return None
    if done.returncode != 0:
        sys.exit(f"tune-cost-live: {argv[1]} exited {done.returncode}; see {log}")
    return time.monotonic() - start


def sweeps(kind, out, collectives, seed, say):
    """Step 1 or 3: the full paired sweep of each collective into out/kind/<c>.csv (a table
    its sweep finished is kept); returns {collective: the sweep's wall seconds, as its table
    records them}."""
    folder = os.path.join(out, kind)
    os.makedirs(folder, exist_ok=True)
    walls = {}
    for c in collectives:
        table = os.path.join(folder, f"{c}.csv")
        if "run.1.wall_s" not in _metadata(table):
            wait_idle(say)
            run([COLLSEL, "sweep", "--collective", c, "--comm-sizes", COMM_SIZES,
                 "--msg-sizes", MSG_SIZES, "--seed", str(seed), "--force",
                 "--progress-interval", "120", "--out", table], os.path.join(folder, f"{c}.log"))
        meta = _metadata(table)
        walls[c] = float(meta["run.1.wall_s"])
        say(f"{kind} sweep of {c}: {walls[c]:.0f} s wall (load at its start "
            f"{meta['run.1.loadavg_start'].split()[0]}"
            + (f"; not idle: {meta['run.1.not_idle']}" if "run.1.not_idle" in meta else "")
            + ")")
    return walls


def _metadata(table):
    """The `# key=value` lines of a table ({} when there is none)."""
    return csvfile.read(table, "a sweep table").metadata if os.path.exists(table) else {}


def tune_name(strategy, share):
    """The folder of a tune under --out (its log and wall file are named after it)."""
    return f"tune-{strategy}" + ("" if share == ISSUE_SHARE else f"-{100 * share:g}pct")


def tune(out, collectives, budget_s, strategy, share, say):
    """Step 2: one tune within budget_s of measuring; returns its wall seconds (None: the
    budget was refused, too small for the strategy's coarsest grids)."""
    name = tune_name(strategy, share)
    folder = os.path.join(out, name)
    done = os.path.join(folder, "summary.txt")
    if not os.path.exists(done):
        shutil.rmtree(folder, ignore_errors=True)
        load = wait_idle(say)
        wall = run([COLLSEL, "tune", "--out", folder, "--collectives", ",".join(collectives),
                    "--budget", f"{budget_s:.0f}s", "--strategy", strategy],
                   os.path.join(out, f"{name}.log"), refusable=True)
        if wall is None:
            with open(os.path.join(out, f"{name}.log")) as f:
                say(f"tune --strategy {strategy} --budget {budget_s:.0f}s: refused: "
                    f"{f.read().strip()}")
            return None
        with open(os.path.join(out, f"{name}.wall"), "w") as f:
            f.write(f"{wall:.1f} {load:.2f}\n")
        for c in collectives:           # the report and the C sources are not kept
            shutil.rmtree(os.path.join(folder, c, "report"), ignore_errors=True)
            for source in glob.glob(os.path.join(folder, c, "tree", "*.[ch]")):
                os.remove(source)
    with open(os.path.join(out, f"{name}.wall")) as f:
        wall, load = (float(v) for v in f.read().split())
    say(f"tune --strategy {strategy} --budget {budget_s:.0f}s: {wall:.0f} s wall (measuring, "
        f"then trees, rules and reports; load before {load:.2f})")
    return wall


def scored(tree, fresh, collective):
    """compare --tree's JSON of `tree` on the fresh table ("tree", "default": their figures)."""
    done = subprocess.run([COLLSEL, "compare", "--tree", tree, fresh, "--collective", collective,
                           "--format", "json"], capture_output=True, text=True, check=True)
    return json.loads(done.stdout)


def figures(selection):
    if selection.get("mean") is None:
        return "no cell scored"
    return (f"{selection['mean']:6.2f} / {selection['median']:5.2f} / {selection['max']:6.1f} % "
            f"({selection['cells']} cells)")


def score(out, tables, collectives, shares, strategies, say):
    """Step 4: every tree on the fresh tables, each tune's on the reference tables too."""
    work = os.path.join(out, "trees")
    shutil.rmtree(work, ignore_errors=True)
    say("on the fresh sweep: penalty against its fastest forced method, mean / median / max")
    for c in collectives:
        reference, fresh = (os.path.join(tables, k, f"{c}.csv") for k in ("reference", "fresh"))
        built = {}
        for name, flags in (("reference, build --recommend", ["--recommend"]),
                            ("reference, exact tree", [])):
            tree_dir = os.path.join(work, c, name.split()[-1].strip("-"))
            subprocess.run([COLLSEL, "build", reference, "--collective", c, *flags, "--out",
                            tree_dir], capture_output=True, text=True, check=True)
            built[name] = os.path.join(tree_dir, "tree.json")
        tunes = {f"tune {strategy} ({100 * share:g} %)": os.path.join(
            out, tune_name(strategy, share), c, "tree", "tree.json")
            for share in shares for strategy in strategies}
        say(f"  {c}:")
        default = None
        for name, tree in {**built, **tunes}.items():
            if not os.path.exists(tree):
                say(f"    {name:<30} no tree (the tune was refused)")
                continue
            doc = scored(tree, fresh, c)
            default = default or doc.get("default")
            again = (f"; on the reference: {figures(scored(tree, reference, c)['tree'])}"
                     if name in tunes else "")
            say(f"    {name:<30} {figures(doc['tree'])}{again}")
        if default:
            say(f"    {'Open MPI default':<30} {figures(default)}")
    shutil.rmtree(work, ignore_errors=True)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", default=os.path.join(ROOT, "bench-data", "tune-cost", "live"))
    parser.add_argument("--collectives", default="bcast,allreduce,alltoall")
    parser.add_argument("--shares", default=str(ISSUE_SHARE),
                        help="the tunes' budgets as shares of the reference sweeps' wall time "
                             "(a comma list)")
    parser.add_argument("--strategies", default=",".join(STRATEGIES),
                        help="the tunes' --strategy values (a comma list; default both)")
    parser.add_argument("--tables", metavar="DIR",
                        help="the reference and fresh sweeps of an earlier run (default --out)")
    args = parser.parse_args(argv)
    out = os.path.abspath(args.out)
    tables = os.path.abspath(args.tables or out)
    shares = [float(x) for x in args.shares.split(",")]
    os.makedirs(out, exist_ok=True)
    collectives = args.collectives.split(",")
    strategies = args.strategies.split(",")
    if set(strategies) - set(STRATEGIES):
        parser.error(f"--strategies {args.strategies}: each one of {', '.join(STRATEGIES)}")
    lines = [f"tune-cost-live: {time.strftime('%Y-%m-%d %H:%M:%S %Z')}, "
             f"{os.uname().nodename}, {os.cpu_count()} cores",
             f"command: {shlex.join(['speed/tune_cost/live.py', *(argv or sys.argv[1:])])}",
             f"grid: P = {COMM_SIZES}; m = 1 B .. 4 MiB, powers of two (23); paired, 5 launches"]

    def say(line):
        lines.append(line)
        print(line, file=sys.stderr, flush=True)

    walls = sweeps("reference", tables, collectives, 1, say)
    total = sum(walls.values())
    for share in shares:
        budget = share * total
        say(f"reference: {total:.0f} s of sweeps; tune budget {100 * share:g} % of it: "
            f"{budget:.0f} s")
        for strategy in strategies:
            tune(out, collectives, budget, strategy, share, say)
    sweeps("fresh", tables, collectives, 2, say)
    score(out, tables, collectives, shares, strategies, say)
    with open(os.path.join(out, "RESULTS.txt"), "w") as f:
        f.write("\n".join(lines) + "\n")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
