"""Any tidy CSV, read through a column mapping given on the command line:

    --map comm_size=Processes,msg_size=Size,algorithm=Algorithm,time_us=Latency(us)

Algorithm names go through the built-in name table ("Basic Linear", "binomial", "Default").
The time unit comes from the column name ("Latency(us)", "t[ms]") or --time-unit. Lines are
read by core.io.csvfile (comments, quoting). What the time is says --kind (the ranks part of the
statistic; the rest is `?`).

Columns beyond the canonical ones are kept two ways: the process layout, `ppn=COLUMN` and
`nodes=COLUMN` in --map (positive integers, the third axis of `collsel build --z ppn`), and any
named column as text with `--carry COLUMN[,NAME=COLUMN...]` (NAME: the table's column name, the
CSV's by default). A carried column is part of what names a point, like P and m: two rows that
differ in one are two points, never duplicates.

Other people's result files (docs/guide/ingest-datasets.md) need a few more things: rows chosen
by a column's value (`--where Allocation=core`: one table per mapping, or only the rows of the
collective asked for), the dataset's own algorithm labels translated (`--relabel`), a file
without a header (`--columns`) or with blank-separated fields (`--whitespace`), lines of the
wrong shape skipped and reported instead of refused (`--skip-malformed`), and no size column at
all (barrier: m = 0).
"""
import re

from collsel.core.io import csvfile, statistic
from collsel.core.maps import table
from collsel.errors import InputError, located
from collsel.sources.ingest.common import (Parsed, Point, parse_float, parse_int, parse_pairs,
                                           parse_relabel, parse_time, printable, unit_factor)

# Where the ranks ran: integer columns a mapped CSV may carry (core.maps.table keeps them as extra
# columns; `collsel build --z ppn` reads ppn as the third axis).
LAYOUT = ("ppn", "nodes")
TARGETS = ("collective", "comm_size", "msg_size", "algorithm", "segsize", "faninout",
           "time_us", "mean_us", "median_us", "min_us", "max_us", "stdev_us", "n") + LAYOUT
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
    # msg_size may be left out: a barrier's results have no size (m = 0, as OSU's barrier)
    if "time_us" not in mapping:
        raise InputError("--map needs time_us=COLUMN")
    return mapping


# What a table made without a size column says of m (its metadata `source.N.msg_size_is`);
# assemble refuses it for any collective but barrier.
NO_SIZE_COLUMN = "no size column (barrier: m = 0)"


def parse_where(text):
    """--where 'Allocation=core,Type=Broadcast' -> {'Allocation': 'core', 'Type': 'Broadcast'}:
    the rows kept are those whose columns hold exactly these values."""
    return parse_pairs("--where", text, "COLUMN=VALUE")


def parse_columns(text):
    """--columns 'P,bytes,alg,t' -> the header of a file that prints none."""
    names = [c.strip() for c in text.split(",")]
    if not all(names):
        raise InputError(f"--columns '{printable(text[:80])}': an empty column name")
    twice = sorted({c for c in names if names.count(c) > 1})
    if twice:
        raise InputError(f"--columns: {printable(', '.join(twice)[:80])} given twice")
    return names


# A carried column's name in the table: a plain identifier, so it reads back as a header field.
_CARRY_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_.-]{0,63}")
MAX_CARRIED_TEXT = 200


def parse_carry(text):
    """'fabric,run=Run id' -> {'fabric': 'fabric', 'run': 'Run id'} (table name: CSV column)."""
    carried = {}
    for part in text.split(","):
        name, sep, column = part.partition("=")
        name, column = name.strip(), (column if sep else name).strip()
        if not name or not column:
            raise InputError(f"--carry: '{part}' is not COLUMN or NAME=COLUMN")
        if not _CARRY_NAME.fullmatch(name):
            raise InputError(f"--carry: column name '{printable(name[:40])}' is not a plain "
                             "name (letters, digits, _ . -, starting with a letter or _; "
                             "rename it with NAME=COLUMN)")
        if name in TARGETS:
            raise InputError(f"--carry: '{name}' is a column collsel reads itself; map it with "
                             f"--map {name}=COLUMN")
        if name in table.COLUMN_ORDER or name == "origin":
            raise InputError(f"--carry: '{name}' is a column collsel writes itself; name it "
                             "differently with NAME=COLUMN")
        if name in carried:
            raise InputError(f"--carry: {name} given twice")
        carried[name] = column
    return carried


