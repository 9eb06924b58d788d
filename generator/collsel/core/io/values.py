"""The ranges of every value collsel accepts, and their checks: one module for values read from
files and values given on the command line, so both are held to the same rules.

Every check returns the clean value or raises InputError with one line that names the value and
where it came from (`FILE:LINE` or the flag), e.g. `t.csv:7: comm_size 0 out of range [1,
2147483647]` or `--max-depth: -1 out of range [0, 64]`.
"""
import math
import os
import re
import tempfile

import numpy as np

from collsel.errors import InputError

COMM_SIZE = (1, 2**31 - 1)        # an MPI communicator size is an int
MSG_SIZE = (0, 2**64 - 1)         # bytes, a size_t / uint64_t: what a query may ask
# A measured message size (a table row, and a sweep journal's row, from which a table row or a
# per-launch table is made): what every emit target carries. The C targets and the blob take a
# size_t / uint64_t, but Open MPI reads a rules file's MSGSIZE as a long (ompi-rules, ompi-json),
# so a table beyond 2^63 - 1 would build a tree those targets must refuse; a journal held to
# MSG_SIZE instead would accept rows whose table the table reader then refuses. MPICH's
# JSON is narrower still (atoi: 2^31 - 1), but a bound that low would refuse real measurements of
# 2 GiB and more (MPI-4 large counts), so mpich-json refuses such thresholds when it emits.
TABLE_MSG_SIZE = (0, 2**63 - 1)
SEGSIZE = (0, 2**31 - 1)          # Open MPI takes the segment size as an int
FANINOUT = (0, 2**31 - 1)
ALGORITHM_ID = (0, 2**31 - 1)
Z_VALUE = (-2**63, 2**63 - 1)     # a numeric third axis is an int64_t in emitted C
DEPTH = (0, 64)
# Times in µs: below a femtosecond or above a day is a unit or parsing mistake, and the bounds keep
# every ratio and sum the pipeline forms finite (1e11 / 1e-9 is far from overflow).
MIN_TIME_US, MAX_TIME_US = 1e-9, 86400e6
C_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,62}")


def _where(where) -> str:
    return f"{where}: " if where else ""


def integer(value, name, low, high, where="") -> int:
    """An integer in [low, high] from text or a number (a bool or a float is not an integer)."""
    if isinstance(value, str):
        text = value.strip()
        if not re.fullmatch(r"[+-]?\d+", text):
            raise InputError(f"{_where(where)}{name} '{value[:40]}' is not an integer")
        if len(text.lstrip("+-0")) > 40:      # far beyond every range; int() would be slow
            raise InputError(f"{_where(where)}{name} {text[:20]}... ({len(text)} digits) out of "
                             f"range [{low}, {high}]")
        value = int(text)
    elif isinstance(value, bool) or not isinstance(value, int):
        raise InputError(f"{_where(where)}{name} {value!r} is not an integer")
    if not low <= value <= high:
        raise InputError(f"{_where(where)}{name} {value} out of range [{low}, {high}]")
    return value


def plain_integers(texts, low, high):
    """The int64 array of texts that are all plain (ASCII digits, at most 18, surrounding
    spaces allowed) and in [low, high], else None: a reader's vectorised pass over thousands
    of rows, whose row-by-row reader (`integer`) then names the first bad field. A column of
    a plain CSV (core.io.csvfile.FieldTexts) of digits alone is read from its bytes, its texts
    never made."""
    v = texts.digits() if hasattr(texts, "digits") else None
    if v is None:
        texts = list(texts)
        joined = "".join(texts)
        text = texts
        if not (joined.isascii() and joined.isdigit()):     # spaces to strip, or not plain
            text = [t.strip() for t in texts]
            joined = "".join(text)
        if text and not (joined.isascii() and joined.isdigit() and all(text)
                         and max(map(len, text)) <= 18):
            return None
        v = np.array(text, dtype=np.int64)
    return None if v.size and (v.min() < low or v.max() > high) else v


def plain_times(texts):
    """The float array of texts that are all times `time_us` accepts, else None (as
    plain_integers)."""
    try:
        t = np.array([x.strip() for x in texts], dtype=float)
    except ValueError:
        return None
    ok = not t.size or (np.isfinite(t).all() and t.min() >= MIN_TIME_US and t.min() > 0
                        and t.max() <= MAX_TIME_US)
    return t if ok else None


def number(value, name, low, high, where="", low_open=False) -> float:
    """A finite number in [low, high] ((low, high] with low_open) from text or a number."""
    try:
        result = float(value.strip() if isinstance(value, str) else value)
    except (TypeError, ValueError):
        raise InputError(f"{_where(where)}{name} '{str(value)[:40]}' is not a number") from None
    if not (math.isfinite(result) and (low < result if low_open else low <= result)
            and result <= high):
        raise InputError(f"{_where(where)}{name} {value} out of range "
                         f"{'(' if low_open else '['}{low:g}, {high:g}]")
    return result


def depths(value, flag="--depths") -> int:
    """K of 'max depths 1..K' (`collsel stats`, `collsel report`): 1 up to the deepest tree
    collsel builds (DEPTH)."""
    return integer(value, flag, 1, DEPTH[1])


