"""The canonical performance table: read, validate, combine and write.

A table is CSV. Lines starting with `#` are comments; `# key=value` comments are metadata. The
first other line is the header. Required columns:

    collective  comm_size  msg_size  algorithm  segsize  time_us

`algorithm` is an id or name of the table's algorithm family (core.mpi.algorithms): the metadata
line `# algorithm_family=mpich` says the table names MPICH's own algorithms (the values of
MPIR_CVAR_<COLL>_INTRA_ALGORITHM, e.g. `scatter_ring_allgather`); without it the family is
`openmpi`, an Open MPI coll/tuned id or one of its names (any common spelling). `segsize` is
in bytes (0 = no segmentation); `time_us` is the statistic decisions use (the metadata key
`statistic` says which). Optional columns: `faninout` (default 0), the spread columns in
STAT_COLUMNS, and any other column, kept as text (e.g. a third axis such as `ppn`).

Rows with algorithm 0 are the MPI's own decision (Open MPI's fixed ladder, MPICH's `auto`): a
baseline. Tables of different families never combine, nor sweeps of different modes (`# mode=`).
A forced Open MPI method's rows at the (P, m) where it silently runs another algorithm are
dropped on reading (core.mpi.fallbacks).
"""
import csv
import io
from dataclasses import dataclass, field

import numpy as np

from collsel.core.io import csvfile, names, values
from collsel.core.mpi import algorithms, fallbacks
from collsel.errors import InputError, located

REQUIRED = ("collective", "comm_size", "msg_size", "algorithm", "segsize", "time_us")
INT_COLUMNS = ("comm_size", "msg_size", "algorithm", "segsize", "faninout")
# Spread and precision of the measurement behind time_us, as the sweep writes them.
STAT_COLUMNS = ("mean_us", "median_us", "min_us", "max_us", "stdev_us", "ci_halfwidth_us",
                "n", "ci_met", "launches")
COLUMN_ORDER = REQUIRED[:5] + ("faninout", "time_us") + STAT_COLUMNS
MAX_MSG_SIZE = values.TABLE_MSG_SIZE[1]
MAX_COMM_SIZE = values.COMM_SIZE[1]


@dataclass
class Source:
    path: str
    metadata: dict = field(default_factory=dict)


@dataclass
class PerfTable:
    """Rows as parallel columns. `origin[i]` is "file:line" of row i, for error messages."""
    collective: np.ndarray
    comm_size: np.ndarray
    msg_size: np.ndarray
    algorithm: np.ndarray
    segsize: np.ndarray
    faninout: np.ndarray
    time_us: np.ndarray
    extra: dict
    origin: list
    sources: list
    family: str = algorithms.DEFAULT_FAMILY   # whose algorithm ids `algorithm` holds

    def __len__(self):
        return len(self.time_us)

    def take(self, index):
        index = np.asarray(index)
        if index.dtype == bool:
            index = np.flatnonzero(index)
        return PerfTable(
            self.collective[index], self.comm_size[index], self.msg_size[index],
            self.algorithm[index], self.segsize[index], self.faninout[index], self.time_us[index],
            {k: v[index] for k, v in self.extra.items()},
            [self.origin[i] for i in index], self.sources, self.family)

    def select(self, collective):
        """The rows of one collective; an error when there are none."""
        rows = self.collective == collective
        if not rows.any():
            held = sorted(set(self.collective.tolist()))
            files = ", ".join(s.path for s in self.sources)
            raise InputError(f"{files}: no rows for collective '{collective}'"
                             f"{names.did_you_mean(collective, held)} "
                             f"(collectives present: {', '.join(held) or 'none'})")
        return self.take(rows)

    def column(self, name):
        """A column by name: a required one, faninout, or an extra (text) column."""
        if name in REQUIRED or name == "faninout":
            return getattr(self, name)
        if name in self.extra:
            return self.extra[name]
        raise InputError(f"no column '{name}' in "
                         f"{', '.join(s.path for s in self.sources)} "
                         f"(columns: {', '.join(self.columns())})")

    def columns(self):
        return list(COLUMN_ORDER[:7]) + [c for c in self.extra]


ROW_FIELDS = ("collective", "comm_size", "msg_size", "algorithm", "segsize", "faninout", "time_us")


