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
import itertools
import os
import re
import stat
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Optional

from collsel.errors import located

_METADATA = re.compile(r"([A-Za-z][\w.-]*)=(.*)")
_INDENTED_COMMENT = re.compile(r"^\s+#", re.M)
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
    header: Optional[list] = None   # column names, stripped; None for a file with no header line
    header_line: Optional[int] = None
    rows: list = field(default_factory=list)   # (line number, [fields]) per data row
    # read by parse_plain: every row's field texts per header column (a PlainColumns; rows
    # stays empty), every row's line number and the text lines
    columns: object = None
    column_lines: object = None     # a range or list of ints
    lines: Optional[list] = None

    def row_lines(self):
        """The line number of every row."""
        if self.columns is None:
            return [lineno for lineno, _ in self.rows]
        return list(self.column_lines)

    def with_rows(self):
        """The document with its rows (a plain one parsed again, row by row)."""
        return self if self.columns is None else parse(self.path, self.lines)


def check_regular(path, what="a CSV table") -> None:
    """A path that is a regular file (a FIFO would block the read, a device never end it)."""
    try:
        mode = os.stat(path).st_mode
    except OSError as e:
        raise located(path, None, f"cannot read: {e.strerror}") from None
    if stat.S_ISDIR(mode):
        raise located(path, None, f"is a directory, not {what}")
    if not stat.S_ISREG(mode):
        raise located(path, None, f"not a regular file (a FIFO or a device), not {what}")


def read_bytes(path, what="a CSV table") -> bytes:
    """The whole file, or one located error."""
    check_regular(path, what)
    try:
        with open(path, "rb") as f:
            return f.read()
    except OSError as e:
        raise located(path, None, f"cannot read: {e.strerror}") from None


def decode_lines(path, raw, what) -> list:
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


def read_lines(path, what="a CSV table") -> list:
    """The file as text lines; one located error for unreadable, binary or non-UTF-8 input."""
    return decode_lines(path, read_bytes(path, what), what)


def split_row(text, path, lineno):
    """The fields of one CSV line."""
    csv.field_size_limit(FIELD_LIMIT)
    try:
        return next(csv.reader([text]))
    except csv.Error as e:
        raise located(path, lineno, f"not a CSV line: {e}") from None


def metadata_item(text) -> Optional[tuple]:
    """(key, value) of a `# key=value` comment line, else None."""
    meta = _METADATA.match(text.lstrip()[1:].strip())
    return (meta.group(1), meta.group(2).strip()) if meta else None


def parse(path, lines, header=None, whitespace=False) -> CsvDocument:
    """A CsvDocument from text lines (comments, metadata, header, rows).

    `header`: the column names of a file that prints none (other tools' result files), so
    that every line that is not a comment is a row. `whitespace`: fields are separated by runs
    of blanks (spaces, tabs) instead of commas, with no quoting (the plain text that
    `printf("%d %d %f\\n")` writes); leading and trailing blanks separate nothing."""
    doc = CsvDocument(str(path))
    if header is not None:
        doc.header = list(header)
    for lineno, text in enumerate(lines, 1):
        if not text.strip():
            continue
        if text.lstrip().startswith("#"):
            item = metadata_item(text)
            if item:
                doc.metadata[item[0]] = item[1]
            continue
        if whitespace:
            fields = text.split()
        else:
            # a line without quotes or NUL (and within the field limit) is its commas' fields:
            # the csv module's answer, without a reader per line (tables have 10^4-10^5 lines)
            fields = (text.split(",") if '"' not in text and "\0" not in text
                      and len(text) <= FIELD_LIMIT else split_row(text, path, lineno))
        if doc.header is None:
            doc.header, doc.header_line = [h.strip() for h in fields], lineno
        else:
            doc.rows.append((lineno, fields))
    return doc


def parse_plain(path, lines):
    """The CsvDocument of `lines` read column-wise (`columns`, no `rows`) when every data line
    is plain: no quote or NUL, within the field limit, with the header's number of fields
    (comments and blank lines between rows are read as `parse` reads them); else None (`parse`
    reads it row by row). A table or journal of 10^4-10^5 rows is then split by a few
    vectorised passes instead of one per line (PlainColumns)."""
    for i, text in enumerate(lines):
        if text.strip() and not text.lstrip().startswith("#"):
            break
    else:
        return None
    doc = parse(path, lines[:i + 1])
    data, n = lines[i + 1:], len(doc.header)
    numbers = range(i + 2, i + 2 + len(data))
    if "" in data or "#" in "".join(data):
        # a comment or blank line (a line "  # ..." stays: its field count sends it to parse)
        skip = [k for k, text in enumerate(data) if not text or text[0] == "#"]
        for k in skip:
            item = metadata_item(data[k]) if data[k] else None
            if item:        # a later key overrides an earlier one, as in `parse`
                doc.metadata[item[0]] = item[1]
        ends = skip + [len(data)]
        starts = [0] + [k + 1 for k in skip]
        data = list(itertools.chain.from_iterable(data[a:b] for a, b in zip(starts, ends)))
        numbers = list(itertools.chain.from_iterable(numbers[a:b]
                                                     for a, b in zip(starts, ends)))
    block = "\n".join(data)
    if (not data or '"' in block or "\0" in block
            or ("#" in block and _INDENTED_COMMENT.search(block))
            or max(map(len, data)) > FIELD_LIMIT):
        return None
    columns = PlainColumns.split(block, len(data), n)
    if columns is None:         # a line with other than the header's number of fields
        return None
    doc.columns, doc.column_lines, doc.lines = columns, numbers, lines
    return doc


