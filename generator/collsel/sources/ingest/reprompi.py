"""ReproMPI (`mpibenchmark`): per-repetition rows (default) or one row per call and size
(`--summary`), times in seconds, sizes as `count` elements of the `#@datatype`.

    #@datatype_size_bytes=1
    #@nprocs=4
                        test       nrep        count    runtime_sec
               MPI_Allreduce          0            1   0.0000109819

Each repetition's time is the slowest rank's (runtime_type=local: max over ranks of the local
run-time; global: latest end minus earliest start). Per-repetition rows are summarised here.
"""
import statistics as stats_lib
from collections import OrderedDict

from collsel.core.io.statistic import kind
from collsel.errors import located
from collsel.sources.ingest.common import (Parsed, Point, check_order, check_size, collective_name,
                                           parse_float, parse_int, parse_time)

STATISTICS = ("median", "mean", "min", "max")


def parse(path, lines, opts):
    statistic = opts.statistic or "median"
    if statistic not in STATISTICS:
        raise located(path, None, f"--statistic {statistic} does not apply to ReproMPI output "
                      f"(choose {', '.join(STATISTICS)})")
    meta, header, groups, hline = {}, None, OrderedDict(), None
    for lineno, text in enumerate(lines, 1):
        stripped = text.strip()
        if stripped.startswith("#@"):
            key, _, value = stripped[2:].partition("=")
            meta[key.strip()] = value.strip()
        elif not stripped or stripped.startswith("#"):
            continue
        elif header is None:
            header, hline = stripped.split(), lineno
            _check_header(path, lineno, header)
        else:
            _row(path, lineno, stripped, header, meta, opts, groups)
    if header is None:
        raise located(path, len(lines), "no column header line ('test nrep count runtime_sec' or "
                      "'test count total_nrep ...'): not ReproMPI output")
    if not groups:
        raise located(path, hline, "no data rows after the header (truncated?)")
    if "nprocs" not in meta:
        raise located(path, hline, "no '#@nprocs=' line in the header (truncated?)")
    procs = parse_int(meta["nprocs"], path, None, "#@nprocs", 1, 2**31 - 1)
    summary = "runtime_sec" not in header
    points = [_point(path, key, g, statistic, summary, procs) for key, g in groups.items()]
    runtime = meta.get("runtime_type") or meta.get("clocktype", "local")
    info = {k: meta[k] for k in ("datatype", "nprocs", "procsync", "sync", "clocksync",
                                 "runtime_type", "clocktype", "nrep") if k in meta}
    over = "over repetitions (--summary)" if summary else "over repetitions"
    return Parsed("reprompi", points, kind("max", statistic, "one"),
                  f"ReproMPI {statistic} {over} of the per-repetition slowest-rank time "
                  f"(runtime_type={runtime})", info)


def _check_header(path, lineno, header):
    if header[0] == "process":
        raise located(path, lineno, "per-process output (mpibenchmark -v) is not supported; "
                      "use the default or --summary output")
    for c in header:
        if c.endswith(("_ms", "_us", "_ns")):
            raise located(path, lineno, f"column '{c}': ReproMPI prints seconds (*_sec)")
    size = [c for c in ("count", "msize_bytes") if c in header]
    if "test" not in header or not size or not ("runtime_sec" in header or any(
            c.endswith("_sec") for c in header)):
        raise located(path, lineno, f"header '{' '.join(header)}' lacks test, count and a "
                      "*_sec column: not a ReproMPI header")


def _row(path, lineno, text, header, meta, opts, groups):
    fields = text.split()
    if len(fields) != len(header):
        raise located(path, lineno, f"{len(fields)} fields, the header has {len(header)} "
                      f"({' '.join(header)}): truncated line?")
    row = dict(zip(header, fields))
    if "msize_bytes" in row:
        size = parse_int(row["msize_bytes"], path, lineno, "msize_bytes")
    else:
        width = meta.get("datatype_size_bytes") or opts.datatype_size
        if width is None:
            raise located(path, lineno, "count is in elements but there is no "
                          "'#@datatype_size_bytes=' line; give --datatype-size BYTES")
        size = check_size(parse_int(row["count"], path, lineno, "count") * parse_int(
            str(width), path, lineno, "datatype size", 1, 2**20), path, lineno,
            "message size (count x datatype size)")
    key = (row["test"], size)
    group = groups.setdefault(key, {"line": lineno, "rows": []})
    if "runtime_sec" in row:
        parse_int(row["nrep"], path, lineno, "nrep", 0, 2**62)
        if row.get("errorcode", "0") != "0":
            return   # the repetition fell outside its window: ReproMPI itself discards it
        group["rows"].append(parse_time(row["runtime_sec"], path, lineno, "runtime_sec", 1e6))
    else:
        if group["rows"]:
            raise located(path, lineno, f"second summary row for {row['test']} at {size} "
                          f"bytes (first at line {group['line']})")
        group["rows"].append(_summary(path, lineno, row))


def _summary(path, lineno, row):
    out = {"n": parse_int(row.get("valid_nrep", ""), path, lineno, "valid_nrep", 1, 2**62)}
    for name in ("mean", "median", "min", "max"):
        if f"{name}_sec" in row:
            out[f"{name}_us"] = parse_time(row[f"{name}_sec"], path, lineno, f"{name}_sec", 1e6)
    if "stddev_sec" in row:
        out["stdev_us"] = parse_float(row["stddev_sec"], path, lineno, "stddev_sec") * 1e6
    elif "var_sec" in row:   # really s²
        out["stdev_us"] = parse_float(row["var_sec"], path, lineno, "var_sec") ** 0.5 * 1e6
    if out.get("stdev_us", 0) < 0:
        raise located(path, lineno, "negative standard deviation")
    if {"min_us", "max_us"} <= set(out):
        for mid in ("mean_us", "median_us"):
            if mid in out:
                check_order(path, lineno, out["min_us"], out[mid], out["max_us"],
                            ("min_sec", mid.replace("_us", "_sec"), "max_sec"))
    return out


def _point(path, key, group, statistic, summary, procs):
    test, size = key
    if summary:
        out = group["rows"][0]
        if f"{statistic}_us" not in out:
            raise located(path, group["line"], f"--statistic {statistic}: no {statistic}_sec "
                          "column in this summary (rerun with --summary, or choose another)")
    else:
        times = group["rows"]
        if not times:
            raise located(path, group["line"], f"no valid repetition for {test} at {size} bytes")
        out = {"mean_us": stats_lib.fmean(times), "median_us": stats_lib.median(times),
               "min_us": min(times), "max_us": max(times), "n": len(times)}
        if len(times) > 1:
            out["stdev_us"] = stats_lib.stdev(times)
    return Point(group["line"], size, out[f"{statistic}_us"], out, comm_size=procs,
                 collective=collective_name(test), block=test)
