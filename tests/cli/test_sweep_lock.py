"""One writer per sweep table: a second `collsel sweep` on a table being written (plain, --resume,
--force) exits 2 at once naming the running one, which completes with its table and journal
intact; a sweep killed with SIGKILL leaves no lock behind.

The sweeps run real mpirun (-np 2) launching a fake benchmark: a shell script printing the
benchmark's output format (measure/benchmark_program.py OUTPUT_FIELDS, `#@key=value` header lines
first) on rank 0, sleeping between sizes so the race is real. Every wait here is bounded.
"""
import os
import shutil
import signal
import subprocess
import sys
import time

import pytest

from collsel import cli
from collsel.core.maps import table as tbl
from collsel.sources.sweep import journal as sweep_journal, lock as sweep_lock

from helpers import write_fake_bench

pytestmark = pytest.mark.skipif(shutil.which("mpirun") is None,
                                reason="Open MPI (mpirun) not installed; run make setup")

SIZES = (1, 2, 4, 8)
METHODS = ((6, 0), (1, 0))          # binomial, linear
LAUNCHES = 2
WAIT_S = 90                         # bound of every wait for the running sweep


@pytest.fixture
def fake_bench(tmp_path):
    return write_fake_bench(tmp_path / "fake_bench.sh")


def sweep_args(out, bench, mode="per-method"):
    return ["sweep", "--collective", "bcast", "--out", str(out), "--bench", str(bench),
            "--comm-sizes", "2", "--algorithms", "binomial:0,linear", "--no-baseline",
            "--msg-sizes", ",".join(map(str, SIZES)), "--launches", str(LAUNCHES),
            "--timeout", "60", "--progress-interval", "1000", "--mode", mode]


def start(out, bench, tmp_path, sleep="0.4", mode="per-method"):
    """The first sweep, as a process of its own (its own session, so cleanup can end its
    mpirun too)."""
    log = open(tmp_path / "first.log", "w")
    proc = subprocess.Popen([sys.executable, "-m", "collsel.cli", *sweep_args(out, bench, mode)],
                            stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
                            env={**os.environ, "FAKE_BENCH_SLEEP": sleep})
    log.close()
    return proc


def data_lines(path):
    try:
        with open(path) as f:
            return sum(1 for line in f if line.startswith("bcast,"))
    except FileNotFoundError:
        return 0


def wait_until_measuring(proc, out):
    """Until the sweep holds the lock (its PID in TABLE.lock) and has journalled a launch."""
    deadline = time.monotonic() + WAIT_S
    lock_file = sweep_lock.lock_path(str(out))
    while time.monotonic() < deadline:
        assert proc.poll() is None, "the first sweep ended before it was raced"
        try:
            with open(lock_file) as f:
                holder = f.read()
        except FileNotFoundError:
            holder = ""
        if holder.startswith(f"{proc.pid}\n") and data_lines(
                sweep_journal.journal_path(str(out))) >= 1:
            return
        time.sleep(0.05)
    pytest.fail("the first sweep did not start measuring in time")


def refused(capsys, args, first, out):
    """Run a second sweep in-process; it must exit 2 with one line naming the first sweep's
    PID, without waiting for it: the first still runs and holds the lock when it returns (a
    behaviour, not a wall-clock bound)."""
    capsys.readouterr()
    status = cli.main(args)
    err = capsys.readouterr().err
    pid = first.pid
    lines = err.strip().splitlines()
    assert status == 2, err
    assert len(lines) == 1, err
    assert lines[0].startswith("collsel: error: ") and "is being written by another collsel " \
        f"sweep (PID {pid}: collsel sweep --collective bcast" in lines[0], err
    assert lines[0].endswith("wait for it or stop it"), err
    assert first.poll() is None, "refused only once the first sweep had ended"
    with open(sweep_lock.lock_path(str(out))) as f:
        assert f.read().startswith(f"{pid}\n"), "refused only once the lock was let go"
    return lines[0]


def stop(proc):
    if proc.poll() is None:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    proc.wait(timeout=30)


def check_complete(out, tmp_path, capsys):
    """The table and journal read back with collsel's own readers: every point once, every
    (point, launch) once, and `collsel build` works on the table."""
    want = {(2, m, a, s) for m in SIZES for a, s in METHODS}
    table = tbl.read_table(str(out))
    points = list(zip(table.comm_size.tolist(), table.msg_size.tolist(),
                      table.algorithm.tolist(), table.segsize.tolist()))
    assert len(points) == len(set(points)), "duplicated points in the table"
    assert set(points) == want
    tbl.check_duplicates(table)
    meta, rows, dropped, _ = sweep_journal.load_existing(
        sweep_journal.journal_path(str(out)), sweep_journal.JOURNAL_COLUMNS, "bcast")
    assert dropped == b""
    launches = [sweep_journal.point_key(r) + (r["launch"],) for r in rows]
    assert len(launches) == len(set(launches)), "duplicated (point, launch) rows in the journal"
    assert set(launches) == {k + (i,) for k in want for i in range(1, LAUNCHES + 1)}
    capsys.readouterr()
    assert cli.main(["build", str(out), "--collective", "bcast",
                     "--out", str(tmp_path / "built")]) == 0, capsys.readouterr().err
    assert (tmp_path / "built" / "tree.json").is_file()
    return table


