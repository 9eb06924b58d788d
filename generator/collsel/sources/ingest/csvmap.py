"""Any tidy CSV, read through a column mapping given on the command line:

    --map comm_size=Processes,msg_size=Size,algorithm=Algorithm,time_us=Latency(us)

Algorithm names go through the built-in name table ("Basic Linear", "binomial", "Default").
The time unit comes from the column name ("Latency(us)", "t[ms]") or --time-unit. Lines are
read by core.csvfile (comments, quoting). What the time is says --kind (the ranks part of the
statistic; the rest is `?`).
"""
import re

from collsel.core import csvfile, statistic
from collsel.errors import InputError, located
from collsel.sources.ingest.common import Parsed, Point, parse_float, parse_int, parse_time, unit_factor

TARGETS = ("collective", "comm_size", "msg_size", "algorithm", "segsize", "faninout",
           "time_us", "mean_us", "median_us", "min_us", "max_us", "stdev_us", "n")
TIMES = ("time_us", "mean_us", "median_us", "min_us", "max_us", "stdev_us")
_UNIT = re.compile(r"[(\[]\s*([^()\[\]\s]+)\s*[)\]]\s*$")


def parse_map(text):
    """'comm_size=Processes,msg_size=Size' -> {'comm_size': 'Processes', ...}"""
    mapping = {}
    for part in text.split(","):
        target, sep, column = part.partition("=")
        target, column = target.strip(), column.strip()
        if not sep or not column:
            raise InputError(f"--map: '{part}' is not TARGET=COLUMN")
        if target not in TARGETS:
            raise InputError(f"--map: unknown target '{target}' (targets: {', '.join(TARGETS)})")
        if target in mapping:
            raise InputError(f"--map: {target} mapped twice ('{mapping[target]}' and "
                             f"'{column}')")
        mapping[target] = column
    for need in ("msg_size", "time_us"):
        if need not in mapping:
            raise InputError(f"--map needs {need}=COLUMN")
    return mapping


def parse(path, lines, opts):
    if not opts.map:
        raise InputError("--map TARGET=COLUMN,... is needed to read a CSV (--format csv), e.g. "
                         "--map comm_size=Processes,msg_size=Size,algorithm=Algorithm,"
                         "time_us='Latency(us)'")
    mapping = parse_map(opts.map)
    doc = csvfile.parse(path, lines)
    if doc.header is None:
        raise located(path, len(lines), "no header line")
    header, hline = doc.header, doc.header_line
    index = _index(path, hline, header, mapping)
    factors = {t: _factor(path, hline, mapping[t], opts) for t in TIMES if t in mapping}
    points = []
    for lineno, fields in doc.rows:
        if [f.strip() for f in fields] == header:
            raise located(path, lineno, f"the header again (first at line {hline}): two files "
                          "pasted together? Give them as separate inputs")
        if len(fields) != len(header):
            raise located(path, lineno, f"{len(fields)} fields, the header has {len(header)}: "
                          "truncated line?")
        points.append(_row(path, lineno, [f.strip() for f in fields], index, factors))
    if not points:
        raise located(path, hline, "no data rows after the header (truncated?)")
    unit = "" if "time_us" not in factors else f" ({mapping['time_us']})"
    ranks = opts.ranks()
    given = f"given as --kind {opts.kind}" if opts.kind else "not given (--kind)"
    return Parsed("csv", points, statistic.kind(ranks, statistic.PART, statistic.PART),
                  f"CSV column '{mapping['time_us']}'{unit}, statistic kind {given}",
                  {"map": opts.map})


def _index(path, lineno, header, mapping):
    index = {}
    for target, column in mapping.items():
        if column not in header:
            raise located(path, lineno, f"--map {target}={column}: no column '{column}' in the "
                          f"header (columns: {', '.join(header)})")
        index[target] = header.index(column)
    size_unit = _UNIT.search(mapping["msg_size"])
    if size_unit and size_unit.group(1).lower() not in ("b", "bytes", "byte"):
        raise located(path, lineno, f"column '{mapping['msg_size']}' is in "
                      f"{size_unit.group(1)}, not bytes")
    return index


def _factor(path, lineno, column, opts):
    given = opts.time_unit
    found = _UNIT.search(column)
    if found:
        factor = unit_factor(found.group(1), path, lineno)
        if given and unit_factor(given, path, lineno) != factor:
            raise located(path, lineno, f"column '{column}' says {found.group(1)} but "
                          f"--time-unit is {given}")
        return factor
    if not given:
        raise located(path, lineno, f"column '{column}' does not say its time unit; "
                      "give --time-unit us|ms|s|ns")
    return unit_factor(given, path, lineno)


def _row(path, lineno, fields, index, factors):
    get = lambda t: fields[index[t]] if t in index else None  # noqa: E731
    for target, i in index.items():
        if not fields[i]:
            raise located(path, lineno, f"empty {target} value")
    stats = {t: parse_time(get(t), path, lineno, t, factors[t])
             for t in TIMES[1:] if t in index and t != "stdev_us"}
    if "stdev_us" in index:
        stats["stdev_us"] = parse_float(get("stdev_us"), path, lineno, "stdev_us") * factors[
            "stdev_us"]
        if stats["stdev_us"] < 0:
            raise located(path, lineno, "negative stdev_us")
    if "n" in index:
        stats["n"] = parse_int(get("n"), path, lineno, "n", 1, 2**62)
    opt_int = lambda t, low, high: (parse_int(get(t), path, lineno, t, low, high)  # noqa: E731
                                    if t in index else None)
    return Point(lineno, parse_int(get("msg_size"), path, lineno, "msg_size"),
                 parse_time(get("time_us"), path, lineno, "time_us", factors["time_us"]), stats,
                 comm_size=opt_int("comm_size", 1, 2**31 - 1), collective=get("collective"),
                 algorithm=get("algorithm"), segsize=opt_int("segsize", 0, 2**31 - 1),
                 faninout=opt_int("faninout", 0, 2**31 - 1))
