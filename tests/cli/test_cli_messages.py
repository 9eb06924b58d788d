"""The smaller points of issue "Lean": collective names as people type them (MPI_Allreduce) and
"did you mean" (core/io/names.py); Ctrl-C says how to continue; ingest replaces its --out as build
and emit do; "1 collective"; the progress bar ends at ETA 0:00 and counts refinement; the
paired time cap without binary noise; `collsel --help` and the README lead with tune; the
support table generated from the code. The stand-in launcher and fake benchmark of
tests/cli/test_sweep_upfront.py: no MPI runs here."""
import os
import re
import shlex
import signal
import subprocess
import sys
import time

import pytest

from collsel.core.io import names
from collsel.sources.measure.progress import Progress

from helpers import REPO, collsel, synthetic_table, write_fake_bench
from test_sweep import one_error_line
from test_sweep_cluster import FAKE_LAUNCHER, script

WAIT_S = 120


@pytest.fixture
def tools(tmp_path):
    return {"bench": write_fake_bench(tmp_path / "fake_bench.sh"),
            "mpirun": script(tmp_path / "fake_launcher.sh", FAKE_LAUNCHER),
            "env": {**os.environ, "FAKE_LAUNCH_LOG": str(tmp_path / "launches.log")}}


# --- names --------------------------------------------------------------------------------------

@pytest.mark.parametrize("text, name", [("MPI_Allreduce", "allreduce"), ("ALLREDUCE", "allreduce"),
                                        ("mpi_reduce_scatter_block", "reduce_scatter_block"),
                                        ("Reduce-Scatter", "reduce_scatter"), ("bcast", "bcast")])
def test_collective_names_as_typed(text, name):
    from collsel.core.mpi import algorithms
    assert algorithms.given_collective(text) == name


def test_did_you_mean():
    known = ("allreduce", "allgather", "bcast", "reduce")
    assert names.did_you_mean("allreduc", known) == " (did you mean 'allreduce'?)"
    assert names.did_you_mean("MPI_Bcst", known) == " (did you mean 'bcast'?)"
    assert names.did_you_mean("frobnicate", known) == ""
    # another MPI collective is no misspelling of one of collsel's
    for other in ("alltoallw", "MPI_Gatherv", "iallreduce", "MPI_Allreduce_init"):
        assert names.did_you_mean(other, known) == (" (an MPI collective collsel has no "
                                                    "algorithms for)"), other


def test_commands_take_mpi_names_and_suggest(tmp_path):
    r = collsel("sweep", "--collective", "MPI_Allreduce", "--out", tmp_path / "s.csv",
                "--comm-sizes", "2", "--msg-sizes", "8", "--dry-run", timeout=WAIT_S)
    assert r.returncode == 0, r.stderr
    assert "--collective allreduce " in r.stdout
    line = one_error_line(collsel("sweep", "--collective", "allreduc", "--out",
                                  tmp_path / "s.csv", "--dry-run", timeout=WAIT_S))
    assert "unknown collective 'allreduc' (did you mean 'allreduce'?)" in line
    line = one_error_line(collsel("tune", "--out", tmp_path / "t", "--collectives",
                                  "bcast,MPI_Reduce,alreduce", "--dry-run", timeout=WAIT_S))
    assert "unknown collective 'alreduce' (did you mean 'allreduce'?)" in line
    r = collsel("tune", "--out", tmp_path / "t", "--collectives", "MPI_Bcast", "--dry-run",
                "--comm-sizes", "2,3,4", timeout=WAIT_S)
    assert r.returncode == 0 and "(bcast)" in r.stdout.splitlines()[0], r.stderr
    table = synthetic_table(tmp_path / "b.csv", "bcast")
    r = collsel("build", table, "--collective", "MPI_Bcast", "--out", tmp_path / "tree",
                timeout=WAIT_S)
    assert r.returncode == 0, r.stderr
    line = one_error_line(collsel("build", table, "--collective", "bcats", "--out",
                                  tmp_path / "t2", timeout=WAIT_S))
    assert "no rows for collective 'bcats' (did you mean 'bcast'?)" in line
    line = one_error_line(collsel("ingest", table, "--collective", "Allreduc", "--check",
                                  timeout=WAIT_S))
    assert "(did you mean 'allreduce'?)" in line


