"""Every malformed input in tests/data/ingest gives one `file:line: message` error, exit status 2,
no traceback and no table (an existing one stays as it was)."""
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from collsel import cli

CORPUS = Path(__file__).parents[1] / "data" / "ingest"
MAP = "comm_size=Processes,msg_size=Size,algorithm=Algorithm,time_us=Latency(us)"
# What each family of files needs besides itself, so that only the defect can fail.
ARGS = {
    "osu": ["--algorithm", "0", "--comm-size", "8"],
    "imb": ["--algorithm", "0"],
    "skampi": ["--algorithm", "0"],
    "reprompi": ["--algorithm", "0"],
    "csv": ["--map", MAP, "--collective", "bcast", "--segsize", "0"],
    "coltune": ["--collective", "gather", "--segsize", "0"],
    "binary": ["--algorithm", "0", "--comm-size", "8"],
    "unknown": ["--algorithm", "0", "--comm-size", "8"],
}
SPECIAL = {
    "csv_unit_conflict.csv": ["--map", MAP.replace("(us)", "(ms)"), "--time-unit", "us",
                              "--collective", "bcast", "--segsize", "0"],
    "csv_size_in_kb.csv": ["--map", MAP.replace("=Size,", "=Size(KB),"), "--collective", "bcast",
                           "--segsize", "0"],
}
CASES = sorted(p.name for p in CORPUS.iterdir() if p.is_file())   # imb/: real outputs


def args_for(name):
    return SPECIAL.get(name) or ARGS[name.split("_")[0]]


def test_corpus_is_large_enough():
    assert len(CASES) >= 30


@pytest.mark.parametrize("name", CASES)
def test_malformed_input_is_one_located_error(name, tmp_path, capsys):
    path = str(CORPUS / name)
    out = tmp_path / "table.csv"
    status = cli.main(["ingest", path, *args_for(name), "--out", str(out)])
    err = capsys.readouterr().err
    assert status == 2, err
    lines = err.splitlines()
    assert len(lines) == 1, err
    assert re.match(rf"collsel: error: {re.escape(path)}:[1-9]\d*: \S", lines[0]), lines[0]
    assert "Traceback" not in err
    assert not out.exists()
    assert not [f for f in os.listdir(tmp_path) if f.startswith(".tmp-")]


@pytest.mark.parametrize("name", CASES)
def test_check_mode_rejects_it_too(name, capsys):
    status = cli.main(["ingest", "--check", str(CORPUS / name), *args_for(name)])
    assert status == 2
    assert len(capsys.readouterr().err.splitlines()) == 1


def test_existing_table_is_untouched_by_a_failed_ingest(tmp_path, capsys):
    out = tmp_path / "table.csv"
    out.write_text("previous contents\n")
    name = "osu_truncated_line.txt"
    assert cli.main(["ingest", str(CORPUS / name), *args_for(name), "--out", str(out)]) == 2
    assert out.read_text() == "previous contents\n"


def test_real_console_script_prints_no_traceback(tmp_path):
    """Through the installed entry point, as a user runs it."""
    cmd = [sys.executable, "-m", "collsel.cli", "ingest", str(CORPUS / "binary_garbage.bin"),
           *ARGS["binary"], "--out", str(tmp_path / "t.csv")]
    run = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
    assert run.returncode == 2
    assert run.stdout == ""
    assert run.stderr.count("\n") == 1 and "binary data" in run.stderr
