"""make bench-tool: the whole-process wall time of the `collsel` commands people wait for, on one
table, beside the time of one NumPy pass over the same table (its numeric columns read with
numpy.loadtxt, the fastest method of each (P, m) cell found with one argmin per cell), as
ratios (machines of different speed compare) and in seconds against the targets of issue
"Lean".

Each figure is the median of ROUNDS runs; the commands run in turn within each round
(alternated), so a machine that other jobs slow down for a while slows every command alike.
Beside each wall time, the median CPU time (user + system) of the process: on a busy machine
the wall time measures the other jobs too, the CPU time much less.

The package's modules are compiled first, as pip installs them. With --uncompiled they are not:
each run compiles every collsel module it imports, as this project's editable install does under
PYTHONDONTWRITEBYTECODE=1 (the issue's figures were measured so: `collsel --version` 0.86 s).
The collsel that runs is the one this Python imports. With --before DIR (another checkout's
generator/ directory, e.g. `git worktree add /tmp/before main`), each command also runs from
DIR, alternated with this one's within each round, and both columns are printed side by side
with their ratio: the machine's drift then affects both alike. (An editable install finds
collsel.templates in its own checkout whichever generator/ runs; give a DIR whose collsel/
holds templates/ to time another checkout's templates too.)

usage: bench.py [--before DIR] [--uncompiled] [--only WORD] [--rounds N] [TABLE [COLLECTIVE]]"""
import argparse
import compileall
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

import collsel

ROUNDS = 5
TABLE, COLLECTIVE = "bench-data/paired/bcast-openmpi.csv", "bcast"

# The console script beside this Python (a venv's), as a user runs it; else the module.
SCRIPT = os.path.join(os.path.dirname(sys.executable), "collsel")
COLLSEL = [SCRIPT] if os.access(SCRIPT, os.X_OK) else [sys.executable, "-m", "collsel.cli"]
FRESH = "{fresh}"       # in a command's argv: a new empty directory for each run


def commands(out):
    """(name, argv, target seconds or None) of each timed command. `collsel evaluate` with the
    recommendation as its candidate has no target of its own; it is what the corpus scoreboard
    and a replay's curve run per table."""
    table = [TABLE, "--collective", COLLECTIVE]
    return [("collsel --version", ["--version"], 0.3),
            ("collsel --help", ["--help"], 0.3),
            ("collsel build", ["build", *table, "--out", f"{out}/b"], 1.0),
            ("build --recommend", ["build", *table, "--recommend", "--out", f"{out}/r"],
             3.0),
            ("collsel report", ["report", *table, "--quiet", "--out", f"{out}/p"], 3.0),
            ("evaluate --recommend", ["evaluate", *table, "--protocol", "P,m",
                                      "--candidate=--recommend", "--quiet",
                                      "--json", f"{out}/e.json"], None),
            # issue 40's target (a tune's --out must hold no tune: FRESH)
            ("tune --replay", ["tune", "--replay", TABLE, "--budget", "10%", "--out", FRESH],
             5.0)]


def cpu_of_children():
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


def run(argv, generator):
    """(wall seconds, CPU seconds) of one run of `collsel ARGV` with the package in
    `generator` (FRESH in ARGV: a new empty directory, removed afterwards)."""
    env = dict(os.environ, PYTHONPATH=generator, PYTHONDONTWRITEBYTECODE="1")
    fresh = tempfile.mkdtemp(prefix="collsel-bench-") if FRESH in argv else None
    argv = [fresh if a == FRESH else a for a in argv]
    try:
        start, cpu = time.perf_counter(), cpu_of_children()
        subprocess.run(COLLSEL + argv, check=True, capture_output=True, env=env)
        return time.perf_counter() - start, cpu_of_children() - cpu
    finally:
        if fresh is not None:
            shutil.rmtree(fresh, ignore_errors=True)


def numpy_pass():
    """Seconds of one NumPy pass: the numeric columns loaded, one argmin of time_us per cell."""
    start = time.perf_counter()
    with open(TABLE) as f:
        rows = [line for line in f if not line.startswith("#")][1:]      # the header
    p, m, t = np.loadtxt(rows, delimiter=",", usecols=(1, 2, 6), unpack=True)
    order = np.lexsort((t, m, p))      # by cell (P, m), the fastest row of each cell first
    cell = np.stack([p[order], m[order]])
    first = np.r_[True, np.any(cell[:, 1:] != cell[:, :-1], axis=0)]
    order[first]                       # each cell's argmin: the row of its fastest method
    return time.perf_counter() - start


def main():
    global TABLE, COLLECTIVE
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--before", metavar="DIR", help="another checkout's generator/")
    parser.add_argument("--only", metavar="WORD", help="only the commands whose name has WORD")
    parser.add_argument("--rounds", type=int, default=ROUNDS)
    parser.add_argument("--uncompiled", action="store_true",
                        help="run copies of the packages without their bytecode")
    parser.add_argument("table", nargs="?", default=TABLE)
    parser.add_argument("collective", nargs="?", default=COLLECTIVE)
    args = parser.parse_args()
    TABLE, COLLECTIVE = args.table, args.collective
    this = os.path.dirname(os.path.dirname(os.path.abspath(collsel.__file__)))
    trees = {"this": this}
    if args.before:
        trees = {"before": os.path.abspath(args.before), "this": this}
    given = dict(trees)
    with tempfile.TemporaryDirectory() as out:
        for t, generator in trees.items():
            if args.uncompiled:     # a copy without __pycache__; the runs write none
                trees[t] = os.path.join(out, "src", t)
                shutil.copytree(os.path.join(generator, "collsel"),
                                os.path.join(trees[t], "collsel"),
                                ignore=shutil.ignore_patterns("__pycache__"),
                                ignore_dangling_symlinks=True)
            else:
                compileall.compile_dir(os.path.join(generator, "collsel"), quiet=1)
        timed = [c for c in commands(out) if args.only is None or args.only in c[0]]
        walls = {(name, t): [] for name, _, _ in timed for t in trees}
        cpus = {(name, t): [] for name, _, _ in timed for t in trees}
        passes = []
        for r in range(args.rounds):
            passes.append(numpy_pass())
            for name, argv, _ in timed:
                # alternated, and in turn first, so neither side always runs second
                for t in (list(trees) if r % 2 == 0 else list(trees)[::-1]):
                    w, c = run(argv, trees[t])
                    walls[name, t].append(w)
                    cpus[name, t].append(c)
    one = statistics.median(passes)
    print(f"{TABLE} ({COLLECTIVE}): medians of {args.rounds} alternated runs; one NumPy pass "
          f"{one:.3f} s; " + ("modules not compiled; " if args.uncompiled else "")
          + "; ".join(f"{t}: {g}" for t, g in given.items()))
    head = "".join(f" {t + ' s':>9} {'x NumPy':>8} {'CPU s':>6}" for t in trees)
    print(f"{'command':<18}{head} {'target':>7}  met" + ("   this/before" if args.before
                                                           else ""))
    for name, _, target in timed:
        w = {t: statistics.median(walls[name, t]) for t in trees}
        c = {t: statistics.median(cpus[name, t]) for t in trees}
        cols = "".join(f" {w[t]:9.2f} {w[t] / one:8.0f} {c[t]:6.2f}" for t in trees)
        ratio = f"   {w['this'] / w['before']:.2f}" if args.before else ""
        met = ("   - s    -" if target is None else
               f" {target:6.1f}s  {'yes' if w['this'] <= target else 'no':>3}")
        print(f"{name:<18}{cols}{met}{ratio}")


if __name__ == "__main__":
    main()
