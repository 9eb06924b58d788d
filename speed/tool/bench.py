"""make bench-tool: the whole-process wall time of the `collsel` commands people wait for, on one
table, beside the time of one NumPy pass over the same table (its numeric columns read with
numpy.loadtxt, the fastest method of each (P, m) cell found with one argmin per cell), as
ratios (machines of different speed compare) and in seconds against the targets of issue
"Lean".

Each figure is the median of ROUNDS runs; the commands run in turn within each round
(alternated), so a machine that other jobs slow down for a while slows every command alike.
Beside each wall time, the median CPU time (user + system) of the process: on a busy machine
the wall time measures the other jobs too, the CPU time much less.

The package's modules are compiled first, as pip installs them: with PYTHONDONTWRITEBYTECODE
set (as on this project's machine) every run would otherwise compile ~140 modules again.
The collsel that runs is the one this Python imports (PYTHONPATH=OTHER/generator times
another checkout, e.g. the code before a change).

usage: bench.py [TABLE [COLLECTIVE]]"""
import compileall
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

import collsel

TABLE = sys.argv[1] if len(sys.argv) > 1 else "bench-data/paired/bcast-openmpi.csv"
COLLECTIVE = sys.argv[2] if len(sys.argv) > 2 else "bcast"
ROUNDS = 5

# The console script beside this Python (a venv's), as a user runs it; else the module.
SCRIPT = os.path.join(os.path.dirname(sys.executable), "collsel")
COLLSEL = [SCRIPT] if os.access(SCRIPT, os.X_OK) else [sys.executable, "-m", "collsel.cli"]


def commands(out):
    """(name, argv, target seconds) of each timed command."""
    table = [TABLE, "--collective", COLLECTIVE]
    return [("collsel --version", ["--version"], 0.3),
            ("collsel --help", ["--help"], 0.3),
            ("collsel build", ["build", *table, "--out", f"{out}/b"], 1.0),
            ("build --recommend", ["build", *table, "--recommend", "--out", f"{out}/r"], 3.0),
            ("collsel report", ["report", *table, "--quiet", "--out", f"{out}/p"], 3.0)]


def cpu_of_children():
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


def run(argv):
    """(wall seconds, CPU seconds) of one run of `collsel ARGV`."""
    start, cpu = time.perf_counter(), cpu_of_children()
    subprocess.run(COLLSEL + argv, check=True, capture_output=True)
    return time.perf_counter() - start, cpu_of_children() - cpu


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
    compileall.compile_dir(os.path.dirname(collsel.__file__), quiet=1)
    with tempfile.TemporaryDirectory() as out:
        timed = commands(out)
        walls = {name: [] for name, _, _ in timed}
        cpus = {name: [] for name, _, _ in timed}
        passes = []
        for _ in range(ROUNDS):
            passes.append(numpy_pass())
            for name, argv, _ in timed:
                w, c = run(argv)
                walls[name].append(w)
                cpus[name].append(c)
    one = statistics.median(passes)
    print(f"{TABLE} ({COLLECTIVE}), collsel from {os.path.dirname(collsel.__file__)}: "
          f"medians of {ROUNDS} alternated runs; one NumPy pass {one:.3f} s")
    print(f"{'command':<20} {'seconds':>8} {'x NumPy':>8} {'CPU s':>7} {'target':>7}  met")
    for name, _, target in timed:
        w, c = statistics.median(walls[name]), statistics.median(cpus[name])
        print(f"{name:<20} {w:8.2f} {w / one:8.0f} {c:7.2f} {target:6.1f}s  "
              f"{'yes' if w <= target else 'no'}")


if __name__ == "__main__":
    main()
