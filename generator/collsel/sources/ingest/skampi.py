"""SKaMPI `.sko` output: `begin result "NAME"` ... `end result "NAME"` blocks.

The current code prefixes those lines with `# `; SKaMPI 5.0 (manual, doc/demo.sko) does not.
A data line is the enclosing loop variables (`nodes= 4 count= 256`), then
`bytes time_us stderr_us repetitions` and up to 16 per-rank columns:

    nodes= 4 count= 256 1024 508.0 3.0 8 20.7 345.1 265.9 508.0

time is the interquartile mean over repetitions of the slowest rank's time (µs unless the .ski
called set_unit, which the output does not show: --time-unit then says so).
"""
import re

from collsel.core.io.statistic import kind
from collsel.errors import located
from collsel.sources.ingest.common import (Parsed, Point, parse_float, parse_int, parse_time,
                                           unit_factor)

_BEGIN = re.compile(r'#?\s*begin result\s+"([^"]*)"')
_END = re.compile(r'#?\s*end result\s+"([^"]*)"')
# Measurement names of the shipped .ski files: "MPI_Bcast-length", "MPI_Reduce-procs-short".
_NAMED = re.compile(r"MPI_(Bcast|Reduce|Allreduce|Gather|Allgather)(?:-|$)", re.I)
_PROCS_VARS = ("procs", "nodes", "np", "nprocs", "num_procs")
MAX_NODE_TIMES = 16   # SKaMPI's default max_nr_node_times: beyond it columns are quantiles


def parse(path, lines, opts):
    if opts.statistic:
        raise located(path, None, "--statistic does not apply to SKaMPI output "
                      "(it prints one statistic: the interquartile mean of the slowest rank)")
    factor = unit_factor(opts.time_unit or "us", path, None)
    points, block, begin = [], None, None
    for lineno, text in enumerate(lines, 1):
        stripped = text.strip()
        start, end = _BEGIN.match(stripped), _END.match(stripped)
        if start:
            if block is not None:
                raise located(path, lineno, f"'begin result' inside result \"{block}\" "
                              f"begun at line {begin}: missing 'end result'")
            block, begin, rows = start.group(1), lineno, 0
        elif end:
            if block is None or end.group(1) != block:
                raise located(path, lineno, f"'end result \"{end.group(1)}\"' without a "
                              "matching 'begin result'")
            if not rows:
                raise located(path, lineno, f"result \"{block}\" has no data lines")
            block = None
        elif block is None or not stripped or stripped.startswith("#"):
            continue
        elif stripped == "...":
            continue   # elision mark in documentation excerpts (the manual), not data
        else:
            rows += 1
            points.append(_row(path, lineno, stripped, block, factor))
    if block is not None and not opts.partial:
        raise located(path, len(lines), f"result \"{block}\" begun at line {begin} has no "
                      "'end result' (truncated?); --partial reads the lines before the cut")
    if not points:
        raise located(path, len(lines), "no 'begin result' blocks with data: not SKaMPI output")
    unit = "µs" if factor == 1 else f"{opts.time_unit} converted to µs"
    return Parsed("skampi", points, kind("max", "mean", "one"), "SKaMPI result: interquartile "
                  f"mean over repetitions of the slowest rank's time ({unit}); reps:mean is the "
                  "vocabulary's nearest word for the interquartile mean")


def _row(path, lineno, text, block, factor):
    tokens = text.split()
    loops = {}
    while tokens and "=" in tokens[0]:
        name, _, value = tokens.pop(0).partition("=")
        if not value:
            if not tokens:
                raise located(path, lineno, f"loop variable '{name}=' has no value (truncated?)")
            value = tokens.pop(0)
        loops[name] = value
    if len(tokens) < 4:
        raise located(path, lineno, f"{len(tokens)} fields after the loop variables, expected "
                      "at least 4 (bytes, time, stderr, repetitions): truncated line?")
    size = parse_int(tokens[0], path, lineno, "message size in bytes")
    time = parse_time(tokens[1], path, lineno, "time", factor)
    if parse_float(tokens[2], path, lineno, "standard error") < 0:
        raise located(path, lineno, f"negative standard error {tokens[2]}")
    reps = parse_int(tokens[3], path, lineno, "repetitions", 1, 2**62)
    ranks = tokens[4:]
    for value in ranks:
        if value != "---":
            parse_float(value, path, lineno, "per-rank time")
    procs = [v for k, v in loops.items() if k in _PROCS_VARS]
    if procs:
        comm_size = parse_int(procs[0], path, lineno, "communicator size", 1, 2**31 - 1)
    else:   # one column per rank when P is small; quantiles (P unknown) from 16 on
        comm_size = len(ranks) if 0 < len(ranks) < MAX_NODE_TIMES else None
    named = _NAMED.match(block)
    return Point(lineno, size, time, {"n": reps}, comm_size=comm_size,
                 collective=named.group(1).lower() if named else None, block=block)
