"""sources/sweep/journal.load_existing checks a journal's integer columns and launch statistics
column by column where every row is plain and in range, and row by row otherwise: the rows it
returns and the one line it refuses a bad field with are the same either way."""
from pathlib import Path

import pytest

from collsel.errors import InputError
from collsel.sources.sweep import journal

JOURNAL = Path(__file__).resolve().parents[4] / "bench-data" / "paired" / \
    "bcast-openmpi.csv.launches"
ROWS = 40
INTEGERS = ("comm_size", "msg_size", "algorithm", "segsize", "faninout", "launch", "seed")


def _lines():
    """The header and metadata of the shipped bcast journal, and its first ROWS rows."""
    lines = JOURNAL.read_text().splitlines()
    header = next(i for i, line in enumerate(lines) if not line.startswith("#"))
    return lines[:header + 1 + ROWS], header


def _read(tmp_path, edit=None):
    """load_existing of the cut journal, `edit(row index, fields)` applied to its rows (as a
    table of rows: the cut ends before its launch's `# launch.` line)."""
    lines, header = _lines()
    for i in range(ROWS):
        fields = lines[header + 1 + i].split(",")
        if edit:
            edit(i, fields)
        lines[header + 1 + i] = ",".join(fields)
    path = tmp_path / "t.csv.launches"
    path.write_text("\n".join(lines) + "\n")
    return path, journal.load_existing(str(path), journal.PAIRED_JOURNAL_COLUMNS, "bcast")


def test_rows_read_by_column_equal_rows_read_one_by_one(tmp_path):
    """A sign before the first row's numbers (accepted, but not plain) sends every column to
    the row-by-row checks: the same rows come back."""
    columns = journal.PAIRED_JOURNAL_COLUMNS
    _, (_, by_column, _, _) = _read(tmp_path)

    def signed(i, fields):
        if i == 0:
            for j, name in enumerate(columns):
                if name in INTEGERS + ("n", "ci_met"):
                    fields[j] = "+" + fields[j]

    _, (_, one_by_one, _, _) = _read(tmp_path, signed)
    assert len(by_column) == ROWS
    for a, b in zip(by_column, one_by_one):
        assert {k: v for k, v in a.items() if k not in ("n", "ci_met")} == \
            {k: v for k, v in b.items() if k not in ("n", "ci_met")}
        assert all(type(a[k]) is int for k in INTEGERS)
        assert all(type(a[k]) is str for k in ("median_us", "n", "ci_met"))


@pytest.mark.parametrize("column, value, words", [
    ("comm_size", "0", "comm_size 0 out of range"),
    ("msg_size", "1k", "msg_size '1k' is not an integer"),
    ("launch", "1000001", "launch 1000001 out of range"),
    ("median_us", "-1", "median_us -1 must be a positive finite time"),
    ("n", "0", "n 0 out of range"),
    ("ci_met", "2", "ci_met 2 out of range")])
def test_a_bad_field_is_named_with_its_line(tmp_path, column, value, words):
    """The 31st row's field is bad, the 30th's of another column is fine but not plain: the
    error names the bad one, at its line."""
    j = journal.PAIRED_JOURNAL_COLUMNS.index(column)

    def edit(i, fields):
        if i == 29:
            fields[1] = "+" + fields[1]
        if i == 30:
            fields[j] = value

    with pytest.raises(InputError) as err:
        _read(tmp_path, edit)
    lines, header = _lines()
    assert f"t.csv.launches:{header + 1 + 30 + 1}: {words}" in str(err.value)
