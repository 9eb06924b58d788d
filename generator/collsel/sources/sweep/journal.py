"""The files a sweep fills: its table and the journal beside it (TABLE.launches, every launch of
every point), both append-only, and reading them back for --resume.

Each starts as metadata + header, written atomically (core.io.files); each finished point is then
appended as one whole line with a single write() followed by fsync(), so a sweep killed at any
moment leaves complete rows plus at most one truncated last line per file, which `load_existing`
cuts off.
"""
import os
from dataclasses import dataclass, field

import numpy as np

from collsel.core.io import csvfile, values
from collsel.core.mpi import algorithms
from collsel.core.io.files import write_file
from collsel.core.maps.table import COLUMN_ORDER, render_table
from collsel.errors import InputError, located
from collsel.sources.measure import benchmark_program as bench
# journal_path lives in the package (light to import); journal.journal_path is the same function
from collsel.sources.sweep import journal_path, launch_stats, load, shapes  # noqa: F401

COLUMNS = list(COLUMN_ORDER)
# Every launch's statistics of every point, kept beside the table (TABLE.launches): the table row
# of a point is written once all its launches are in, from this journal.
JOURNAL_COLUMNS = ["collective", "comm_size", "msg_size", "algorithm", "segsize", "launch",
                   *launch_stats.LAUNCH_FIELDS]
# Paired mode (sweep/paired.py): the table gains the tie columns (sweep/ties.py); the journal has
# one row per (size, method) of each launch, the launch's seed, and after each launch's rows a
# `# launch.P.K=...` line that marks the launch complete (LAUNCH_MARK).
PAIRED_COLUMNS = COLUMNS + ["tied", "p_best"]
PAIRED_JOURNAL_COLUMNS = ["collective", "comm_size", "msg_size", "algorithm", "segsize",
                          "faninout", "launch", "seed", *launch_stats.LAUNCH_FIELDS]
LAUNCH_KEY = "launch"
LAUNCH_MARK = f"# {LAUNCH_KEY}.".encode()
UNUSABLE_KEY = "unusable"       # `# unusable.SHAPE.K=M:A:S:F,...` (sweep/paired_plan.py)
_INTEGER_COLUMNS = ("comm_size", "msg_size", "algorithm", "segsize", "faninout", "launch",
                    "seed", *shapes.COLUMNS)
_RANGES = {"comm_size": values.COMM_SIZE, "msg_size": values.TABLE_MSG_SIZE,
           "algorithm": values.ALGORITHM_ID, "segsize": values.SEGSIZE,
           "faninout": values.ALGORITHM_ID, "launch": (1, 10**6), "seed": (0, 2**64 - 1),
           "nodes": values.COMM_SIZE, "ppn": values.COMM_SIZE}


def paired_columns(explicit, loaded=False, probed=False, scheduled=False):
    """The paired table's and journal's columns; an explicit nodes x ppn sweep (--nodes/--ppn)
    adds `nodes` and `ppn` to both, --load-levels `load_level`, a probing sweep (--probe,
    --load-levels) `probe_us`, load levels on the emulated cluster `cluster_load`."""
    extra = ((list(shapes.COLUMNS) if explicit else []) + ([shapes.LOAD_COLUMN] if loaded else [])
             + ([bench.PROBE_FIELD] if probed else [])
             + ([load.SCHEDULER_COLUMN] if scheduled else []))
    return PAIRED_COLUMNS + extra, PAIRED_JOURNAL_COLUMNS + extra


def _integer(text, key, path, lineno):
    try:
        return values.integer(text, key, *_RANGES[key], where=f"{path}:{lineno}")
    except ValueError:       # int() refuses numbers of thousands of digits
        raise located(path, lineno, f"{key} out of range") from None


def _columns_in_range(rows, columns, family):
    """{column: its ints (None: a statistic kept as text)} of the integer columns and launch
    statistics that every row of `rows` has plain and in range, checked column by column
    (core.io.values.plain_integers / plain_times, as the table reader checks): the row-by-row
    checks then run only on the other columns, and name the first bad field there. A journal
    has thousands of rows; checking each field alone took most of reading it."""
    if any(len(fields) != len(columns) for _, fields in rows):
        return {}
    at = {name: j for j, name in enumerate(columns)}
    texts = lambda name: [fields[at[name]] for _, fields in rows]  # noqa: E731
    out = {}
    for key in _INTEGER_COLUMNS:
        if key in at and not (key == "algorithm" and family != "openmpi"):
            got = values.plain_integers(texts(key), *_RANGES[key])
            if got is not None:
                out[key] = got.tolist()
    if "launch" in at:
        for key in ("mean_us", "median_us", "min_us", "max_us"):
            if values.plain_times(texts(key)) is not None:
                out[key] = None
        for key, low, high in (("n", *bench.REPETITIONS), ("ci_met", 0, 1)):
            if values.plain_integers(texts(key), low, high) is not None:
                out[key] = None
    return out