class PlainColumns(Sequence):
    """The fields of a plain document's rows, per column (`columns[j]`: a FieldTexts). The
    rows are split once, by NumPy, into each field's offsets; a column's texts are cut only
    when a reader asks for them, and a column of plain digits is read as integers without
    them (a journal has 16 columns of 10^4-10^5 rows: readers want half, most as numbers)."""

    def __init__(self, text, raw, starts, ends):
        self.text, self.raw = text, raw     # the rows joined by "\n", and as UTF-8 bytes
        self.starts, self.ends = starts, ends   # [row, column] byte offsets of each field

    @classmethod
    def split(cls, block, rows, n):
        """The columns of `rows` lines of `n` comma-separated fields joined by "\n", or None
        when a line has another number of fields."""
        import numpy as np      # here: a CSV without plain rows needs no NumPy
        raw = block.encode("utf-8")     # "," and "\n" are never part of a multibyte character
        b = np.frombuffer(raw, dtype=np.uint8)
        seps = np.flatnonzero((b == ord(",")) | (b == ord("\n")))
        # every line has n - 1 commas when every n-th separator ends a line and there are no
        # other line ends
        if seps.size != rows * n - 1 or (b[seps[n - 1::n]] != ord("\n")).any() \
                or np.count_nonzero(b[seps] == ord("\n")) != rows - 1:
            return None
        bounds = np.concatenate(([-1], seps, [b.size]))
        return cls(block, raw, (bounds[:-1] + 1).reshape(rows, n), bounds[1:].reshape(rows, n))

    def __len__(self):
        return self.starts.shape[1]

    def __getitem__(self, j):
        if isinstance(j, slice):
            return [self[k] for k in range(len(self))[j]]
        return FieldTexts(self, range(len(self))[j])

    def texts(self, j):
        """Column j's field texts."""
        starts, ends = self.starts[:, j].tolist(), self.ends[:, j].tolist()
        if len(self.raw) == len(self.text):        # ASCII: byte offsets are text offsets
            return [self.text[a:b] for a, b in zip(starts, ends)]
        return [self.raw[a:b].decode("utf-8") for a, b in zip(starts, ends)]

    def digits(self, j):
        """Column j as int64 values when every field is 1 to 18 ASCII digits (no sign, no
        space), else None."""
        import numpy as np
        starts, ends = self.starts[:, j], self.ends[:, j]
        lengths = ends - starts
        if not lengths.size:
            return np.zeros(0, dtype=np.int64)
        if lengths.min() < 1 or lengths.max() > 18:     # 18 digits always fit an int64
            return None
        firsts, pos = _field_bytes(starts, lengths)
        digit = np.frombuffer(self.raw, dtype=np.uint8)[pos] - np.uint8(ord("0"))
        if (digit > 9).any():
            return None
        power = 10 ** np.arange(18, dtype=np.int64)
        return np.add.reduceat(digit * power[np.repeat(ends, lengths) - pos - 1], firsts)

    def floats(self, j):
        """Column j as float64 values, parsed as float() parses each field, or None when a
        field is empty or has a blank inside. The fields' bytes are gathered by NumPy into one
        blank-separated string (no Python string per field: a journal has 8 such columns of
        10^4-10^5 rows)."""
        import numpy as np
        starts, ends = self.starts[:, j], self.ends[:, j]
        lengths = ends - starts
        if not lengths.size:
            return np.zeros(0)
        if lengths.min() < 1:
            return None
        # the fields' bytes, each followed by one blank: byte i of the fields moves right by
        # the number of fields before its own
        _, pos = _field_bytes(starts, lengths)
        gathered = np.full(pos.size + lengths.size, ord(" "), dtype=np.uint8)
        gathered[np.arange(pos.size) + np.repeat(np.arange(lengths.size), lengths)] = \
            np.frombuffer(self.raw, dtype=np.uint8)[pos]
        fields = gathered.tobytes().split()
        if len(fields) != lengths.size:
            return None
        try:
            return np.array(fields, dtype=float)
        except ValueError:
            return None


def _field_bytes(starts, lengths):
    """(each field's first byte in `pos`, `pos`: the offsets in the document of every byte of
    the fields, field after field) of fields starting at `starts`, `lengths` bytes long."""
    import numpy as np
    firsts = np.cumsum(lengths) - lengths
    return firsts, np.arange(lengths.sum()) + np.repeat(starts - firsts, lengths)


class FieldTexts(Sequence):
    """One column of a PlainColumns: the field texts (a list of str when iterated or indexed),
    cut on first use; `digits()` the column as integers when it is plain digits, `floats()` as
    floats when every field is one."""

    def __init__(self, columns, j):
        self.columns, self.j, self._texts = columns, j, None

    def texts(self):
        if self._texts is None:
            self._texts = self.columns.texts(self.j)
        return self._texts

    def digits(self):
        return self.columns.digits(self.j)

    def floats(self):
        return self.columns.floats(self.j)

    def __len__(self):
        return self.columns.starts.shape[0]

    def __getitem__(self, i):
        return self.texts()[i]

    def __iter__(self):
        return iter(self.texts())


def read(path, what="a CSV table") -> CsvDocument:
    """Read one CSV file with comments and metadata."""
    return parse(path, read_lines(path, what))