def thresholds(text, limit, flag="--thresholds") -> list:
    """The accuracy thresholds (percentages) of a comma list, each once, in order (empty items
    are skipped; at least one is needed, at most `limit`)."""
    items = [x for x in text.split(",") if x.strip()]
    if not items:
        raise InputError(f"{flag} '{text}': no percentage given (e.g. 60,80,95)")
    if len(items) > limit:
        raise InputError(f"{flag}: {len(items)} thresholds, at most {limit}")
    return list(dict.fromkeys(percent(x, flag) for x in items))


def one_line(value, flag):
    """A path or word that goes into a command line, a batch script or a one-line message: no
    line breaks (a newline in --out would end a script's comment line and start a command)."""
    if value is not None and ("\n" in value or "\r" in value):
        raise InputError(f"{flag} {value!r}: a line break cannot be part of it")
    return value


def time_us(value, name="time_us", where="") -> float:
    """A time in µs: a finite number in [MIN_TIME_US, MAX_TIME_US]."""
    try:
        number = float(value.strip() if isinstance(value, str) else value)
    except (TypeError, ValueError):
        raise InputError(f"{_where(where)}{name} '{value}' is not a number") from None
    if not math.isfinite(number) or number <= 0:
        raise InputError(f"{_where(where)}{name} {value} must be a positive finite time in µs")
    if not MIN_TIME_US <= number <= MAX_TIME_US:
        raise InputError(f"{_where(where)}{name} {value} µs is outside [{MIN_TIME_US:g}, "
                         f"{MAX_TIME_US:g}] µs (a femtosecond to a day): wrong unit or column?")
    return number


def percent(value, name, where="", low_open=0.0, high=100.0) -> float:
    """A percentage in (low_open, high]."""
    try:
        number = float(str(value).strip().rstrip("%"))
    except ValueError:
        raise InputError(f"{_where(where)}{name} '{value}' is not a percentage") from None
    if not (math.isfinite(number) and low_open < number <= high):
        raise InputError(f"{_where(where)}{name} {value} is not a percentage in "
                         f"({low_open:g}, {high:g}]")
    return number


def identifier(text, name, where="") -> str:
    """A C identifier (what emitted code uses as a function, array or macro name)."""
    if not isinstance(text, str) or not C_IDENTIFIER.fullmatch(text):
        raise InputError(f"{_where(where)}{name} {text!r} is not a C identifier (letters, digits "
                         "and _, not starting with a digit, at most 63 characters)")
    return text


def _parent(path) -> str:
    return os.path.dirname(os.path.abspath(path)) or "/"


def _check_parent(path, flag) -> None:
    parent = _parent(path)
    if not os.path.isdir(parent):
        what = "is not a directory" if os.path.exists(parent) else "does not exist"
        raise InputError(f"{flag} {path}: {parent} {what}; create it first or choose another "
                         "path")
    if not os.access(parent, os.W_OK | os.X_OK):
        raise InputError(f"{flag} {path}: cannot write in {parent} (permission denied)")
    _probe(parent, path, flag)


def _probe(directory, path, flag) -> None:
    """access() passes for root even where nothing can be created (/proc): try it."""
    try:
        tempfile.TemporaryFile(dir=directory).close()
    except OSError as e:
        raise InputError(f"{flag} {path}: cannot create files in {directory} "
                         f"({e.strerror or e})") from None


def output_file(path, flag="--out") -> str:
    """A path a command may write one file to: not a directory, in a writable directory."""
    path = os.fspath(path)
    if not path:
        raise InputError(f"{flag}: empty path")
    if os.path.isdir(path):
        raise InputError(f"{flag} {path} is a directory, but this writes one file: name a file")
    if os.path.exists(path) and not os.path.isfile(path):
        raise InputError(f"{flag} {path} exists and is not a regular file")
    _check_parent(path, flag)
    return path


def not_an_input(path, inputs, flag="--out"):
    """Refuse an output path that is one of the command's input files (it would be replaced by
    what is made from it)."""
    out = os.path.realpath(os.fspath(path))
    for given in inputs:
        if os.path.realpath(os.fspath(given)) == out:
            raise InputError(f"{flag} {path} is also an input file ({given}): writing it would "
                             "replace what it is made from; choose another --out")
    return path


def output_directory(path, flag="--out") -> str:
    """A directory a command may write its files into: absent (created with its missing parents)
    or a directory, writable."""
    path = os.fspath(path)
    if not path:
        raise InputError(f"{flag}: empty path")
    if os.path.exists(path) and not os.path.isdir(path):
        raise InputError(f"{flag} {path} exists and is not a directory: this writes several "
                         "files into a directory")
    if os.path.isdir(path):
        if not os.access(path, os.W_OK | os.X_OK):
            raise InputError(f"{flag} {path}: cannot write in it (permission denied)")
        return path
    # Missing parents are created (as mkdir -p would): the nearest existing one must allow it.
    ancestor = _parent(path)
    while not os.path.exists(ancestor):
        ancestor = os.path.dirname(ancestor)
    if not os.path.isdir(ancestor):
        raise InputError(f"{flag} {path}: {ancestor} is not a directory; choose another path")
    if not os.access(ancestor, os.W_OK | os.X_OK):
        raise InputError(f"{flag} {path}: cannot write in {ancestor} (permission denied)")
    _probe(ancestor, path, flag)
    return path