def parse(path, lines, opts):
    if not opts.map:
        raise InputError("--map TARGET=COLUMN,... is needed to read a CSV (--format csv), e.g. "
                         "--map comm_size=Processes,msg_size=Size,algorithm=Algorithm,"
                         "time_us='Latency(us)'")
    mapping = parse_map(opts.map)
    carried = parse_carry(opts.carry) if opts.carry else {}
    where = parse_where(opts.where) if opts.where else {}
    relabel = parse_relabel(opts.relabel) if opts.relabel else {}
    doc = csvfile.parse(path, lines, parse_columns(opts.columns) if opts.columns else None,
                        opts.whitespace)
    if doc.header is None:
        raise located(path, len(lines), "no header line")
    header, hline = doc.header, doc.header_line
    index = _index(path, hline, header, mapping)
    carry_index = _carry_index(path, hline, header, carried)
    where_index = _where_index(path, hline, header, where)
    factors = {t: _factor(path, hline, mapping[t], opts) for t in TIMES if t in mapping}
    points, malformed, seen, left_out = [], [], set(), 0
    for lineno, fields in doc.rows:
        fields = [f.strip() for f in fields]
        if fields == header:
            again = f"first at line {hline}" if hline else "given as --columns"
            raise located(path, lineno, f"the header again ({again}): two files pasted "
                          "together? Give them as separate inputs")
        n = len(fields)
        problem = (f"{n} field{'s' if n != 1 else ''}, the header has {len(header)}"
                   if n != len(header) else None)
        if problem is None and where_index:
            chosen = tuple(fields[i] for i in where_index)
            if chosen != tuple(where_index.values()):
                seen.add(chosen)
                left_out += 1
                continue
        if problem is None:
            problem = next((f"empty {t} value" for t, i in index.items() if not fields[i]),
                           None)
        if problem is not None:
            if not opts.skip_malformed:
                guess = ": truncated line?" if n != len(header) else ""
                raise located(path, lineno, f"{problem}{guess} (--skip-malformed skips and "
                              "reports such lines)")
            malformed.append((lineno, problem))
            continue
        point = _row(path, lineno, fields, index, factors)
        if point.algorithm is not None:
            point.algorithm = relabel.get(point.algorithm, point.algorithm)
        point.columns.update(_carried(path, lineno, fields, carry_index))
        points.append(point)
    if not points and where_index and left_out:
        found = "; ".join(", ".join(f"{c}={v[:40]}" for c, v in zip(where, values))
                          for values in sorted(seen)[:8])
        raise located(path, None, f"no row has {printable(opts.where[:80])} (--where); the rows "
                      f"hold {printable(found)}")
    if not points and malformed:
        line, why = malformed[0]
        raise located(path, None, f"every row was skipped (--skip-malformed): {len(malformed)} "
                      f"malformed line(s), the first line {line}: {why}")
    if not points:
        raise located(path, hline, "no data rows after the header (truncated?)")
    unit = "" if "time_us" not in factors else f" ({mapping['time_us']})"
    ranks = opts.ranks()
    given = f"given as --kind {opts.kind}" if opts.kind else "not given (--kind)"
    info = {"map": opts.map, **{k: getattr(opts, k) for k in ("carry", "where", "relabel",
                                                             "columns") if getattr(opts, k)}}
    if opts.whitespace:
        info["fields"] = "separated by blanks (--whitespace)"
    if left_out:
        info["rows_not_selected"] = f"{left_out} (--where {opts.where})"
    if malformed:
        info["malformed_lines_skipped"] = (f"{len(malformed)} (lines "
                                           f"{', '.join(str(n) for n, _ in malformed[:20])}"
                                           f"{', ...' if len(malformed) > 20 else ''})")
    if "msg_size" not in mapping:
        info["msg_size_is"] = NO_SIZE_COLUMN
    return Parsed("csv", points, statistic.kind(ranks, statistic.PART, statistic.PART),
                  f"CSV column '{mapping['time_us']}'{unit}, statistic kind {given}", info,
                  malformed=malformed)


def _index(path, lineno, header, mapping):
    index = {}
    for target, column in mapping.items():
        if column not in header:
            raise located(path, lineno, f"--map {target}={column}: no column '{column}' in the "
                          f"header (columns: {', '.join(header)})")
        index[target] = header.index(column)
    size_unit = _UNIT.search(mapping.get("msg_size", ""))
    if size_unit and size_unit.group(1).lower() not in ("b", "bytes", "byte"):
        raise located(path, lineno, f"column '{mapping['msg_size']}' is in "
                      f"{size_unit.group(1)}, not bytes")
    return index


def _where_index(path, lineno, header, where):
    """{index in the CSV: value} of the --where columns."""
    for column in where:
        if column not in header:
            raise located(path, lineno, f"--where {column}=...: no column '{column}' in the "
                          f"header (columns: {', '.join(header)})")
    return {header.index(column): value for column, value in where.items()}


def _carry_index(path, lineno, header, carried):
    """{table column name: index in the CSV} of the --carry columns."""
    index = {}
    for name, column in carried.items():
        if column not in header:
            raise located(path, lineno, f"--carry {name}={column}: no column '{column}' in the "
                          f"header (columns: {', '.join(header)})")
        index[name] = header.index(column)
    return index


def _carried(path, lineno, fields, carry_index):
    """The carried columns' values of one row: printable text, not empty."""
    out = {}
    for name, i in carry_index.items():
        value = fields[i]
        if not value:
            raise located(path, lineno, f"empty {name} value (--carry)")
        if len(value) > MAX_CARRIED_TEXT or printable(value) != value:
            raise located(path, lineno, f"{name} '{printable(value[:40])}' is not one line of "
                          f"at most {MAX_CARRIED_TEXT} printable characters (--carry)")
        out[name] = value
    return out


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
    """The point of one row whose mapped fields are all present (parse checked)."""
    get = lambda t: fields[index[t]] if t in index else None  # noqa: E731
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
    layout = {t: opt_int(t, 1, table.MAX_COMM_SIZE) for t in LAYOUT if t in index}
    size = parse_int(get("msg_size"), path, lineno, "msg_size") if "msg_size" in index else 0
    return Point(lineno, size,
                 parse_time(get("time_us"), path, lineno, "time_us", factors["time_us"]), stats,
                 comm_size=opt_int("comm_size", 1, 2**31 - 1), collective=get("collective"),
                 algorithm=get("algorithm"), segsize=opt_int("segsize", 0, 2**31 - 1),
                 faninout=opt_int("faninout", 0, 2**31 - 1), columns=layout)
