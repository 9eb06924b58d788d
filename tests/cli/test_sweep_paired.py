"""`collsel sweep --mode paired` with the fake benchmark (tests/helpers.py, protocol B) under real
mpirun: the table from the journal, ties and p_best, kill/resume, one writer per table, --refine,
--raw, --dry-run, --mpi mpich, old-format resumes, and the tie rule and the idle check alone.

Every wait is bounded; every subprocess has a timeout.
"""
import os
import shutil
import signal
import subprocess
import sys
import time

import numpy as np
import pytest

from collsel import cli
from collsel.core.io import csvfile
from collsel.core.maps import table as tbl
from collsel.sources.sweep import hygiene, journal as sweep_journal, lock as sweep_lock, ties

from helpers import write_fake_bench
from test_sweep_lock import refused, stop, wait_until_measuring

needs_mpirun = pytest.mark.skipif(shutil.which("mpirun") is None,
                                  reason="Open MPI (mpirun) not installed; run make setup")
WAIT_S = 120
P_VALUES, SIZES, LAUNCHES = (2, 3), (1, 2, 4), 3
METHODS = ((0, 0), (1, 0), (6, 0))          # baseline, linear, binomial (the fake: this order)


@pytest.fixture
def fake_bench(tmp_path):
    return write_fake_bench(tmp_path / "fake_bench.sh")


def paired_args(out, bench, *extra):
    return ["sweep", "--collective", "bcast", "--out", str(out), "--bench", str(bench),
            "--comm-sizes", ",".join(map(str, P_VALUES)), "--algorithms", "linear,binomial:0",
            "--msg-sizes", ",".join(map(str, SIZES)), "--launches", str(LAUNCHES),
            "--timeout", "60", "--progress-interval", "1000", *extra]


def run_sweep(args, env=None, timeout=WAIT_S):
    return subprocess.run([sys.executable, "-m", "collsel.cli", *args], capture_output=True,
                          text=True, timeout=timeout, env={**os.environ, **(env or {})})


def table_rows(path):
    doc = csvfile.read(str(path))
    return doc.metadata, [dict(zip(doc.header, fields)) for _, fields in doc.rows]


def journal_of(out):
    meta, rows, dropped, _ = sweep_journal.load_existing(
        sweep_journal.journal_path(str(out)), sweep_journal.PAIRED_JOURNAL_COLUMNS, "bcast",
        launches=True)
    assert dropped == b""
    return meta, rows


def cell_key(row):
    return tuple(int(row[c]) for c in ("comm_size", "msg_size", "algorithm", "segsize"))


@needs_mpirun
def test_paired_table_comes_from_the_journal(tmp_path, fake_bench):
    out, raw = tmp_path / "b.csv", tmp_path / "b.raw"
    r = run_sweep(paired_args(out, fake_bench, "--raw", raw))
    assert r.returncode == 0, r.stderr
    meta, rows = table_rows(out)
    assert meta["mode"] == "paired" and meta["tie_rule"].startswith("tied: 1 unless")
    assert sorted(cell_key(r) for r in rows) == sorted(
        (p, m, a, s) for p in P_VALUES for m in SIZES for a, s in METHODS)
    jmeta, jrows = journal_of(out)
    # One journal row per (P, m, method, launch); each launch one seed, recorded in its mark.
    keys = [sweep_journal.point_key(r) + (r["launch"],) for r in jrows]
    assert len(keys) == len(set(keys)) == len(rows) * LAUNCHES
    seeds = {(r["comm_size"], r["launch"]): r["seed"] for r in jrows}
    assert len(set(seeds.values())) == len(P_VALUES) * LAUNCHES
    for (p, k), seed in seeds.items():
        assert jmeta[f"launch.{p}.{k}"].startswith(f"seed={seed} status=ok sizes=3 ")
        assert "start=[loadavg" in jmeta[f"launch.{p}.{k}"]
    # time_us = mean of the launch medians; the fake's method i is i µs slower in every
    # launch, so the baseline is best, alone tied, with p_best 1.
    for row in rows:
        medians = [float(j["median_us"]) for j in jrows
                   if sweep_journal.point_key(j) == cell_key(row)]
        assert float(row["time_us"]) == pytest.approx(np.mean(medians), rel=1e-12)
        assert row["launches"] == str(LAUNCHES)
        best = row["algorithm"] == "0"
        assert row["tied"] == ("1" if best else "0")
        assert float(row["p_best"]) == (1.0 if best else 0.0)
    # --raw: one block per launch, each with the benchmark's seed and 20 repetitions per
    # (size, method).
    text = raw.read_text()
    assert text.count("#@launch=") == len(P_VALUES) * LAUNCHES
    for seed in seeds.values():
        assert f"#@seed={seed}\n" in text
    assert sum(1 for line in text.splitlines() if line.startswith("fake ")) == \
        len(P_VALUES) * LAUNCHES * len(SIZES) * len(METHODS) * 20
    # The canonical reader accepts the table.
    table = tbl.read_table(str(out))
    assert len(table) == len(rows) and table.time_us.min() > 0


