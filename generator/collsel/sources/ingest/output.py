"""Rows of all inputs -> one canonical table: duplicates, metadata (the table's statistic is
core.io.statistic.combined of its sources')."""
import statistics as stats_lib

from collsel.core.io import statistic
from collsel.core.maps import table
from collsel.core.mpi import algorithms
from collsel.errors import InputError

KEY = ("collective", "comm_size", "msg_size", "algorithm", "segsize", "faninout")
TIME_FIELDS = ("time_us", "mean_us", "median_us", "min_us", "max_us", "stdev_us")
# What a row holds besides what names its point: the times, their spread, where it was read.
MEASURED = frozenset(TIME_FIELDS + table.STAT_COLUMNS + ("origin",))
DUPLICATE_POLICIES = ("error", "mean", "median", "min", "first")


def carried(row):
    """The row's columns beyond KEY that name its point (ppn, nodes, --carry), sorted by name."""
    return tuple(sorted((k, v) for k, v in row.items() if k not in KEY and k not in MEASURED))


def identity(row):
    """What names a point: KEY and every carried column (as core.maps.table.point_keys: all but the
    times and their spread). Rows that differ in a carried column are different points."""
    return tuple(row[k] for k in KEY) + carried(row)


def check_columns(rows):
    """Every row carries the same columns: a ppn (or --carry) column some rows lack would leave
    them without a value on that axis."""
    names = [tuple(k for k, _ in carried(r)) for r in rows]
    for row, have in zip(rows, names):
        if have != names[0]:
            said = lambda n: ", ".join(n) or "no extra column"  # noqa: E731
            raise InputError(f"{row['origin']}: {said(have)}, but {rows[0]['origin']}: "
                             f"{said(names[0])}; give every input the same columns (--map, "
                             "--carry, --ppn/--nodes, --pattern or --manifest)")


def merge_duplicates(rows, policy):
    """One row per point. Two measurements of one point are an error unless --duplicates
    says how to merge them (SKaMPI's sqrt(2) loops measure small sizes twice, for instance)."""
    groups = {}
    for row in rows:
        groups.setdefault(identity(row), []).append(row)
    out = []
    for key, group in groups.items():
        if len(group) == 1 or policy == "first":
            out.append(group[0])
            continue
        if policy == "error":
            point = ", ".join([f"{k}={v}" for k, v in zip(KEY, key)]
                              + [f"{k}={v}" for k, v in carried(group[0])])
            raise InputError(f"{group[1]['origin']}: duplicate point ({point}) already at "
                             f"{group[0]['origin']}; merge with --duplicates mean|min|first "
                             "or remove one")
        if policy == "min":
            out.append(min(group, key=lambda r: r["time_us"]))
            continue
        merged = {k: v for k, v in group[0].items() if k not in MEASURED or k == "origin"}
        # median: repeated runs of one point where a few are disturbed (another job, one
        # iteration per row) are read as their typical run, not pulled up by the outliers
        merge = stats_lib.median if policy == "median" else stats_lib.fmean
        merged["time_us"] = merge(r["time_us"] for r in group)
        if all("n" in r for r in group):
            merged["n"] = sum(r["n"] for r in group)
        out.append(merged)   # the spread columns of different runs do not combine
    return out


def duplicates_note(rows_in, merged, policy):
    """What --duplicates did, for the table's metadata; None when no point was measured twice."""
    if len(merged) >= rows_in:
        return None
    return f"{policy}: {rows_in} rows read, {len(merged)} points"


def metadata(sources, out_rows, duplicates=None):
    meta = {"source": "collsel ingest",
            "statistic": statistic.combined(s["statistic"] for s in sources)}
    for i, s in enumerate(sources, 1):
        for key, value in s.items():
            meta[f"source.{i}.{key}"] = " ".join(str(value).split())   # one line each
    if duplicates:
        meta["duplicates"] = duplicates
    meta["rows"] = len(out_rows)
    return meta


def finish(rows):
    """Sorted rows without their origin, times rounded below the tools' resolution."""
    out = []
    for row in sorted(rows, key=identity):
        row = {k: v for k, v in row.items() if k != "origin"}
        for k in TIME_FIELDS:
            if k in row:
                row[k] = round(row[k], 6)
        out.append(row)
    return out


def describe_methods(rows):
    """'split_binary_tree/seg0, ...' for the --check report."""
    names = set()
    for r in rows:
        if r["algorithm"] is None:
            names.add("?")
            continue
        name = algorithms.algorithm_name(r["collective"], r["algorithm"])
        seg = "" if r["segsize"] in (0, None) else f"/seg{r['segsize']}"
        names.add(f"{r['algorithm']}:{name}{seg}")
    return sorted(names, key=lambda s: (len(s.split(":")[0]), s))
