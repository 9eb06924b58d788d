"""What every format parser shares: reading text safely, numbers with located errors, units.

A parser returns a `Parsed`: points that carry what the file itself records (message size, time,
spread, and P or collective when the format prints them) plus the line each came from. What the
file does not record is filled in later from flags, a file-name pattern or a manifest (given.py).
"""
import math
import re
from dataclasses import dataclass, field

from collsel.core.io import csvfile, values
from collsel.core.maps import table
from collsel.core.io.statistic import kind
from collsel.errors import InputError, located

# Times accepted, in µs: core.io.values' range (a femtosecond to a day). Anything outside is a unit
# or parsing mistake, and the bounds keep every ratio later steps form finite.
MIN_TIME_US, MAX_TIME_US = values.MIN_TIME_US, values.MAX_TIME_US
# Longest digit string read as an integer: 2^64 has 20 digits. Longer ones are refused before
# int() (which refuses over 4300 digits with an exception of its own).
MAX_DIGITS = 40

_UNITS = {"us": 1.0, "usec": 1.0, "µs": 1.0, "μs": 1.0, "microseconds": 1.0,
          "ms": 1e3, "msec": 1e3, "milliseconds": 1e3,
          "s": 1e6, "sec": 1e6, "seconds": 1e6,
          "ns": 1e-3, "nsec": 1e-3, "nanoseconds": 1e-3}


@dataclass
class Point:
    line: int
    msg_size: int
    time_us: float
    stats: dict = field(default_factory=dict)   # mean_us, median_us, ..., n
    comm_size: int = None                       # when the file prints P
    collective: str = None                      # when the file names the call
    block: str = None                           # the file's name for the measurement
    algorithm: str = None                       # per-row values of a mapped CSV
    segsize: int = None
    faninout: int = None
    columns: dict = field(default_factory=dict)  # a mapped CSV's ppn, nodes, --carry columns


@dataclass
class Parsed:
    format: str
    points: list
    statistic: str                  # what time_us is, in the core.io.statistic vocabulary
    detail: str                     # the same in words (metadata statistic_detail)
    info: dict = field(default_factory=dict)     # file facts worth keeping (tool version, ...)
    skipped: list = field(default_factory=list)  # blocks read but not collectives we know
    # (line, why) of each line --skip-malformed left out: the command warns about each
    malformed: list = field(default_factory=list)


# OSU and IMB both report, per message size, statistics over ranks of each rank's mean time
# over the repetitions of one launch: (vocabulary, words) per --statistic.
RANK_STATISTICS = {"avg": (kind("mean", "mean", "one"),
                           "mean over ranks of each rank's mean time per call"),
                   "max": (kind("max", "mean", "one"), "slowest rank's mean time per call"),
                   "min": (kind("min", "mean", "one"), "fastest rank's mean time per call")}


def rank_statistic(path, opts, tool):
    """The --statistic a per-rank-mean tool (OSU, IMB) was asked for; 'avg' by default."""
    statistic = opts.statistic or "avg"
    if statistic not in RANK_STATISTICS:
        raise located(path, None, f"--statistic {statistic} does not apply to {tool} output "
                      f"(choose {', '.join(RANK_STATISTICS)})")
    return statistic


def unit_factor_or_none(unit):
    """µs per one `unit`, or None for a unit we do not know."""
    return _UNITS.get(unit.strip().lower())


def unit_factor(unit, path, line):
    """µs per one `unit`; an error for a unit we do not know."""
    factor = unit_factor_or_none(unit)
    if factor is None:
        raise located(path, line, f"unknown time unit '{_short(unit)}' (known: us, ms, s, ns)")
    return factor


def check_regular(path, what="benchmark output"):
    """A path that is a regular file (core.io.csvfile's check, with this module's wording)."""
    csvfile.check_regular(path, what)