@pytest.mark.slow
def test_second_sweeps_are_refused_while_one_runs(tmp_path, fake_bench, capsys):
    out = tmp_path / "bcast.csv"
    first = start(out, fake_bench, tmp_path)
    try:
        wait_until_measuring(first, out)
        args = sweep_args(out, fake_bench)
        # The same sweep again, --resume (also with other options: the lock comes before any
        # check of the table), and --force: all refused, naming the first.
        message = refused(capsys, args, first, out)
        assert message.startswith(f"collsel: error: {out} is being written")
        refused(capsys, args + ["--resume"], first, out)
        refused(capsys, args + ["--resume", "--time-cap", "0.5"], first, out)
        refused(capsys, args + ["--force"], first, out)
        # The dry run only reads: it runs, and says the table is being written.
        capsys.readouterr()
        assert cli.main(args + ["--dry-run", "--resume"]) == 0
        printed = capsys.readouterr().out.splitlines()
        assert printed[0].startswith("# note: ") and f"(PID {first.pid}:" in printed[0]
        assert first.poll() is None, "the first sweep ended before the race was over"
        assert first.wait(timeout=WAIT_S) == 0, (tmp_path / "first.log").read_text()
    finally:
        stop(first)
    check_complete(out, tmp_path, capsys)
    meta = tbl.read_table(str(out)).sources[0].metadata
    assert "run.1.end" in meta and not any(k.startswith("run.2.") for k in meta), \
        "a refused sweep wrote into the table"
    assert not os.path.exists(sweep_lock.lock_path(str(out)))      # removed at the end
    # A refused sweep leaves nothing behind either: no lock file, table and journal untouched.
    table_bytes = out.read_bytes()
    capsys.readouterr()
    assert cli.main(sweep_args(out, fake_bench)) == 2       # exists, no --resume
    assert "--resume" in capsys.readouterr().err
    assert sorted(os.listdir(tmp_path)) == sorted(["bcast.csv", "bcast.csv.launches", "built",
                                                   "fake_bench.sh", "first.log"])
    assert out.read_bytes() == table_bytes


def test_kill_9_releases_the_lock(tmp_path, fake_bench, capsys):
    out = tmp_path / "bcast.csv"
    first = start(out, fake_bench, tmp_path)
    try:
        wait_until_measuring(first, out)
        os.kill(first.pid, signal.SIGKILL)        # the sweep only: its launch is its child
        assert first.wait(timeout=30) == -signal.SIGKILL
        # The lock file stays and still names the killed sweep; the lock went with it.
        with open(sweep_lock.lock_path(str(out))) as f:
            assert f.read().startswith(f"{first.pid}\n")
        done_before = data_lines(out)
        assert done_before < len(SIZES) * len(METHODS), "the kill came after the sweep"
        capsys.readouterr()
        start_time = time.monotonic()
        status = cli.main(sweep_args(out, fake_bench) + ["--resume"])
        err = capsys.readouterr().err
        assert status == 0, err
        assert "being written" not in err
        assert time.monotonic() - start_time < WAIT_S
    finally:
        stop(first)
    check_complete(out, tmp_path, capsys)
    # The resume took the lock file over and removed it when it ended.
    assert not os.path.exists(sweep_lock.lock_path(str(out)))


def test_lock_names_its_holder_and_removes_its_file(tmp_path):
    """The lock itself, in one process (flock locks belong to the open file, so a second
    acquire conflicts even here): the refusal names the holder; release removes the file;
    the next acquire works."""
    from collsel.errors import InputError
    table = str(tmp_path / "t.csv")
    first = sweep_lock.acquire(table, "collsel sweep --out t.csv   --first")
    with open(sweep_lock.lock_path(table)) as f:
        assert f.read() == f"{os.getpid()}\ncollsel sweep --out t.csv --first\n"
    with pytest.raises(InputError) as refusal:
        sweep_lock.acquire(table, "collsel sweep --second")
    assert str(refusal.value) == (f"{table} is being written by another collsel sweep (PID "
                                  f"{os.getpid()}: collsel sweep --out t.csv --first); wait for "
                                  "it or stop it")
    assert sweep_lock.holder_note(table).startswith(f"{table} is being written")
    # A file the holder removes while another waits for it is noticed and replaced.
    waiting = os.open(sweep_lock.lock_path(table), os.O_RDWR)
    first.release()
    assert not os.path.exists(sweep_lock.lock_path(table))
    assert sweep_lock.holder_note(table) is None
    second = sweep_lock.acquire(table, "collsel sweep --second")
    import fcntl
    fcntl.flock(waiting, fcntl.LOCK_EX | fcntl.LOCK_NB)   # the old, removed file: no lock
    os.close(waiting)
    with pytest.raises(InputError):
        sweep_lock.acquire(table, "collsel sweep --third")  # the new file is the locked one
    second.release()
    assert os.listdir(tmp_path) == []
