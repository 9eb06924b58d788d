"""OSU micro-benchmarks (`osu_bcast`, `osu_allreduce`, `osu_alltoall`, ...), with or without `-f`.

    # OSU MPI Broadcast Latency Test v7.0
    # Size       Avg Latency(us)   Min Latency(us)   Max Latency(us)  Iterations
    1                      67.05             40.26            103.87        1000

OSU prints neither P nor the algorithm. Avg is the mean over ranks of each rank's mean time per
call; Min/Max (with -f) are the fastest and slowest rank's mean. osu_barrier prints no Size
column (`# Avg Latency(us)` and one row): its row gets size 0. What Size means differs per
benchmark; sources.ingest.msgsize turns it into m once P is known.
"""
import re

from collsel.errors import located
from collsel.sources.ingest.common import (RANK_STATISTICS, Parsed, Point, check_order, parse_int,
                                           parse_time, rank_statistic, unit_factor)

_TITLE = re.compile(r"#\s*OSU MPI(?:-\w+)? (.+?) Latency Test")
# The title's words (OSU 7.x `#define BENCHMARK "OSU MPI%s ... Latency Test"`) where they are
# not the collective's name.
_CALLS = {"broadcast": "bcast", "all-to-all personalized exchange": "alltoall",
          "all-to-allv personalized exchange": "alltoallv",
          "all-to-allw personalized exchange": "alltoallw"}
_LATENCY = re.compile(r"(Avg|Min|Max) Latency\s*\((\S+)\)$")


def parse(path, lines, opts):
    statistic = rank_statistic(path, opts, "OSU")
    collective, header, datatypes, points = None, None, [], []
    for lineno, text in enumerate(lines, 1):
        stripped = text.strip()
        if not stripped:
            continue
        title = _TITLE.match(stripped)
        if title:
            name = title.group(1).lower()
            collective = _CALLS.get(name, name.replace(" ", "_"))
            header = None
        elif stripped.startswith("# Datatype:"):
            datatypes.append(stripped.split(":", 1)[1].strip().rstrip("."))
            if len(datatypes) > 1:
                raise located(path, lineno, "a second datatype block (osu -T all); "
                              "split the file per datatype")
        elif re.match(r"#\s*Size\b", stripped) or "Latency(" in stripped:
            header = _header(path, lineno, stripped, statistic, collective)
        elif stripped.startswith("#"):
            continue
        elif header is None:
            if stripped[0].isdigit():
                raise located(path, lineno, "data row before the '# Size  Avg Latency(us)' "
                              "header: missing header?")
            continue   # launcher or MPI noise before the benchmark's own output
        else:
            points.append(_row(path, lineno, stripped, header, collective))
    if header is None:
        raise located(path, len(lines), "no '# Size  Avg Latency(us)' header before the end: "
                      "not OSU latency output")
    if not points:
        raise located(path, len(lines), "no data rows after the OSU header (truncated?)")
    kind, words = RANK_STATISTICS[statistic]
    info = {"datatype": datatypes[0]} if datatypes else {}
    column = {"avg": "Avg", "min": "Min", "max": "Max"}[statistic]
    return Parsed("osu", points, kind, f"OSU {column} Latency: {words}", info)


def _header(path, lineno, text, statistic, collective):
    names = re.split(r"\s{2,}", text.lstrip("#").strip())
    sized = collective != "barrier"
    if sized and names[0] != "Size":
        raise located(path, lineno, f"OSU header starts with '{names[0]}', not 'Size': "
                      "columns out of order?")
    if not sized and not names[0].startswith("Avg Latency"):
        raise located(path, lineno, f"OSU barrier header starts with '{names[0]}', not 'Avg "
                      "Latency(us)': columns out of order?")
    header = {"names": names, "factor": {}, "pick": statistic, "sized": sized}
    for i, name in enumerate(names):
        m = _LATENCY.match(name)
        if m:
            header[m.group(1).lower()] = i
            header["factor"][i] = unit_factor(m.group(2), path, lineno)
    if "avg" not in header:
        raise located(path, lineno, "OSU header has no 'Avg Latency(us)' column")
    if statistic not in header:
        raise located(path, lineno, f"--statistic {statistic} needs the "
                      f"'{statistic.title()} Latency(us)' column (osu -f output)")
    return header


def _row(path, lineno, text, header, collective):
    fields = text.split()
    names = header["names"]
    if len(fields) != len(names):
        raise located(path, lineno, f"{len(fields)} fields, the OSU header has {len(names)} "
                      f"({', '.join(names)}): truncated line?")
    size = parse_int(fields[0], path, lineno, "message size") if header["sized"] else 0
    times = {k: parse_time(fields[header[k]], path, lineno, f"{k.title()} Latency",
                           header["factor"][header[k]])
             for k in ("avg", "min", "max") if k in header}
    if "min" in times and "max" in times:
        check_order(path, lineno, times["min"], times["avg"], times["max"], ("Min", "Avg", "Max"))
    stats = {}
    if "Iterations" in names:
        stats["n"] = parse_int(fields[names.index("Iterations")], path, lineno, "Iterations",
                               1, 2**62)
    return Point(lineno, size, times[header["pick"]], stats, collective=collective)