def read_lines(path):
    """The file as text lines; one located error for unreadable, binary, non-UTF-8 or empty."""
    check_regular(path)
    lines = csvfile.read_lines(path, "benchmark output")
    if not any(line.strip() for line in lines):
        raise located(path, 1, "empty file")
    return lines


def parse_int(text, path, line, name, low=0, high=table.MAX_MSG_SIZE):
    text = text.strip()
    if not re.fullmatch(r"[+-]?\d+", text):
        raise located(path, line, f"{name} '{_short(text)}' is not an integer")
    if len(text.lstrip("+-").lstrip("0")) > MAX_DIGITS:
        raise located(path, line, f"{name} '{_short(text)}' out of range [{low}, {high}]")
    value = int(text)
    if not low <= value <= high:
        raise located(path, line, f"{name} {value} out of range [{low}, {high}]")
    return value


_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def printable(text):
    """`text` with control characters escaped as \\xNN (for error messages)."""
    return _CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}", text)


def _short(text, limit=40):
    """A field as an error message shows it: control characters escaped (a file's escape
    sequences never reach the terminal), a 10 MiB field not printed whole."""
    text = text if len(text) <= limit else f"{text[:limit]}... ({len(text):,} characters)"
    return printable(text)


def parse_float(text, path, line, name):
    try:
        value = float(text.strip())
    except ValueError:
        raise located(path, line, f"{name} '{_short(text.strip())}' is not a number") from None
    if not math.isfinite(value):
        raise located(path, line, f"{name} is {_short(text.strip())}, not a finite number")
    return value


def parse_time(text, path, line, name, factor=1.0):
    """A time in the file's unit, returned in µs; must be positive and plausible (within
    core.io.values' range: a femtosecond to a day)."""
    value = parse_float(text, path, line, name) * factor
    if value <= 0:
        raise located(path, line, f"{name} {text.strip()} is not a positive time")
    if value > MAX_TIME_US:
        raise located(path, line, f"{name} {text.strip()} is over a day: wrong unit or column?")
    if value < MIN_TIME_US:
        raise located(path, line, f"{name} {text.strip()} is below a femtosecond: wrong unit "
                      "or column?")
    return value


def check_size(size, path, line, name="message size"):
    """A message size computed from the file (count x element size) must fit a size_t."""
    if not 0 <= size <= table.MAX_MSG_SIZE:
        raise located(path, line, f"{name} {size} out of range [0, {table.MAX_MSG_SIZE}]")
    return size


def check_order(path, line, low, mid, high, names):
    """min <= avg <= max, allowing for the two-decimal rounding of the tools' output."""
    slack = 0.011
    if not (low <= mid + slack and mid <= high + slack):
        raise located(path, line, f"{names[0]} {low:g} <= {names[1]} {mid:g} <= {names[2]} "
                      f"{high:g} does not hold: columns out of order?")


def parse_pairs(flag, text, what):
    """'A=x,B=y' -> {'A': 'x', 'B': 'y'} for a flag of KEY=VALUE pairs (`what` names the form
    in the error)."""
    pairs = {}
    for part in text.split(","):
        key, sep, value = (s.strip() for s in part.partition("="))
        if not sep or not key or not value:
            raise InputError(f"{flag}: '{_short(part)}' is not {what}")
        if key in pairs:
            raise InputError(f"{flag}: '{_short(key)}' given twice")
        pairs[key] = value
    return pairs


def parse_relabel(text):
    """--relabel 'ring=double_ring,2=3' -> {'ring': 'double_ring', '2': '3'}: what a dataset's
    own algorithm labels mean (a file named algo2 that ran Open MPI's algorithm 3). The targets
    are checked as algorithm ids once the collective is known."""
    return parse_pairs("--relabel", text, "LABEL=ALGORITHM")


def collective_name(call):
    """'MPI_Bcast', 'Bcast', 'bcast' -> 'bcast'."""
    return re.sub(r"^mpi_", "", call.strip().lower())
