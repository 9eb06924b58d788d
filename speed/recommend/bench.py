"""make bench-recommend: wall time of `collsel build` (with its out-of-sample figures), of
`collsel build --recommend` and of `collsel report` on one table, as seconds and as ratios to one NumPy pass over the
same table (reading its numeric columns with numpy.loadtxt and one reduction), so machines of
different speed compare. The package's modules are compiled first, as pip installs them: with
PYTHONDONTWRITEBYTECODE set (as on the machine of this project) every run would otherwise
compile ~140 modules again (about 0.25 s of each figure)."""
import compileall
import os
import subprocess
import sys
import tempfile
import time

import numpy as np

import collsel

TABLE = sys.argv[1] if len(sys.argv) > 1 else "bench-data/paired/bcast-openmpi.csv"
COLLECTIVE = sys.argv[2] if len(sys.argv) > 2 else "bcast"


def wall(args):
    start = time.perf_counter()
    subprocess.run(args, check=True, capture_output=True)
    return time.perf_counter() - start


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
print(f"{TABLE}: one NumPy pass {one:.3f} s; collsel build {build:.2f} s ({build / one:.0f}x); "
      f"build --recommend {rec:.2f} s ({rec / one:.0f}x); collsel report {report:.2f} s "
      f"({report / one:.0f}x)")
