"""The table reader at its edges: a byte-order mark is accepted; a pasted second header, a time
no ratio can survive, a third-axis value beyond int64 and a collective that is no name are each
one located line."""
import pytest

from collsel import cli

HEADER = "collective,comm_size,msg_size,algorithm,segsize,time_us"


def run(tmp_path, capsys, text, *args, raw=None):
    path = tmp_path / "t.csv"
    if raw is not None:
        path.write_bytes(raw)
    else:
        path.write_text(text)
    status = cli.main(["stats", str(path), "--collective", "bcast", "--depths", "1", *args])
    return status, capsys.readouterr().err, path


def test_byte_order_mark_is_accepted(tmp_path, capsys):
    raw = ("\ufeff" + HEADER + "\nbcast,2,8,1,0,2\nbcast,2,8,6,0,1\n").encode("utf-8")
    status, err, _ = run(tmp_path, capsys, None, raw=raw)
    assert status == 0, err


@pytest.mark.parametrize("rows,message", [
    (f"bcast,2,8,1,0,2\n{HEADER}\nbcast,2,16,1,0,2\n",
     "t.csv:3: the header again (first on line 1)"),
    ("bcast,2,8,1,0,1e-320\nbcast,2,8,6,0,1\n", "t.csv:2: time_us 1e-320 µs is outside"),
    ("bcast,2,8,1,0,1e300\nbcast,2,8,6,0,1\n", "t.csv:2: time_us 1e300 µs is outside"),
    ("bcast,2,8,1,0,inf\n", "t.csv:2: time_us inf must be a positive finite time"),
    ("Bcast; x,2,8,1,0,2\n", "t.csv:2: collective 'Bcast; x' is not a collective name"),
    ("bcast,0,8,1,0,2\n", "t.csv:2: comm_size 0 out of range [1, 2147483647]"),
    ("bcast,2,18446744073709551616,1,0,2\n", "t.csv:2: msg_size 18446744073709551616 out of range"),
    ("bcast,2,8,1,2147483648,2\n", "t.csv:2: segsize 2147483648 out of range"),
])
def test_bad_rows_are_one_located_line(tmp_path, capsys, rows, message):
    status, err, _ = run(tmp_path, capsys, f"{HEADER}\n{rows}")
    assert status == 2 and err.count("\n") == 1 and message in err, err


def test_third_axis_beyond_int64(tmp_path, capsys):
    path = tmp_path / "z.csv"
    path.write_text(f"{HEADER},ppn\nbcast,2,8,1,0,2,{2**70}\nbcast,2,8,6,0,1,1\n")
    status = cli.main(["build", str(path), "--collective", "bcast", "--z", "ppn",
                       "--out", str(tmp_path / "out")])
    err = capsys.readouterr().err
    assert status == 2 and err.count("\n") == 1, err
    assert f"z.csv:2: ppn {2**70} out of range" in err
    assert not (tmp_path / "out").exists()