# --- Ctrl-C ---------------------------------------------------------------------------------------

def interrupt(args, env, ready):
    """Run collsel `args`, SIGINT it once `ready()` holds; (exit status, stderr)."""
    proc = subprocess.Popen([sys.executable, "-m", "collsel.cli", *map(str, args)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                            env=env, start_new_session=True,
                            # a run started in the background inherits SIGINT ignored, and
                            # Python then installs no KeyboardInterrupt handler: restore it
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    deadline = time.monotonic() + WAIT_S
    try:
        while time.monotonic() < deadline and proc.poll() is None and not ready():
            time.sleep(0.05)
        assert proc.poll() is None, "it ended before the interrupt"
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=WAIT_S)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=30)
    return proc.returncode, err


def test_interrupted_sweep_and_tune_say_how_to_continue(tmp_path, tools):
    env = {**tools["env"], "FAKE_BENCH_SLEEP": "0.3"}
    out = tmp_path / "s.csv"
    args = ["sweep", "--collective", "bcast", "--out", out, "--bench", tools["bench"],
            "--mpirun", tools["mpirun"], "--comm-sizes", "2", "--algorithms", "linear,binomial:0",
            "--msg-sizes", "1,2,4,8", "--launches", "8", "--timeout", "60",
            "--progress-interval", "1000"]
    # 8 launches of ~1.2 s: after the first one's mark, seconds of work are left for the
    # interrupt to land in, however slow a busy machine makes the polling
    journal = tmp_path / "s.csv.launches"
    status, err = interrupt(args, env, lambda: journal.exists()
                            and "# launch." in journal.read_text())
    last = err.strip().splitlines()[-1]
    assert status == 130 and last.startswith("collsel: interrupted; continue with: collsel "
                                             "sweep --mode paired "), err
    assert last.endswith(" --resume")
    resume = last.split("continue with: ", 1)[1]
    r = subprocess.run([sys.executable, "-m", "collsel.cli", *shlex.split(resume)[1:]],
                       capture_output=True, text=True, env=tools["env"], timeout=WAIT_S)
    assert r.returncode == 0, r.stderr            # the line continues the same sweep

    tune = tmp_path / "t"
    args = ["tune", "--out", tune, "--bench", tools["bench"], "--mpirun", tools["mpirun"],
            "--collectives", "bcast", "--comm-sizes", "2,3,4", "--msg-sizes", "1,2",
            "--budget", "10m", "--timeout", "60", "--progress-interval", "1000"]
    table = tune / "bcast" / "table.csv.launches"
    status, err = interrupt(args, env, lambda: table.exists()
                            and "# launch." in table.read_text())
    assert status == 130, err
    assert err.strip().splitlines()[-1] == (f"collsel: interrupted; continue with: collsel tune "
                                            f"--resume --out {tune}"), err


# --- outputs, counts, progress, time cap -------------------------------------------------------

def test_ingest_replaces_its_out_as_build_and_emit_do(tmp_path):
    table = synthetic_table(tmp_path / "b.csv", "bcast")
    out = tmp_path / "t.csv"
    out.write_text("old\n")
    osu = REPO / "tests" / "data" / "ingest" / "osu" / "osu_bcast_np4.txt"
    r = collsel("ingest", osu, "--algorithm", "0", "--comm-size", "4", "--out", out,
                timeout=WAIT_S)
    assert r.returncode == 0, r.stderr
    assert out.read_text().startswith("#") and "old" not in out.read_text()
    for command in (["build", table, "--out", tmp_path / "tree"],
                    ["build", table, "--out", tmp_path / "tree"],
                    ["emit", "--target", "blob", tmp_path / "tree" / "tree.json",
                     "--out", tmp_path / "t.bin"],
                    ["emit", "--target", "blob", tmp_path / "tree" / "tree.json",
                     "--out", tmp_path / "t.bin"]):
        r = collsel(*command, timeout=WAIT_S)
        assert r.returncode == 0, r.stderr