@dataclass(frozen=True)
class LaunchLine:
    """One launch of a paired journal: its `# launch.MARK.K=...` line, which closes the rows
    written just before it, and the value of the `# unusable.MARK.K=` line written with it
    ("" without one). A resumed sweep whose grid grew by sizes runs launch K of a shape again
    over the new sizes, so (mark, k) may repeat: a journal's launches are its lines, in order,
    not its metadata keys (which keep only the last line of a key)."""
    mark: str           # the shape (sweep/shapes.py Shape.mark)
    k: int
    wall_s: float
    unusable: str = ""
    line: int = 0       # its line number in the journal (0: a launch of the running sweep)


@dataclass
class LaunchLog:
    """A paired journal's launches in the order they ran, and the launch of each row:
    `of_row[i]` indexes `lines` (the launch line that follows row i)."""
    lines: list = field(default_factory=list)
    of_row: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))


def _launch_key(key, kind):
    """(mark, K) of a `KIND.MARK.K` metadata key, else None."""
    head, _, rest = key.partition(".")
    mark, _, k = rest.rpartition(".")
    return (mark, int(k)) if head == kind and mark and k.isdigit() else None


def launch_lines(lines):
    """[LaunchLine] of a journal's text lines, in order."""
    out, unusable = [], {}
    for lineno, text in enumerate(lines, 1):
        if text[:1] != "#" and not text.lstrip().startswith("#"):
            continue                    # a row: the cheap test first (journals are long)
        item = csvfile.metadata_item(text)
        if item is None:
            continue
        key, value = item
        found = _launch_key(key, UNUSABLE_KEY)
        if found:
            unusable[found] = value
            continue
        found = _launch_key(key, LAUNCH_KEY)
        if found:
            fields = dict(x.split("=", 1) for x in value.split() if "=" in x)
            try:
                wall = float(fields.get("wall_s", 0))
            except ValueError:
                wall = 0.0
            out.append(LaunchLine(*found, wall, unusable.pop(found, ""), lineno))
    return out


def read_launches(path):
    """[LaunchLine] of the journal at `path` (a truncated last line left out)."""
    raw = csvfile.read_bytes(path, "a sweep journal")
    raw = raw[:raw.rfind(b"\n") + 1]
    return launch_lines(csvfile.decode_lines(path, raw, "a sweep journal"))


def point_key(row):
    return (row["comm_size"], row["msg_size"], row["algorithm"], row["segsize"])


def _unfinished_launch(raw):
    """Where the rows of a launch without its `# launch.` line start (a sweep killed while
    writing them), or None. Rows before the first mark follow the header line."""
    end = raw.rfind(b"\n" + LAUNCH_MARK)
    if end >= 0:
        end = raw.index(b"\n", end + 1) + 1
    else:
        lines = [i for i, line in enumerate(raw.split(b"\n")) if line and not
                 line.startswith(b"#")]
        if not lines:
            return None
        end = sum(len(x) + 1 for x in raw.split(b"\n")[:lines[0] + 1])     # after the header
    rest = raw[end:].split(b"\n")
    return end if any(x and not x.startswith(b"#") for x in rest) else None


class TableFile:
    """Append-only access to the table (or journal) being filled."""

    def __init__(self, path, columns):
        self.path = path
        self.columns = columns
        self.fd = None

    def create(self, metadata):
        write_file(self.path, render_table([], metadata, columns=self.columns))

    def open(self):
        self.fd = os.open(self.path, os.O_WRONLY | os.O_APPEND)

    def append(self, text):
        data = text.encode("utf-8")
        written = 0
        while written < len(data):  # one write() in practice; the loop only guards short writes
            written += os.write(self.fd, data[written:])
        os.fsync(self.fd)

    def append_row(self, row):
        self.append_rows([row])

    def append_rows(self, rows):
        """The rows, each rendered as append_row renders it, in one write (one fsync: a paired
        launch completes hundreds of rows at once)."""
        if rows:
            self.append("".join(render_table([row], {}, columns=self.columns).split("\n", 1)[1]
                                for row in rows))

    def append_meta(self, key, value):
        self.append(f"# {key}={' '.join(str(value).split())}\n")

    def close(self):
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None