def _row(fields, index, path, lineno, family):
    """The typed values of one data row, each checked by core.io.values."""
    where = f"{path}:{lineno}"
    get = lambda name: fields[index[name]]  # noqa: E731
    coll = get("collective").strip()
    try:
        alg = _algorithm(coll, get("algorithm"), family)
    except InputError as e:
        raise located(path, lineno, str(e)) from None
    faninout = get("faninout").strip() if "faninout" in index else ""
    segsize = values.integer(get("segsize"), "segsize", *values.SEGSIZE, where)
    if coll in algorithms.registry(family):
        try:
            algorithms.check_segsize(coll, alg, segsize, family)
        except InputError as e:
            raise located(path, lineno, str(e)) from None
    return (coll,
            values.integer(get("comm_size"), "comm_size", *values.COMM_SIZE, where),
            _msg_size(get("msg_size"), where),
            alg,
            segsize,
            values.integer(faninout, "faninout", *values.FANINOUT, where) if faninout else 0,
            values.time_us(get("time_us"), "time_us", where))


def _msg_size(text, where) -> int:
    """A row's message size, held to values.TABLE_MSG_SIZE (what every emit target carries)."""
    try:
        return values.integer(text, "msg_size", *values.TABLE_MSG_SIZE, where)
    except InputError as e:
        if "out of range" not in str(e) or text.strip().startswith("-"):
            raise
        raise InputError(f"{e} (2^63 - 1: Open MPI's rules files read message sizes as a long); "
                         "bytes in the msg_size column? wrong column or unit?") from None


def _plain_rows(doc, index, family):
    """The typed columns when the document is plain (core.io.csvfile.parse_plain) and so are its
    fields (numbers as core.io.values.plain_integers/plain_times take them, each distinct
    collective, algorithm and segment size accepted by _row's checks), else None: then _row
    reads row by row and names the first bad field. Tables have 10^4-10^5 rows; this is a few
    vectorised passes."""
    if doc.columns is None:
        return None
    column = lambda name: doc.columns[index[name]]  # noqa: E731
    n_rows = len(doc.columns[0])
    cols = {"collective": [c.strip() for c in column("collective")]}
    for name, (low, high) in (("comm_size", values.COMM_SIZE),
                              ("msg_size", values.TABLE_MSG_SIZE),
                              ("segsize", values.SEGSIZE), ("faninout", values.FANINOUT)):
        if name == "faninout" and name not in index:
            cols[name] = np.zeros(n_rows, dtype=np.int64)
            continue
        cols[name] = values.plain_integers(column(name), low, high)
        if cols[name] is None:
            return None
    cols["time_us"] = values.plain_times(column("time_us"))
    if cols["time_us"] is None:
        return None
    try:
        ids = {key: _algorithm(*key, family) for key in set(zip(cols["collective"],
                                                                column("algorithm")))}
        cols["algorithm"] = [ids[key] for key in zip(cols["collective"], column("algorithm"))]
        for coll, alg, seg in set(zip(cols["collective"], cols["algorithm"],
                                      cols["segsize"].tolist())):
            if coll in algorithms.registry(family):
                algorithms.check_segsize(coll, alg, seg, family)
    except InputError:
        return None
    return cols


def _algorithm(coll, text, family) -> int:
    """The algorithm id of a row of collective `coll` (stripped) whose algorithm field is
    `text`: an id or a name of the family's for a collective it knows, else an id; InputError
    naming the fault (not its place) when the row is refused."""
    if not coll:
        raise InputError("empty collective")
    if not names.COLLECTIVE_NAME.fullmatch(coll):
        raise InputError(f"collective {coll[:40]!r} is not a collective name "
                         "(lowercase letters, digits and _, at most 24, e.g. bcast)")
    if coll in algorithms.registry(family):
        return algorithms.algorithm_id(coll, text, family)
    return values.integer(text, "algorithm", *values.ALGORITHM_ID)


FAMILY_KEY = "algorithm_family"


def family_of(metadata, path) -> str:
    """The algorithm family a table's (or a sweep journal's) `# algorithm_family=` line names,
    openmpi without one; a located InputError for a family core.mpi.algorithms does not know."""
    family = metadata.get(FAMILY_KEY, algorithms.DEFAULT_FAMILY).strip()
    if family not in algorithms.FAMILIES:
        raise located(path, None, f"# {FAMILY_KEY}={family[:40]!r}: unknown algorithm family "
                      f"(known: {', '.join(algorithms.FAMILIES)})")
    return family


