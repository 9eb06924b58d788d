"""ompi-collectives-tuning `detail.out`: one row per (ranks, message size), one column per
algorithm, each cell `mean(stddev)` in µs over the script's repeated OSU runs.

    #Nnodes    Message_size basic_linear         binomial             tuned
    2          1            64.33(0.94)          107.24(0.83)         107.78(0.61)

Despite its name, the first column is the number of ranks (the script's `number_of_ranks`).
The collective is not printed. `best.out` only repeats the winners and is not read.

Statistic: the script runs each test `number_of_runs_per_test` times, each a separate mpirun,
and averages OSU's Avg latency (the mean over ranks of each rank's mean time per call) over those
runs: ranks:mean reps:mean launches:mean. (A cell without `(stddev)`, which the script prints
for a single run, is not read.)
"""
import re

from collsel.core.io.statistic import kind
from collsel.errors import located
from collsel.sources.ingest.common import Parsed, Point, parse_float, parse_int, parse_time

_CELL = re.compile(r"([^()]+)\(([^()]+)\)$")


def parse(path, lines, opts):
    header, points = None, []
    for lineno, text in enumerate(lines, 1):
        fields = text.split()
        if not fields:
            continue
        if fields[0] == "#Nnodes":
            if "Best_Algorithm" in fields:
                raise located(path, lineno, "this is best.out (winners only); ingest the "
                              "detail.out beside it")
            if fields[1:2] != ["Message_size"] or len(fields) < 3:
                raise located(path, lineno, "expected '#Nnodes Message_size ALGORITHM...'")
            header = fields
            continue
        if header is None:
            raise located(path, lineno, "data before the '#Nnodes Message_size' header")
        if len(fields) != len(header):
            raise located(path, lineno, f"{len(fields)} fields, the header has {len(header)}: "
                          "truncated line?")
        procs = parse_int(fields[0], path, lineno, "Nnodes (ranks)", 1, 2**31 - 1)
        size = parse_int(fields[1], path, lineno, "Message_size")
        for name, cell in zip(header[2:], fields[2:]):
            m = _CELL.match(cell)
            if not m:
                raise located(path, lineno, f"cell '{cell}' for {name} is not mean(stddev)")
            mean = parse_time(m.group(1), path, lineno, f"{name} mean")
            stdev = parse_float(m.group(2), path, lineno, f"{name} stddev")
            if stdev < 0:
                raise located(path, lineno, f"negative stddev for {name}")
            points.append(Point(lineno, size, mean, {"mean_us": mean, "stdev_us": stdev},
                                comm_size=procs, algorithm=name))
    if header is None or not points:
        raise located(path, len(lines), "no '#Nnodes Message_size' table with data")
    return Parsed("coltune", points, kind("mean", "mean", "mean"),
                  "ompi-collectives-tuning detail.out: mean over runs (separate launches) of "
                  "OSU Avg latency (mean over ranks)")
