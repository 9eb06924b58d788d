"""Bad input to build/query: one clear line naming file and line, exit 2, no output directory."""
import subprocess
import sys

import pytest

HEADER = "collective,comm_size,msg_size,algorithm,segsize,time_us\n"
GOOD = "bcast,2,8,1,0,1.5\nbcast,2,8,6,0,1.2\nbcast,4,8,1,0,2.5\n"

CASES = {
    "empty": ("", "empty file"),
    "header_only": (HEADER, "no data rows"),
    "missing_column": ("collective,comm_size,msg_size,algorithm,time_us\nbcast,2,8,1,1.0\n",
                       "lacks column(s) segsize"),
    "negative_time": (HEADER + GOOD + "bcast,4,8,6,0,-3\n", ":5: time_us -3"),
    "nan_time": (HEADER + GOOD + "bcast,4,8,6,0,nan\n", ":5: time_us nan"),
    "text_time": (HEADER + GOOD + "bcast,4,8,6,0,fast\n", ":5: time_us 'fast' is not a number"),
    "conflicting_duplicate": (HEADER + GOOD + "bcast,2,8,1,0,9.9\n", ":5: duplicate of"),
    "bad_comm_size": (HEADER + "bcast,two,8,1,0,1.0\n", ":2: comm_size 'two' is not an integer"),
    "zero_comm_size": (HEADER + "bcast,0,8,1,0,1.0\n", ":2: comm_size 0 out of range"),
    "bad_msg_size": (HEADER + "bcast,2,8KB,1,0,1.0\n", ":2: msg_size '8KB' is not an integer"),
    "negative_msg_size": (HEADER + "bcast,2,-8,1,0,1.0\n", ":2: msg_size -8 out of range"),
    "unknown_algorithm": (HEADER + "bcast,2,8,ring,0,1.0\n", ":2: unknown bcast algorithm 'ring'"),
    "short_row": (HEADER + "bcast,2,8,1,0\n", ":2: 5 fields, header has 6"),
    "no_rows_for_collective": (HEADER.replace("bcast", "x") + GOOD.replace("bcast", "reduce"),
                               "no rows for collective 'bcast'"),
    "binary": ("\x00\x01garbage", "binary data"),
}


def run(*args, **kw):
    return subprocess.run([sys.executable, "-m", "collsel.cli", *map(str, args)],
                          capture_output=True, text=True, **kw)


@pytest.mark.parametrize("name", sorted(CASES))
def test_build_rejects(tmp_path, name):
    text, expected = CASES[name]
    path = tmp_path / f"{name}.csv"
    path.write_text(text)
    out = tmp_path / "out"
    r = run("build", path, "--collective", "bcast", "--out", out)
    assert r.returncode == 2, r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in r.stderr, r.stderr
    assert str(path) in lines[0] and expected in lines[0], lines[0]
    assert not out.exists()
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".out")]


def test_duplicate_across_files_names_both(tmp_path):
    a, b = tmp_path / "a.csv", tmp_path / "b.csv"
    a.write_text(HEADER + GOOD)
    b.write_text(HEADER + "bcast,4,8,1,0,7.0\n")
    r = run("build", a, b, "--collective", "bcast", "--out", tmp_path / "o")
    assert r.returncode == 2 and f"{b}:2" in r.stderr and f"{a}:4" in r.stderr


def test_bad_limits(tmp_path):
    path = tmp_path / "t.csv"
    path.write_text(HEADER + GOOD)
    for opts, msg in ((["--threshold", "0"], "--threshold"), (["--max-depth", "-1"], "--max-depth"),
                      (["--threshold", "abc"], "percentage")):
        r = run("build", path, "--collective", "bcast", "--out", tmp_path / "o", *opts)
        assert r.returncode == 2 and msg in r.stderr, r.stderr
        assert not (tmp_path / "o").exists()


def test_query_bad_points(tmp_path):
    path = tmp_path / "t.csv"
    path.write_text(HEADER + GOOD)
    assert run("build", path, "--collective", "bcast", "--out", tmp_path / "o").returncode == 0
    tree = tmp_path / "o" / "tree.json"
    pts = tmp_path / "pts"
    for content, msg in (("2 8\n0 8\n", f"{pts}:2: comm_size 0 out of range"),
                         ("2 x\n", f"{pts}:1: msg_size 'x' is not a size or count"),
                         ("2\n", f"{pts}:1: expected P M"),
                         (f"2 {2**64}\n", "out of range")):
        pts.write_text(content)
        r = run("query", tree, "--points", pts)
        assert r.returncode == 2 and msg in r.stderr, r.stderr
    bad_tree = tmp_path / "bad.json"
    bad_tree.write_text('{"format": "collsel-tree", "version": 99}')
    r = run("query", bad_tree, "--comm-size", "2", "--msg-size", "1")
    assert r.returncode == 2 and "version 99 unsupported" in r.stderr


def test_duplicate_with_other_spread_is_still_a_conflict(tmp_path):
    path = tmp_path / "t.csv"
    path.write_text("collective,comm_size,msg_size,algorithm,segsize,time_us,n\n"
                    "bcast,2,8,1,0,1.5,10\nbcast,2,8,1,0,1.7,12\n")
    r = run("build", path, "--collective", "bcast", "--out", tmp_path / "o")
    assert r.returncode == 2 and f"{path}:3: duplicate of {path}:2" in r.stderr, r.stderr