@csvfile.without_gc
def read_table(path, measured=False):
    """Read and validate one canonical CSV table: the rows decisions may use (core.mpi.fallbacks
    drops a forced Open MPI method where it silently ran another algorithm), or with `measured`
    every row, for what a sweep cost."""
    lines = csvfile.read_lines(path)
    doc = csvfile.parse_plain(path, lines) or csvfile.parse(path, lines)
    source = Source(str(path), doc.metadata)
    family = family_of(doc.metadata, path)
    if doc.header is None:
        raise located(path, None, "empty file: expected a CSV header with columns "
                      + ", ".join(REQUIRED))
    header = doc.header
    missing = [c for c in REQUIRED if c not in header]
    if missing:
        raise located(path, doc.header_line, f"header lacks column(s) {', '.join(missing)} "
                      f"(required: {', '.join(REQUIRED)}); "
                      "use 'collsel ingest --map' for other layouts")
    dup = sorted({h for h in header if header.count(h) > 1})
    if dup:
        raise located(path, doc.header_line, f"column(s) {', '.join(dup)} appear twice")
    index = {h: i for i, h in enumerate(header)}
    cols = _plain_rows(doc, index, family)
    if cols is None:        # row by row: the first bad field is named
        doc = doc.with_rows()
        cols = {k: [] for k in ROW_FIELDS}
        for lineno, fields in doc.rows:
            if [f.strip() for f in fields] == header:
                raise located(path, lineno, f"the header again (first on line "
                              f"{doc.header_line}): two tables pasted together? combine them "
                              "by naming both files")
            if len(fields) != len(header):
                raise located(path, lineno, f"{len(fields)} fields, header has {len(header)}")
            for name, value in zip(ROW_FIELDS, _row(fields, index, path, lineno, family)):
                cols[name].append(value)
    extra = {h: ([f.strip() for f in doc.columns[index[h]]] if doc.columns is not None
                 else [f[index[h]].strip() for _, f in doc.rows]) for h in header
             if h not in ROW_FIELDS}
    origin = [f"{path}:{lineno}" for lineno in doc.row_lines()]
    if not origin:
        raise located(path, None, "no data rows after the header")
    table = PerfTable(
        np.array(cols["collective"], dtype=object),
        np.array(cols["comm_size"], dtype=np.int64),
        np.array(cols["msg_size"], dtype=np.uint64),
        np.array(cols["algorithm"], dtype=np.int64),
        np.array(cols["segsize"], dtype=np.int64),
        np.array(cols["faninout"], dtype=np.int64),
        np.array(cols["time_us"], dtype=np.float64),
        {k: np.array(v, dtype=object) for k, v in extra.items()},
        origin, [source], family)
    check_duplicates(table)
    return table if measured else drop_fallbacks(table)


def drop_fallbacks(table):
    """The table without the Open MPI rows whose forced method silently ran another algorithm
    (or failed) at that (P, m) (core.mpi.fallbacks): per method and cell, the other methods stay."""
    if table.family != "openmpi":
        return table
    # only the rows of a method with a fallback entry are asked (a few of a table's methods)
    listed = {(f.collective, f.algorithm) for f in fallbacks.FALLBACKS}
    keep = np.ones(len(table), dtype=bool)
    for i, key in enumerate(zip(table.collective.tolist(), table.algorithm.tolist())):
        if key in listed:
            keep[i] = fallbacks.usable(key[0], key[1], int(table.comm_size[i]),
                                       int(table.msg_size[i]), int(table.segsize[i]))
    return table if keep.all() else table.take(keep)


def combine(tables):
    """One table from several of one algorithm family; extra columns missing in a part are
    empty text there."""
    tables = list(tables)
    for t in tables[1:]:
        if t.family != tables[0].family:
            first, other = (", ".join(s.path for s in x.sources) for x in (tables[0], t))
            raise InputError(f"{other}: algorithm family {t.family}, but {first} is "
                             f"{tables[0].family}; tables of different MPIs do not combine "
                             f"(their algorithm ids differ)")
    check_modes(tables)
    names = []
    for t in tables:
        names += [k for k in t.extra if k not in names]
    cat = lambda attr: np.concatenate([getattr(t, attr) for t in tables])  # noqa: E731
    extra = {k: np.concatenate([t.extra.get(k, np.full(len(t), "", dtype=object))
                                for t in tables]) for k in names}
    combined = PerfTable(cat("collective"), cat("comm_size"), cat("msg_size"), cat("algorithm"),
                         cat("segsize"), cat("faninout"), cat("time_us"), extra,
                         sum((t.origin for t in tables), []), sum((t.sources for t in tables), []),
                         tables[0].family if tables else algorithms.DEFAULT_FAMILY)
    check_duplicates(combined)
    return combined


