"""A full disk stops a sweep with one line and a state `--resume` finishes from: a real full
file system (a tmpfs of a few KiB, mounted for the test; root only), the fake benchmark under
real mpirun. The resumed table is the one an uninterrupted sweep writes."""
import os
import shutil
import subprocess

import pytest

from helpers import collsel, write_fake_bench

pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(shutil.which("mpirun") is None,
                                 reason="Open MPI (mpirun) not installed; run make setup"),
              pytest.mark.skipif(os.geteuid() != 0, reason="mounting a tmpfs needs root")]

GRID = ["--comm-sizes", "2,3", "--msg-sizes", "1,2,4,8,16,32,64,128,256,512,1024,2048"]


def sweep(bench, out, *extra):
    return collsel("sweep", "--mode", "per-method", "--collective", "bcast", "--out", out,
                   "--bench", bench, "--algorithms", "binomial:0,linear:0", "--no-baseline",
                   "--launches", "1", "--timeout", "60", *GRID, *extra, timeout=300)


def rows(path):
    """The table's data lines (its metadata names times and paths that differ between runs)."""
    return [line for line in path.read_text().splitlines() if not line.startswith("#")]


@pytest.fixture
def small_disk(tmp_path):
    """A 16 KiB tmpfs, half of it taken by a file the test removes to free the space."""
    disk = tmp_path / "disk"
    disk.mkdir()
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=16k", "tmpfs", str(disk)],
                          capture_output=True, text=True)
    if done.returncode:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.strip()}")
    try:
        (disk / "fill").write_bytes(b"\0" * 8192)
        yield disk
    finally:
        subprocess.run(["umount", str(disk)], check=True)


def test_a_full_disk_stops_the_sweep_in_one_line_and_resume_finishes_it(tmp_path, small_disk):
    bench = write_fake_bench(tmp_path / "fake_bench.sh")
    out = small_disk / "t.csv"
    stopped = sweep(bench, out)
    errors = [line for line in stopped.stderr.splitlines() if line.startswith("collsel: ")]
    assert stopped.returncode == 2, stopped.stderr
    assert errors == [f"collsel: error: {out}: cannot write: No space left on device"], \
        stopped.stderr
    assert "Traceback" not in stopped.stderr
    journal = out.with_name(out.name + ".launches")
    assert journal.exists() and not out.exists()       # measured so far, kept for --resume

    (small_disk / "fill").unlink()
    resumed = sweep(bench, out, "--resume")
    assert resumed.returncode == 0, resumed.stderr
    whole = sweep(bench, tmp_path / "whole.csv")
    assert whole.returncode == 0, whole.stderr
    assert rows(out) == rows(tmp_path / "whole.csv")