@needs_mpirun
def test_dry_run_prints_the_paired_launches(tmp_path, fake_bench):
    r = run_sweep(paired_args(tmp_path / "b.csv", fake_bench, "--dry-run", "--raw",
                              tmp_path / "b.raw"))
    assert r.returncode == 0, r.stderr
    assert sorted(os.listdir(tmp_path)) == ["fake_bench.sh"]       # a dry run writes nothing
    cmds = [ln for ln in r.stdout.splitlines() if not ln.startswith("#")]
    assert len(cmds) == len(P_VALUES) * LAUNCHES
    assert all("--methods 0:0:0,1:0:0,6:0:0 " in c and "--mca coll_tuned_use_dynamic_rules 1"
               in c and "--sizes 1,2,4" in c for c in cmds)
    seeds = {c.split("--seed ")[1].split()[0] for c in cmds}
    assert len(seeds) == len(cmds)
    assert not (tmp_path / "b.csv").exists()


@pytest.mark.skipif(shutil.which("mpirun.mpich") is None, reason="MPICH not installed")
def test_mpich_dry_run(tmp_path, fake_bench):
    r = run_sweep(["sweep", "--mpi", "mpich", "--collective", "bcast", "--out",
                   str(tmp_path / "m.csv"), "--bench", str(fake_bench), "--comm-sizes", "2,4",
                   "--msg-sizes", "1", "--launches", "2", "--dry-run"])
    assert r.returncode == 0, r.stderr
    cmds = [ln for ln in r.stdout.splitlines() if not ln.startswith("#")]
    assert len(cmds) == 4
    for c in cmds:
        assert c.startswith("MPIR_CVAR_COLLECTIVE_FALLBACK=error mpirun.mpich -n ")
        assert "--mca" not in c and "--oversubscribe" not in c and "--allow-run-as-root" not in c
        assert ("--methods auto:0:0,binomial:0:0,nb:0:0,scatter_recursive_doubling_allgather:0:0,"
                "scatter_ring_allgather:0:0 ") in c            # no smp by default
    r = run_sweep(["sweep", "--mode", "per-method", "--mpi", "mpich", "--collective", "bcast",
                   "--out", str(tmp_path / "m.csv"), "--dry-run"])
    assert r.returncode == 2 and "--mpi mpich needs --mode paired" in r.stderr