def drop_partial_line(path, dropped):
    """Cut the truncated last line `load_existing` found (`dropped`, its bytes) off the file.
    Only under the table's lock (sweep/lock.py), so nothing was appended since it was read."""
    if dropped:
        os.truncate(path, os.path.getsize(path) - len(dropped))


def load_existing(path, columns, collective, repair=False, family="openmpi", launches=False):
    """Metadata and rows of a table (or journal) a sweep wrote, without the truncated last line
    a killed sweep may have left (the point in flight), which `repair` (or, later,
    `drop_partial_line`) cuts off the file. Returns (metadata, rows as {column: text}, the dropped
    bytes, a LaunchLog); one located error if malformed, OSError if unreadable. `launches` (a
    paired journal): the rows of a launch whose `# launch.` line is missing are dropped too, and
    the LaunchLog holds its launches (else it is empty). MPICH tables and journals name
    algorithms natively (`family`)."""
    with open(path, "rb") as f:
        raw = f.read()
    dropped = b""
    if raw and not raw.endswith(b"\n"):
        cut = raw.rfind(b"\n") + 1
        dropped = raw[cut:]
        raw = raw[:cut]
    if launches:
        cut = _unfinished_launch(raw)
        if cut is not None:
            dropped = raw[cut:] + dropped
            raw = raw[:cut]
    if dropped and repair:
        os.truncate(path, len(raw))
    lines = csvfile.decode_lines(path, raw, "a sweep table")
    doc = csvfile.parse(path, lines)
    if doc.header is not None and doc.header != columns:
        raise located(path, doc.header_line, "not written by this version of 'collsel sweep' "
                      "in this mode (header "
                      f"{','.join(doc.header)[:200]}); cannot resume into it: start again with "
                      "--force or into another --out (or resume with the --mode that wrote it)")
    rows = []
    checked = _columns_in_range(doc.rows, columns, family)
    integers = [k for k in _INTEGER_COLUMNS if k in columns and k not in checked]
    converted = [(k, numbers) for k, numbers in checked.items() if numbers is not None]
    stats = [k for k in launch_stats.LAUNCH_FIELDS if "launch" in columns and k not in checked]
    for i, (lineno, fields) in enumerate(doc.rows):
        if len(fields) != len(columns):
            raise located(path, lineno, f"{len(fields)} fields, expected {len(columns)}")
        if fields[0] != collective:
            raise located(path, lineno, f"row for collective '{fields[0]}', but this sweep "
                          f"measures '{collective}'")
        row = dict(zip(columns, fields))
        if family != "openmpi":
            try:
                row["algorithm"] = algorithms.algorithm_id(collective, row["algorithm"], family)
            except InputError as e:
                raise located(path, lineno, str(e)) from None
        for key in integers:
            row[key] = _integer(row[key], key, path, lineno)
        for key, numbers in converted:
            row[key] = numbers[i]
        for key in stats:
            bench.check_field(key, row[key], f"{path}:{lineno}")
        if row.get(bench.PROBE_FIELD):
            bench.check_field(bench.PROBE_FIELD, row[bench.PROBE_FIELD], f"{path}:{lineno}")
        if row.get(load.SCHEDULER_COLUMN):
            row[load.SCHEDULER_COLUMN] = values.integer(
                row[load.SCHEDULER_COLUMN], load.SCHEDULER_COLUMN, 0, values.COMM_SIZE[1],
                where=f"{path}:{lineno}")
        if shapes.LOAD_COLUMN in row and row[shapes.LOAD_COLUMN] not in load.LEVELS:
            raise located(path, lineno, f"{shapes.LOAD_COLUMN} {row[shapes.LOAD_COLUMN][:30]!r} "
                          f"is not a load level ({', '.join(load.LEVELS)})")
        rows.append(row)
    meta = doc.metadata
    if "collective" in meta and meta["collective"] != collective:
        raise InputError(f"{path}: table is a '{meta['collective']}' sweep, not '{collective}'")
    log = LaunchLog()
    if launches:
        log.lines = launch_lines(lines)
        log.of_row = np.searchsorted([x.line for x in log.lines],
                                     [lineno for lineno, _ in doc.rows]).astype(np.int64)
    return meta, rows, dropped, log
