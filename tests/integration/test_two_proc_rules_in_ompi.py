"""A rules file from trees that pick two_proc in their P = 2 cell (which spans P = 3) runs on
Debian's Open MPI 4.1.4 at P = 3: the file defers there (rule algorithm 0, core.mpi.fallbacks), so
MPI_Alltoall and MPI_Allgather run Open MPI's fixed decision and give correct results. Before
the rule, the file forced two_proc at P = 3 and the job aborted with
MPI_ERR_UNSUPPORTED_OPERATION; the control launch (the same file with two_proc written back
into its P = 3 blocks) shows it still does, so the passing launch is the file's doing.
Three small launches (P = 3, 3, 2) of two_proc_check.c; the fast checks of every emitter:
tests/unit/sinks/emit/test_emit_refused.py."""
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
PROGRAM = Path(__file__).resolve().parent / "two_proc_check.c"
MPIRUN, MPICC = "mpirun.openmpi", "mpicc.openmpi"
TWO_PROC = {"alltoall": 5, "allgather": 6}
SIZES = (64, 65536)

pytestmark = pytest.mark.skipif(shutil.which(MPIRUN) is None or shutil.which(MPICC) is None,
                                reason="Debian's Open MPI (mpirun.openmpi, mpicc.openmpi) not "
                                       "installed")


def collsel(*args):
    r = subprocess.run(["collsel", *map(str, args)], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, f"collsel {' '.join(map(str, args))}: {r.stderr}"
    return r.stdout


def two_proc_at_3(text):
    """The rules file with each collective's P = 3 block forcing its two_proc again, as the
    file emitted before the rule did (its P <= 3 block)."""
    out, collective, in_block = [], None, False
    for line in text.splitlines():
        header = re.match(r"\d+  # (\w+): ", line)
        collective = header.group(1) if header else collective
        if in_block:
            assert line.startswith("0 0 0 0  # size >= 0: defer"), line
            line = f"0 {TWO_PROC[collective]} 0 0"
        in_block = line.startswith("3 1  # P 3..3: 1 message rule(s)")
        out.append(line)
    forced = "\n".join(out) + "\n"
    assert sum(f"\n0 {two} 0 0\n" in forced for two in TWO_PROC.values()) == 2, forced
    return forced


def launch(exe, rules, comm_size):
    cmd = ["timeout", "120", MPIRUN, "--allow-run-as-root", "--oversubscribe",
           "--mca", "mpi_yield_when_idle", "1", "--mca", "coll_tuned_use_dynamic_rules", "1",
           "--mca", "coll_tuned_dynamic_rules_filename", str(rules),
           "-np", str(comm_size), str(exe), *map(str, SIZES)]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=150)


@pytest.fixture(scope="module")
def rules_and_program(tmp_path_factory):
    d = tmp_path_factory.mktemp("two_proc")
    sys.path.insert(0, str(REPO / "tests" / "unit" / "sinks" / "emit"))
    from test_emit_refused import two_proc_table
    trees = []
    for coll, two in TWO_PROC.items():
        table = two_proc_table(d / f"{coll}.csv", coll, two, 2)
        collsel("build", table, "--collective", coll, "--out", d / coll)
        trees.append(d / coll / "tree.json")
        for p, alg in ((2, two), (3, 0)):     # what the file must decide, as query does
            assert collsel("query", trees[-1], "--ids", "--comm-size", p, "--msg-size",
                           SIZES[0]) == f"{alg} 0 0\n"
    rules = d / "rules.conf"
    collsel("emit", *trees, "--target", "ompi-rules", "--out", rules)
    exe = d / "two_proc_check"
    r = subprocess.run([MPICC, "-O2", "-std=c99", "-Wall", "-Wextra", "-Werror", str(PROGRAM),
                        "-o", str(exe)], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    return rules, exe


def test_the_rules_file_runs_at_p_3_and_two_proc_at_p_3_would_abort(rules_and_program):
    rules, exe = rules_and_program
    text = rules.read_text()
    ok = [f"check {c} m={m} ok" for m in SIZES for c in ("alltoall", "allgather")]
    for p in (3, 2):
        r = launch(exe, rules, p)
        assert r.returncode == 0, f"P={p}: exit {r.returncode}\n{r.stderr[-2000:]}"
        assert r.stdout.splitlines() == ok, r.stdout
    control = rules.parent / "forced.conf"
    control.write_text(two_proc_at_3(text))
    r = launch(exe, control, 3)
    # the program's own line (mpirun's abort message can be lost under load)
    failed = re.search(r"^check alltoall m=64 failed: (\S+)", r.stdout, re.M)
    assert r.returncode == 7 and failed, f"exit {r.returncode}\n{r.stdout}\n{r.stderr[-2000:]}"
    assert failed.group(1).startswith("MPI_ERR_UNSUPPORTED_OPERATION"), r.stdout