@needs_mpirun
@pytest.mark.slow
def test_kill_and_resume_gives_the_same_rows(tmp_path, fake_bench):
    ref = tmp_path / "ref.csv"
    assert run_sweep(paired_args(ref, fake_bench)).returncode == 0
    _, want = table_rows(ref)

    # killed inside the third launch, its first size measured: the fake benchmark waits there
    # (FAKE_BENCH_PAUSE) until the kill, so no load decides where the kill lands
    out, gate = tmp_path / "killed.csv", tmp_path / "gate"
    gate.mkdir()
    proc = subprocess.Popen([sys.executable, "-m", "collsel.cli", *paired_args(out, fake_bench)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True,
                            env={**os.environ, "FAKE_BENCH_PAUSE": f"bcast:3:{gate}"})
    journal = sweep_journal.journal_path(str(out))
    deadline = time.monotonic() + WAIT_S
    try:
        while (not (gate / "paused").exists() and proc.poll() is None
               and time.monotonic() < deadline):
            time.sleep(0.02)
        paused = (gate / "paused").exists()
    finally:
        stop(proc)
        (gate / "release").touch()
    assert paused, "the sweep never reached its third launch"
    assert open(journal).read().count("# launch.") == 2
    # A kill while a launch's rows were written leaves rows without their mark and a cut line:
    # resume must drop both.
    with open(journal, "a") as f:
        f.write("bcast,3,1,0,0,0,3,7,10,10,9,12,1,0.5,20,1\nbcast,3,2,0,0,0,3,7,1")
    r = run_sweep(paired_args(out, fake_bench, "--resume"))
    assert r.returncode == 0, r.stderr
    meta, got = table_rows(out)
    assert sorted(map(cell_key, got)) == sorted(map(cell_key, want))
    assert sorted(got, key=cell_key) == sorted(want, key=cell_key)   # same seeds, same numbers
    assert meta["run.2.dropped_unfinished_launch"].startswith("bcast,3,1,0,0,0,3,7,")
    _, jrows = journal_of(out)
    keys = [sweep_journal.point_key(r) + (r["launch"],) for r in jrows]
    assert len(keys) == len(set(keys)) == len(want) * LAUNCHES


@needs_mpirun
@pytest.mark.slow
def test_one_writer_per_paired_table(tmp_path, fake_bench, capsys):
    out = tmp_path / "b.csv"
    log = open(tmp_path / "first.log", "w")
    first = subprocess.Popen([sys.executable, "-m", "collsel.cli", *paired_args(out, fake_bench)],
                             stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
                             env={**os.environ, "FAKE_BENCH_SLEEP": "0.3"})
    log.close()
    try:
        wait_until_measuring(first, out)
        args = paired_args(out, fake_bench)
        refused(capsys, args, first, out)
        refused(capsys, args + ["--resume"], first, out)
        refused(capsys, args + ["--force"], first, out)
        os.kill(first.pid, signal.SIGKILL)          # the sweep only; its launch follows it
        assert first.wait(timeout=30) == -signal.SIGKILL
        capsys.readouterr()
        assert cli.main(args + ["--resume"]) == 0, capsys.readouterr().err
    finally:
        stop(first)
    assert not os.path.exists(sweep_lock.lock_path(str(out)))
    _, rows = table_rows(out)
    assert len(rows) == len(P_VALUES) * len(SIZES) * len(METHODS)


@needs_mpirun
@pytest.mark.slow
def test_refine_spends_its_budget_on_undecided_cells(tmp_path, fake_bench):
    out = tmp_path / "b.csv"
    tie = {"FAKE_BENCH_TIE": "1"}        # methods equal up to seed-dependent jitter: undecided
    # (--equivalence 0: jitter of up to 6 % is not "practically equal"; see the next test)
    r = run_sweep(paired_args(out, fake_bench, "--refine", "2", "--equivalence", "0"), env=tie)
    assert r.returncode == 0, r.stderr
    assert "refine: 0/6 cells decided, 6 undecided; spent 0 launches" in r.stderr
    meta, rows = table_rows(out)
    assert meta["run.1.refine"].startswith("0/6 cells decided, 6 undecided after 2 "
                                           "refinement launches")
    jmeta, jrows = journal_of(out)
    extra = sorted({(r["comm_size"], r["launch"]) for r in jrows if r["launch"] > LAUNCHES})
    assert extra == [(2, 4), (2, 5)]          # the P with most undecided (tie: the smaller P)
    # The table was rewritten from the journal: P=2 cells combine 5 launches.
    assert {r["launches"] for r in rows if r["comm_size"] == "2"} == {"5"}
    assert {r["launches"] for r in rows if r["comm_size"] == "3"} == {"3"}
    # Resumable: the budget spent is read back from the journal.
    r = run_sweep(paired_args(out, fake_bench, "--resume", "--refine", "2", "--equivalence", "0"),
                  env=tie)
    assert r.returncode == 0, r.stderr
    assert "spent 2 launches" in r.stderr
    assert len(journal_of(out)[1]) == len(jrows)
    r = run_sweep(paired_args(out, fake_bench, "--resume", "--refine", "3", "--equivalence", "0"),
                  env=tie)
    assert r.returncode == 0, r.stderr
    assert len(journal_of(out)[1]) == len(jrows) + len(SIZES) * len(METHODS)


@needs_mpirun
@pytest.mark.slow
def test_refine_leaves_practically_equal_methods_alone(tmp_path, fake_bench):
    """Methods whose paired intervals lie within +-equivalence of the best are resolved: no
    launch is spent on them (two segment sizes a small message never reaches stay tied for
    ever, and would otherwise eat the whole budget)."""
    out = tmp_path / "b.csv"
    r = run_sweep(paired_args(out, fake_bench, "--refine", "2", "--equivalence", "50"),
                  env={"FAKE_BENCH_TIE": "1"})
    assert r.returncode == 0, r.stderr
    assert "refine: 6/6 cells decided, 0 undecided" in r.stderr
    assert not [r for r in journal_of(out)[1] if r["launch"] > LAUNCHES]


@needs_mpirun
@pytest.mark.slow
def test_old_format_resumes_are_one_line(tmp_path, fake_bench):
    out = tmp_path / "old.csv"
    r = run_sweep(["sweep", "--mode", "per-method", "--collective", "bcast", "--out", str(out),
                   "--bench", str(fake_bench), "--comm-sizes", "2", "--msg-sizes", "1",
                   "--algorithms", "binomial:0", "--launches", "1", "--timeout", "60"])
    assert r.returncode == 0, r.stderr
    before = out.read_bytes()
    for table in (out, tmp_path / "older.csv"):
        if table != out:        # a table from before --mode existed: no --mode in its options
            table.write_text(out.read_text().replace("--mode per-method ", ""))
            shutil.copy(sweep_journal.journal_path(str(out)),
                        sweep_journal.journal_path(str(table)))
        r = run_sweep(["sweep", "--collective", "bcast", "--out", str(table), "--bench",
                       str(fake_bench), "--comm-sizes", "2", "--msg-sizes", "1", "--algorithms",
                       "binomial:0", "--launches", "1", "--timeout", "60", "--resume"])
        lines = r.stderr.strip().splitlines()
        assert r.returncode == 2 and len(lines) == 1, r.stderr
        assert f"{table} was written by a per-method sweep (--mode per-method); resume it " \
            "with --mode per-method" in lines[0]
    assert out.read_bytes() == before
    # A paired table whose journal has the old header: one line naming the journal.
    new = tmp_path / "new.csv"
    args = paired_args(new, fake_bench)
    assert run_sweep(args).returncode == 0
    shutil.copy(sweep_journal.journal_path(str(out)), sweep_journal.journal_path(str(new)))
    r = run_sweep(args + ["--resume"])
    lines = r.stderr.strip().splitlines()
    assert r.returncode == 2 and len(lines) == 1 and "not written by this version" in lines[0]


def test_tie_rule_uses_the_pairing():
    """A launch effect far larger than the methods' difference: paired, the consistently 3 %
    slower method is not tied; with the launches shuffled per method (no pairing) it would be."""
    rng = np.random.default_rng(3)
    level = rng.uniform(50, 150, size=6)                    # per-launch level
    medians = np.column_stack([level, level * 1.03])
    cis = np.full_like(medians, 1.0)
    best, tied, p_best = ties.verdict(medians, cis, seed=1)
    assert best == 0 and tied.tolist() == [1, 0]
    assert p_best.sum() == pytest.approx(1.0)
    unpaired = np.column_stack([level, rng.permutation(level) * 1.03])
    assert ties.verdict(unpaired, cis, seed=1)[1].tolist() == [1, 1]
    # One launch: the within-launch CIs decide.
    one = np.array([[10.0, 10.5, 13.0]])
    best, tied, p_best = ties.verdict(one, np.array([[0.3, 0.3, 0.3]]), seed=1)
    assert tied.tolist() == [1, 1, 0] and p_best is None
    # Seeded: the same cell gives the same p_best.
    noisy = np.column_stack([level, level * rng.uniform(0.97, 1.04, size=6)])
    assert ties.verdict(noisy, cis, 5)[2].tolist() == ties.verdict(noisy, cis, 5)[2].tolist()


def test_a_repeated_verdict_is_the_first_one():
    """verdict keeps what it worked out per cell (asked again after every launch): a caller
    that changes the arrays it got back does not change the next answer, a view of the same
    values (another memory layout) gets the same answer, other values or seed another."""
    rng = np.random.default_rng(4)
    medians = rng.uniform(90, 110, size=(4, 3))
    cis = np.full_like(medians, 1.0)
    best, tied, p_best = ties.verdict(medians, cis, seed=2)
    first = (best, tied.tolist(), p_best.tolist())
    tied[:] = 7
    p_best[:] = -1
    again = ties.verdict(np.asfortranarray(medians), cis, seed=2)
    assert (again[0], again[1].tolist(), again[2].tolist()) == first
    changed = medians.copy()
    changed[:, first[0]] *= 2                    # the best, now twice as slow everywhere
    assert ties.verdict(changed, cis, seed=2)[0] != first[0]
    assert ties.verdict(medians, cis, seed=3)[2].tolist() != first[2]


def test_idle_check_sees_other_busy_processes_only():
    """A busy process outside the sweep's tree is listed; its own busy child is not."""
    child = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    orphan = subprocess.run(["sh", "-c", f"{sys.executable} -c 'import time\nt=time.time()\n"
                             "while time.time() < t + 20: pass' >/dev/null 2>&1 & echo $!"],
                            capture_output=True, text=True, timeout=30)
    orphan_pid = int(orphan.stdout.strip())
    try:
        time.sleep(0.3)
        busy = {pid for pid, _, _ in hygiene.busy_processes(sample_s=0.5)}
        assert orphan_pid in busy
        assert child.pid not in busy
    finally:
        child.kill()
        child.wait(timeout=10)
        os.kill(orphan_pid, signal.SIGKILL)


@needs_mpirun
def test_an_unusable_method_is_noted_and_left_out_not_a_failure(tmp_path, fake_bench):
    """A method the benchmark reports `#@unusable.M=` (its forced call returned an MPI error)
    has no rows in that cell, the journal and the table say so, the other methods and sizes are
    measured, nothing is relaunched, and --resume finds nothing to do."""
    out = tmp_path / "u.csv"
    env = {"FAKE_BENCH_UNUSABLE": "4:6:0:0"}        # binomial at m = 4, every launch
    r = run_sweep(paired_args(out, fake_bench), env=env)
    assert r.returncode == 0, r.stderr
    meta, rows = table_rows(out)
    assert sorted(cell_key(r) for r in rows) == sorted(
        (p, m, a, s) for p in P_VALUES for m in SIZES for a, s in METHODS
        if (m, a) != (4, 6))
    for p in P_VALUES:
        for k in range(1, LAUNCHES + 1):
            assert meta[f"unusable.{p}.{k}"].startswith("4:6:0:0 (method unusable")
    jmeta, jrows = journal_of(out)
    assert jmeta["unusable.2.1"] == "4:6:0:0"
    assert len(jrows) == len(rows) * LAUNCHES
    again = run_sweep(paired_args(out, fake_bench, "--resume"), env=env)
    assert again.returncode == 0, again.stderr
    assert table_rows(out)[1] == rows and len(journal_of(out)[1]) == len(jrows)
