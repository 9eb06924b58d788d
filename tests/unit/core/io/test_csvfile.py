"""core.io.csvfile.parse_plain reads a plain table column-wise exactly as parse reads it row by
row, and leaves every other document to parse; the command line imports only the command
it runs (both for `collsel build` within a second, issue 30)."""
import subprocess
import sys

import pytest

from collsel.core.io import csvfile, values

PLAIN = [
    ["# k=1", "a,b,c", "1,2,3", "4,5,6"],
    ["a,b,c", "1,2,3", "# launch.1=x", "", "4,5,6", "#k=2", "7,8,9"],
    ["# k=1", "", "a, b ,c", " 1,2 ,3", "# k=2", "4,5,6"],
    ["a,b,c", "é,1,ü", "x,,ß"],           # not ASCII: fields cut from the UTF-8 bytes
]
NOT_PLAIN = [
    ["a,b,c", '"1",2,3'],                 # a quote: the csv module reads it
    ["a,b,c", "1,2,3", "  # a,b,c", "4,5,6"],   # an indented comment with the header's commas
    ["a,b,c", "1,2", "4,5,6"],             # a short row: parse keeps it, a reader names it
    ["a,b,c", "1,2,3,4", "5,6"],           # as many fields in all, not per row
    ["a,b,c", "1,2,3", "   ", "4,5,6"],    # a blank line of spaces
    ["a,b,c"],                             # no rows
    ["# only a comment"],
]


@pytest.mark.parametrize("lines", PLAIN)
def test_a_plain_document_reads_as_parse_reads_it(lines):
    rows, plain = csvfile.parse("t.csv", lines), csvfile.parse_plain("t.csv", lines)
    assert plain is not None and plain.rows == []
    assert (plain.metadata, plain.header, plain.header_line) == (rows.metadata, rows.header,
                                                                  rows.header_line)
    assert plain.row_lines() == [n for n, _ in rows.rows]
    assert [list(r) for r in zip(*plain.columns)] == [f for _, f in rows.rows]
    assert plain.with_rows().rows == rows.rows


@pytest.mark.parametrize("lines", NOT_PLAIN)
def test_any_other_document_is_left_to_parse(lines):
    assert csvfile.parse_plain("t.csv", lines) is None


# Integer columns as values.plain_integers reads them; a plain CSV's column of digits alone is
# read from its bytes (csvfile.FieldTexts.digits), any other through its texts.
INTEGER_COLUMNS = [["0", "7", "007", "123456789012345678"], ["1", " 5"], ["1", ""], ["-1", "2"],
                   ["+1", "2"], ["1234567890123456789", "1"], ["1", "\u0661"], ["1", "2.0"],
                   ["1", "1e3"], ["3", "4"]]


@pytest.mark.parametrize("texts", INTEGER_COLUMNS)
def test_a_plain_column_reads_as_its_texts_read(texts):
    doc = csvfile.parse_plain("t.csv", ["a,b", *(f"{t},x" for t in texts)])
    assert list(doc.columns[0]) == texts
    for low, high in ((0, 10**18), (1, 5)):
        by_bytes = values.plain_integers(doc.columns[0], low, high)
        by_texts = values.plain_integers(list(texts), low, high)
        assert (by_bytes is None) == (by_texts is None)
        assert by_bytes is None or by_bytes.tolist() == by_texts.tolist()
    digits = doc.columns[0].digits()
    assert (digits is not None) == all(t.isascii() and t.isdigit() and len(t) <= 18
                                       for t in texts)


# Number columns: csvfile.FieldTexts.floats reads them from the bytes as float() reads each
# text, or says None (the caller then reads the texts) where a field is empty or holds a blank.
FLOAT_COLUMNS = [["0.5", "-1e-3", "7", "nan", "inf", "-inf", "1_000"], [" 2.5", "3 "],
                 ["1.5", ""], ["1", "2 3"], ["1", "x"], ["é", "1"], ["0.000001", "12345678.9"]]


@pytest.mark.parametrize("texts", FLOAT_COLUMNS)
def test_a_number_column_reads_as_float_reads_its_texts(texts):
    doc = csvfile.parse_plain("t.csv", ["a,b", *(f"x,{t}" for t in texts)])
    got = doc.columns[1].floats()
    try:
        expected = [float(t) for t in texts]
    except ValueError:
        assert got is None
        return
    blank_inside = any(" " in t.strip() for t in texts)
    assert got is None if blank_inside else str(got.tolist()) == str(expected)


def test_a_command_imports_only_its_own_module():
    code = ("import sys, collsel.cli as c; c.parser(['build']); "
            "print(sorted(m for m in sys.modules if m.startswith('collsel.commands.')"
            " and m.count('.') == 2))")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    loaded = eval(r.stdout)
    assert "collsel.commands.build" in loaded and "collsel.commands.report" not in loaded
    assert "collsel.commands.sweep" not in loaded


def test_build_does_not_load_jsonschema(tmp_path):
    """The tree build has just made is not checked against the schema (test_schemas checks
    built trees): loading jsonschema was a twentieth of `collsel build`."""
    table = tmp_path / "t.csv"
    table.write_text("collective,comm_size,msg_size,algorithm,segsize,time_us\n"
                     "bcast,2,1,1,0,1\nbcast,2,1,2,0,2\nbcast,4,1,1,0,3\nbcast,4,1,2,0,2\n")
    code = ("import sys, collsel.cli as c; c.main(['build', sys.argv[1], '--collective', "
            "'bcast', '--out', sys.argv[2]]); print('jsonschema' in sys.modules)")
    r = subprocess.run([sys.executable, "-c", code, str(table), str(tmp_path / "o")],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip().splitlines()[-1] == "False"
    assert (tmp_path / "o" / "tree.json").exists()