def test_one_collective_is_not_one_collectives(tmp_path):
    r = collsel("tune", "--out", tmp_path / "t", "--collectives", "scan", "--comm-sizes",
                "2,3,4", "--dry-run", timeout=WAIT_S)
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("collsel tune: 1 collective (scan), ")


def test_progress_ends_at_eta_zero():
    class Sink:
        def __init__(self):
            self.text = ""

        def write(self, s):
            self.text += s

        def flush(self):
            pass
    sink = Sink()
    p = Progress(10, done=10, stream=sink)        # a resumed sweep with nothing left
    p.finish()
    assert "10/10 points 100%" in sink.text and "ETA 0:00" in sink.text, sink.text


def test_refinement_bar_ends_at_eta_zero(tmp_path, tools):
    """tune refines a finished coarse sweep (`sweep --resume --refine`): every planned point is
    in, the refinement's launches come after them (the bar stands at 100 %, labelled 'refine
    launch K'), and with nothing measured by this run the last line once read 'ETA ?'."""
    args = [sys.executable, "-m", "collsel.cli", "sweep", "--collective", "bcast",
            "--out", str(tmp_path / "r.csv"), "--bench", str(tools["bench"]),
            "--mpirun", str(tools["mpirun"]), "--comm-sizes", "2,3",
            "--algorithms", "linear,binomial:0", "--msg-sizes", "1,2", "--launches", "3",
            "--equivalence", "0", "--timeout", "60", "--progress-interval", "1000"]
    env = {**tools["env"], "FAKE_BENCH_TIE": "1"}
    for extra in ([], ["--resume", "--refine", "2"]):
        r = subprocess.run(args + extra, capture_output=True, text=True, timeout=WAIT_S, env=env)
        assert r.returncode == 0, r.stderr
    bars = re.findall(r"\] (\d+)/(\d+) points (\d+)% .* ETA (\S+)", r.stderr)
    assert bars, r.stderr
    done, total, percent, eta = bars[-1]
    assert done == total == str(2 * 2 * 3 * 3) and eta == "0:00", bars[-1]
    assert "refine launch" in r.stderr.splitlines()[-1], r.stderr


def test_paired_time_cap_has_no_binary_noise(tmp_path):
    r = collsel("sweep", "--collective", "allreduce", "--out", tmp_path / "s.csv",
                "--comm-sizes", "2", "--msg-sizes", "8", "--dry-run", timeout=WAIT_S)
    assert r.returncode == 0, r.stderr
    assert " --time-cap 0.33 " in r.stdout          # 0.03 s x 11 methods


# --- help, README, the support table -----------------------------------------------------------

def test_help_and_readme_lead_with_tune():
    r = collsel("--help", timeout=WAIT_S)
    typical = r.stdout.split("Typical use:")[1].split("\n\n")[0]
    assert typical.splitlines()[1].strip().startswith("collsel tune --out")
    readme = (REPO / "README.md").read_text()
    head, rest = readme.split("\n## ", 1)
    assert len([line for line in head.splitlines()[1:] if line.strip()]) <= 5
    assert rest.startswith("Quick start")
    block = rest.split("```sh\n", 1)[1].split("```", 1)[0].splitlines()
    assert len(block) == 3 and block[1].startswith("collsel tune ")


def test_no_page_lists_the_sweeps_collectives_by_hand():
    """What the sweep measures is docs/reference/support.md's, generated from the code; the
    pages that once said 'bcast and reduce today' link there."""
    support = (REPO / "docs" / "reference" / "support.md").read_text()
    from collsel.commands import sweep
    for c in sweep.collectives("openmpi"):
        assert f"\n| {c} | " in support
    for path in [REPO / "README.md", *(REPO / "docs").rglob("*.md")]:
        assert "bcast and reduce today" not in path.read_text(), path