def sweep_mode(metadata):
    """The --mode a collsel sweep measured a table in (its `# mode=`, else the `--mode` of its
    recorded `# options=`, else per-method, the mode before there were others), or None for a
    table that did not come from a sweep."""
    if metadata.get("source") != "collsel sweep":
        return None
    if metadata.get("mode"):
        return metadata["mode"].strip()
    words = metadata.get("options", "").split()
    return words[words.index("--mode") + 1] if "--mode" in words[:-1] else "per-method"


def check_modes(tables):
    """Refuse sweeps of different modes in one table: their times differ by how they were
    measured, not by the method (a by-size launch, every Intel preset in one process, measured
    1.5-1.9x a per-method launch's times at P = 2; docs/measurements.md), so the fastest method
    of a cell would be the mode's."""
    first = None
    for source in (s for t in tables for s in t.sources):
        mode = sweep_mode(source.metadata)
        if mode is None:
            continue
        if first is None:
            first = (source.path, mode)
        elif mode != first[1]:
            raise InputError(f"{source.path}: measured by a {mode} sweep, but {first[0]} by a "
                             f"{first[1]} sweep; their times do not compare (how a method is "
                             "measured changes its time): build them apart, or sweep both in "
                             "one --mode")


def read_tables(paths):
    return combine(read_table(p) for p in paths)


def point_keys(table):
    """The identity of a measurement: everything but the times and their spread."""
    labels = [k for k in sorted(table.extra) if k not in STAT_COLUMNS]
    return list(zip(table.collective.tolist(), table.comm_size.tolist(), table.msg_size.tolist(),
                    table.algorithm.tolist(), table.segsize.tolist(), table.faninout.tolist(),
                    *[table.extra[k].tolist() for k in labels]))


def check_duplicates(table):
    """Two rows for the same point must agree; identical repeats are harmless."""
    seen = {}
    for i, key in enumerate(point_keys(table)):
        j = seen.setdefault(key, i)
        if j != i and table.time_us[j] != table.time_us[i]:
            raise InputError(
                f"{table.origin[i]}: duplicate of {table.origin[j]} with a different time "
                f"({table.time_us[i]:g} vs {table.time_us[j]:g} µs); remove one of them")


def format_number(value):
    """Shortest text that reads back to the same float; integers without a dot."""
    if isinstance(value, (int, np.integer)):
        return str(int(value))
    value = float(value)
    return str(int(value)) if value.is_integer() and abs(value) < 2**53 else repr(value)


def render_table(rows, metadata, columns=None):
    """CSV text of a table given as a list of dicts, with `# key=value` metadata first."""
    columns = columns or [c for c in COLUMN_ORDER if any(c in r for r in rows)] + sorted(
        {k for r in rows for k in r} - set(COLUMN_ORDER))
    out = io.StringIO()
    for key, value in metadata.items():
        out.write(f"# {key}={value}\n")
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(columns)
    for r in rows:
        writer.writerow(["" if r.get(c) is None else format_number(r[c])
                         if isinstance(r.get(c), (int, float, np.number)) else r[c]
                         for c in columns])
    return out.getvalue()


def summary(table):
    """What a report says about the table behind a map: sources, row counts, precision, range."""
    precision = None
    if "ci_met" in table.extra:
        known = [v.strip().lower() for v in table.extra["ci_met"].tolist() if v.strip() != ""]
        met = sum(v in ("1", "true", "yes") for v in known)
        precision = {"points": len(known), "met": met,
                     "share": (met / len(known)) if known else None}
    return {"sources": [{"path": s.path, "metadata": dict(s.metadata)} for s in table.sources],
            "rows": len(table),
            "baseline_rows": int((table.algorithm == algorithms.BASELINE_ALGORITHM).sum()),
            "precision": precision,
            "time_us": {"min": float(table.time_us.min()), "max": float(table.time_us.max())}}
