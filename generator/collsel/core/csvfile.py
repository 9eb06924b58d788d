"""Reading input files: text lines with located errors, and the one CSV reader every table,
journal, experiment file and manifest goes through.

CSV files here may carry comments: a line whose first non-blank character is `#` is a comment,
and a comment of the form `# key=value` is metadata (the key starts with a letter; later keys
override earlier ones). Blank lines are skipped. The first other line is the header; every
following line is a row, parsed with the `csv` module (quoting as Excel writes it; a quoted field
does not span lines, so every row keeps its own line number for error messages).
"""
import csv
import functools
import gc
import os
import re
import stat
from dataclasses import dataclass, field

from collsel.errors import located

_METADATA = re.compile(r"([A-Za-z][\w.-]*)=(.*)")
# The csv module's default field limit is 128 KiB; no cell of ours comes near it, but a hostile
# file can exceed it, and that must be a located error, not a traceback.
FIELD_LIMIT = 1 << 20


def without_gc(read):
    """`read` with the cyclic garbage collector paused: a table of 10^4-10^5 rows is millions of
    small acyclic objects, and the collector's passes over them cost a quarter of the reading."""
    @functools.wraps(read)
    def paused(*args, **kw):
        was = gc.isenabled()
        gc.disable()
        try:
            return read(*args, **kw)
        finally:
            if was:
                gc.enable()
    return paused


@dataclass
class CsvDocument:
    path: str
    metadata: dict = field(default_factory=dict)
    header: list = None        # column names, stripped; None for a file with no header line
    header_line: int = None
    rows: list = field(default_factory=list)   # (line number, [fields]) per data row


def check_regular(path, what="a CSV table"):
    """A path that is a regular file (a FIFO would block the read, a device never end it)."""
    try:
        mode = os.stat(path).st_mode
    except OSError as e:
        raise located(path, None, f"cannot read: {e.strerror}") from None
    if stat.S_ISDIR(mode):
        raise located(path, None, f"is a directory, not {what}")
    if not stat.S_ISREG(mode):
        raise located(path, None, f"not a regular file (a FIFO or a device), not {what}")


def read_bytes(path, what="a CSV table"):
    """The whole file, or one located error."""
    check_regular(path, what)
    try:
        with open(path, "rb") as f:
            return f.read()
    except OSError as e:
        raise located(path, None, f"cannot read: {e.strerror}") from None


def decode_lines(path, raw, what):
    """Text lines of `raw`; one located error for binary or non-UTF-8 input."""
    if b"\0" in raw:
        line = raw[:raw.index(b"\0")].count(b"\n") + 1
        raise located(path, line, f"binary data (NUL byte), not {what}")
    try:
        # A UTF-8 byte-order mark (spreadsheets write one) is not part of the first line.
        return raw.decode("utf-8").removeprefix("\ufeff").splitlines()
    except UnicodeDecodeError as e:
        line = raw[:e.start].count(b"\n") + 1
        raise located(path, line, f"not UTF-8 text (byte 0x{raw[e.start]:02x})") from None


def read_lines(path, what="a CSV table"):
    """The file as text lines; one located error for unreadable, binary or non-UTF-8 input."""
    return decode_lines(path, read_bytes(path, what), what)


def split_row(text, path, lineno):
    """The fields of one CSV line."""
    csv.field_size_limit(FIELD_LIMIT)
    try:
        return next(csv.reader([text]))
    except csv.Error as e:
        raise located(path, lineno, f"not a CSV line: {e}") from None


def metadata_item(text):
    """(key, value) of a `# key=value` comment line, else None."""
    meta = _METADATA.match(text.lstrip()[1:].strip())
    return (meta.group(1), meta.group(2).strip()) if meta else None


def parse(path, lines):
    """A CsvDocument from text lines (comments, metadata, header, rows)."""
    doc = CsvDocument(str(path))
    for lineno, text in enumerate(lines, 1):
        if not text.strip():
            continue
        if text.lstrip().startswith("#"):
            item = metadata_item(text)
            if item:
                doc.metadata[item[0]] = item[1]
            continue
        # a line without quotes or NUL (and within the field limit) is its commas' fields:
        # the csv module's answer, without a reader per line (tables have 10^4-10^5 lines)
        fields = (text.split(",") if '"' not in text and "\0" not in text
                  and len(text) <= FIELD_LIMIT else split_row(text, path, lineno))
        if doc.header is None:
            doc.header, doc.header_line = [h.strip() for h in fields], lineno
        else:
            doc.rows.append((lineno, fields))
    return doc


def read(path, what="a CSV table"):
    """Read one CSV file with comments and metadata."""
    return parse(path, read_lines(path, what))
