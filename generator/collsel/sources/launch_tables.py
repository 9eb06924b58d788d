"""A sweep's journal (TABLE.launches) as per-launch tables, for out-of-sample statistics.

Reads the columns every journal has (comm_size, msg_size, algorithm, segsize, launch, median_us;
faninout when present; interfaces section D) through core.io.csvfile, so journals of either sweep
mode and of older versions load alike (sweep.journal.load_existing insists on this version's
exact header, which --resume needs and this does not). Launch k's table is the table whose
time_us is launch k's median_us.
"""
import contextlib
import os

import numpy as np

from collsel.core.io import csvfile, values
from collsel.core.mpi import algorithms
from collsel.core.maps.table import PerfTable, Source, family_of
from collsel.errors import InputError, located
from collsel.sources.sweep import journal_path

JOURNAL = "a sweep journal"
MINIMAL = ("comm_size", "msg_size", "algorithm", "segsize", "launch", "median_us")


def journal_of(tables, given=None):
    """The journal `given` (a command's --launches), or the one beside a single table, or
    None."""
    if given:
        return given
    if len(tables) == 1 and os.path.isfile(journal_path(tables[0])):
        return journal_path(tables[0])
    return None


@csvfile.without_gc
def read_launch_tables(path, collective, z=None):
    """{launch: PerfTable} of one collective from a journal (empty when it has none, or when
    a third axis `z` is asked for and the journal has no such column: its launches cannot be
    placed on the map's z)."""
    doc = _journal_document(path)
    header = doc.header or []
    missing = [c for c in MINIMAL if c not in header]
    if missing:
        raise located(path, doc.header_line, f"not a sweep journal: no column(s) "
                      f"{', '.join(missing)}")
    at = {h: i for i, h in enumerate(header)}
    if z is not None and z not in at:
        return {}
    family = family_of(doc.metadata, path)
    source = Source(str(path), doc.metadata)
    fast = None if doc.columns is None else _plain_columns(doc, at, collective, z, path)
    if fast is not None:
        return {int(k): _table_of(collective, fast, fast["launch"] == k, source, family, z)
                for k in np.unique(fast["launch"])}
    rows = {}
    for lineno, fields in doc.with_rows().rows:
        if len(fields) != len(header):
            raise located(path, lineno, f"{len(fields)} fields, header has {len(header)}")
        if "collective" in at and fields[at["collective"]] != collective:
            continue
        where = f"{path}:{lineno}"
        get = lambda k: fields[at[k]]  # noqa: E731
        alg = get("algorithm").strip()
        alg = (int(values.integer(alg, "algorithm", *values.ALGORITHM_ID, where))
               if alg.lstrip("-").isdigit() else located_id(collective, alg, family, where))
        launch = values.integer(get("launch"), "launch", 1, 10**6, where)
        rows.setdefault(launch, []).append((
            values.integer(get("comm_size"), "comm_size", *values.COMM_SIZE, where),
            values.integer(get("msg_size"), "msg_size", *values.TABLE_MSG_SIZE, where), alg,
            values.integer(get("segsize"), "segsize", *values.SEGSIZE, where),
            values.integer(get("faninout"), "faninout", *values.FANINOUT, where)
            if "faninout" in at and get("faninout").strip() else 0,
            values.time_us(get("median_us"), "median_us", where),
            get(z).strip() if z is not None else "", where))
    return {k: _table(collective, r, source, family, z) for k, r in sorted(rows.items())}


# {(path, bytes): CsvDocument} inside shared_parses(), else None.
_parsed = None


@contextlib.contextmanager
def shared_parses():
    """Within this block a journal read several times (a report asks it for the launches, then
    probe_us, then load_level) is parsed once. Only within it: a parsed journal kept alive
    costs every later garbage collection a walk over its ~50k rows (0.2 s of a build)."""
    global _parsed
    _parsed = {}
    try:
        yield
    finally:
        _parsed = None


def _journal_document(path):
    """The journal parsed, or the parse shared_parses() kept of the same bytes."""
    raw = csvfile.read_bytes(path, JOURNAL)
    key = (str(path), raw)
    if _parsed is not None and key in _parsed:
        return _parsed[key]
    lines = csvfile.decode_lines(path, raw, JOURNAL)
    doc = csvfile.parse_plain(path, lines) or csvfile.parse(path, lines)
    if _parsed is not None:
        _parsed[key] = doc
    return doc


INTEGERS = {"comm_size": values.COMM_SIZE, "msg_size": values.TABLE_MSG_SIZE,
            "algorithm": values.ALGORITHM_ID, "segsize": values.SEGSIZE,
            "faninout": values.FANINOUT, "launch": (1, 10**6)}


def _plain_columns(doc, at, collective, z, path):
    """The columns of a plain document (core.io.csvfile.parse_plain) as arrays when every field
    is plain (integers as ASCII digits in range, times in range), else None: the row-by-row
    reader then names the first bad field. A journal has tens of thousands of rows; this reads
    them in a few vectorised passes."""
    column = lambda name: doc.columns[at[name]]  # noqa: E731
    lines = np.asarray(doc.column_lines)
    picked = None
    if "collective" in at and set(column("collective")) != {collective}:
        picked = np.array(column("collective"), dtype=object) == collective
        lines = lines[picked]
        column = lambda name: np.array(list(doc.columns[at[name]]),  # noqa: E731
                                        dtype=object)[picked].tolist()
    out = {"where": [f"{path}:{n}" for n in lines.tolist()]}
    for name, (low, high) in INTEGERS.items():
        if name not in at:
            out[name] = np.zeros(lines.size, dtype=np.int64)
            continue
        v = values.plain_integers(column(name), low, high)
        if v is None:
            return None
        out[name] = v
    t = values.plain_times(column("median_us"))
    if t is None:
        return None
    out["median_us"] = t
    out["z"] = np.array([v.strip() for v in column(z)], dtype=object) if z else None
    return out


def _table_of(collective, cols, rows, source, family, z):
    idx = np.flatnonzero(rows)
    extra = {} if z is None else {z: cols["z"][idx]}
    return PerfTable(np.array([collective] * idx.size, dtype=object),
                     cols["comm_size"][idx], cols["msg_size"][idx].astype(np.uint64),
                     cols["algorithm"][idx], cols["segsize"][idx], cols["faninout"][idx],
                     cols["median_us"][idx], extra, [cols["where"][i] for i in idx], [source],
                     family)


def located_id(collective, name, family, where):
    try:
        return algorithms.algorithm_id(collective, name, family)
    except InputError as e:
        raise InputError(f"{where}: {e}") from None


def _table(collective, rows, source, family, z):
    cols = list(zip(*rows))
    extra = {} if z is None else {z: np.array(cols[6], dtype=object)}
    return PerfTable(np.array([collective] * len(rows), dtype=object),
                     np.array(cols[0], dtype=np.int64), np.array(cols[1], dtype=np.uint64),
                     np.array(cols[2], dtype=np.int64), np.array(cols[3], dtype=np.int64),
                     np.array(cols[4], dtype=np.int64), np.array(cols[5], dtype=np.float64),
                     extra, list(cols[7]), [source], family)


def load(tables, collective, given=None, z=None):
    """(journal path or None, {launch: PerfTable}) of `collective` for a command's tables
    (journal_of), with the third axis column `z` when the command has one."""
    path = journal_of(tables, given)
    if path is None:
        return None, {}
    return path, read_launch_tables(path, collective, z)
