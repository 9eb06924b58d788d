"""make bench-recommend: wall time of `collsel build` (with its out-of-sample figures), of
`collsel build --recommend` and of `collsel report` on one table, as seconds and as ratios to one NumPy pass over the
same table (reading its numeric columns with numpy.loadtxt and one reduction), so machines of
different speed compare. The package's modules are compiled first, as pip installs them: with
PYTHONDONTWRITEBYTECODE set (as on the machine of this project) every run would otherwise
compile ~140 modules again (about 0.25 s of each figure). Beside each wall time, the CPU time
(user + system) the command used: on a machine other jobs keep busy the wall time measures
them too, the CPU time much less."""
import compileall
import os
import resource
import subprocess
import sys
import tempfile
import time

import numpy as np

import collsel

TABLE = sys.argv[1] if len(sys.argv) > 1 else "bench-data/paired/bcast-openmpi.csv"
COLLECTIVE = sys.argv[2] if len(sys.argv) > 2 else "bcast"


def cpu_of_children():
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


def wall(args):
    """(wall seconds, CPU seconds) of one run of a command."""
    start, cpu = time.perf_counter(), cpu_of_children()
    subprocess.run(args, check=True, capture_output=True)
    return time.perf_counter() - start, cpu_of_children() - cpu


def numpy_pass():
    start = time.perf_counter()
    with open(TABLE) as f:
        rows = [line for line in f if not line.startswith("#")][1:]      # the header
    data = np.loadtxt(rows, delimiter=",", usecols=(1, 2, 3, 4, 6))
    data.min(axis=0)
    return time.perf_counter() - start


compileall.compile_dir(os.path.dirname(collsel.__file__), quiet=1)
with tempfile.TemporaryDirectory() as out:
    base = [sys.executable, "-m", "collsel.cli", "build", TABLE, "--collective", COLLECTIVE]
    one = min(numpy_pass() for _ in range(3))
    build = wall(base + ["--out", f"{out}/b"])
    rec = wall(base + ["--recommend", "--out", f"{out}/r"])
    report = wall([sys.executable, "-m", "collsel.cli", "report", TABLE, "--collective",
                   COLLECTIVE, "--quiet", "--out", f"{out}/p"])


def figure(name, run):
    return f"{name} {run[0]:.2f} s ({run[0] / one:.0f}x; CPU {run[1]:.2f} s)"


print(f"{TABLE}: one NumPy pass {one:.3f} s; " + "; ".join(
    figure(*x) for x in (("collsel build", build), ("build --recommend", rec),
                         ("collsel report", report))))
