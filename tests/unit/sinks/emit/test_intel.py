"""Intel MPI as a family: its preset catalogue, per-method forcing through I_MPI_ADJUST_<COLL>,
and --target intel-env (what Intel MPI 2021.18.1 can carry: message ranges, or P ranges)."""
import json
import os

import pytest

from collsel import cli
from collsel.core.mpi import algorithms, intel_algorithms
from collsel.core.mpi.algorithms import Method
from collsel.sources.sweep.plan import mca_settings

HEADER = "# algorithm_family=intel\ncollective,comm_size,msg_size,algorithm,segsize,time_us\n"


def run(capsys, *args):
    status = cli.main([str(a) for a in args])
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def table(path, best, collective="bcast"):
    """A table of presets 1 and 3 (and the baseline) where best(p, m) wins by a factor 2."""
    rows = []
    for p in (2, 3, 4):
        for m in (1024, 8192, 65536, 1048576):
            for alg in (0, 1, 3):
                t = (1 + m / 1024) * (1 if alg == best(p, m) else 2)
                rows.append(f"{collective},{p},{m},{alg},0,{t:g}")
    path.write_text(HEADER + "\n".join(rows) + "\n")
    return path


def tree(tmp_path, capsys, best, collective="bcast"):
    status, _, err = run(capsys, "build", table(tmp_path / "t.csv", best, collective),
                         "--collective", collective, "--out", tmp_path / "tree")
    assert status == 0, err
    return tmp_path / "tree" / "tree.json"


def test_catalogue_covers_the_14_collectives():
    intel = algorithms.registry("intel")
    assert sorted(intel) == sorted(algorithms.registry("openmpi"))
    assert max(intel["bcast"]) == 22 and max(intel["allreduce"]) == 32
    assert intel["bcast"][0] == "auto" and intel["bcast"][3] == "p3_scatter_ring_allgather"
    assert algorithms.algorithm_id("bcast", "p3_scatter_ring_allgather", "intel") == 3
    assert intel_algorithms.forcing_variable("reduce_scatter_block") == \
        "I_MPI_ADJUST_REDUCE_SCATTER_BLOCK"
    assert set(intel_algorithms.PARAMETERS) == set(intel)


def test_per_method_forcing_is_the_environment():
    assert mca_settings("bcast", Method(3, 0), "intel") == {"I_MPI_ADJUST_BCAST": 3}
    assert mca_settings("bcast", Method(0, 0), "intel") == {}     # Intel's own selection
    assert "coll_tuned_bcast_algorithm" in mca_settings("bcast", Method(3, 0))


def test_intel_env_by_message_size(tmp_path, capsys):
    path = tree(tmp_path, capsys, lambda p, m: 1 if m < 65536 else 3)
    out = tmp_path / "env.sh"
    status, _, err = run(capsys, "emit", "--target", "intel-env", path, "--out", out)
    assert status == 0, err
    lines = [x for x in out.read_text().splitlines() if x.startswith("export ")]
    # the tree cuts m between 8192 and 65536 at their geometric mean, 23170.5 -> 23171
    assert lines == ['export I_MPI_ADJUST_BCAST="1:0-23170;3:23171-2147483647"']


def test_intel_env_by_communicator_size(tmp_path, capsys):
    path = tree(tmp_path, capsys, lambda p, m: 1 if p < 4 else 3, "allreduce")
    out = tmp_path / "env.sh"
    status, _, err = run(capsys, "emit", "--target", "intel-env", path, "--out", out)
    assert status == 0, err
    assert 'export I_MPI_ADJUST_ALLREDUCE="1:0-2147483647@1-3;3:0-2147483647@4-2147483647"' \
        in out.read_text()


def test_intel_env_beyond_ends_the_p_ranges_at_above(tmp_path, capsys):
    """tree.json's `beyond`: no range past the largest measured P (4), so Intel MPI decides at
    P = 5; a tree that changes with the size cannot carry it and is refused in one line."""
    path = tree(tmp_path, capsys, lambda p, m: 1 if p < 4 else 3, "allreduce")
    doc = json.loads(path.read_text())
    path.write_text(json.dumps({**doc, "beyond": {"above": 4, "method": "defer"}}))
    out = tmp_path / "env.sh"
    status, printed, err = run(capsys, "emit", "--target", "intel-env", path, "--out", out)
    assert status == 0, err
    assert 'export I_MPI_ADJUST_ALLREDUCE="1:0-2147483647@1-3;3:0-2147483647@4-4"' \
        in out.read_text()
    assert "no range past P = 4 (tree.json `beyond`)" in printed + err
    (tmp_path / "m").mkdir()
    by_size = tree(tmp_path / "m", capsys, lambda p, m: 1 if m < 65536 else 3)
    doc = json.loads(by_size.read_text())
    by_size.write_text(json.dumps({**doc, "beyond": {"above": 4, "method": "defer"}}))
    status, _, err = run(capsys, "emit", "--target", "intel-env", by_size, "--out",
                         tmp_path / "m.sh")
    assert status == 2 and err.count("\n") == 1 and "--beyond keep" in err, err
    assert not (tmp_path / "m.sh").exists()


def test_intel_env_refuses_a_tree_of_p_and_m(tmp_path, capsys):
    path = tree(tmp_path, capsys, lambda p, m: 1 if (p < 4) == (m < 65536) else 3)
    out = tmp_path / "env.sh"
    status, _, err = run(capsys, "emit", "--target", "intel-env", path, "--out", out)
    assert status == 2 and err.count("\n") == 1, err
    assert "changes with both P and the message size" in err
    assert "drops the message ranges" in err and not out.exists()


def test_families_do_not_cross(tmp_path, capsys):
    intel = tree(tmp_path, capsys, lambda p, m: 1)
    out = tmp_path / "r.conf"
    status, _, err = run(capsys, "emit", "--target", "ompi-rules", intel, "--out", out)
    assert status == 2 and err.count("\n") == 1 and "algorithm_family intel" in err, err
    assert "--target intel-env" in err and not out.exists()
    ompi = tmp_path / "o.csv"
    ompi.write_text("collective,comm_size,msg_size,algorithm,segsize,time_us\n"
                    "bcast,2,8,6,0,1\nbcast,2,8,8,0,2\nbcast,4,65536,6,0,9\nbcast,4,65536,8,0,3\n")
    status, _, err = run(capsys, "build", ompi, "--collective", "bcast", "--out", tmp_path / "o")
    assert status == 0, err
    out = tmp_path / "env.sh"
    status, _, err = run(capsys, "emit", "--target", "intel-env", tmp_path / "o" / "tree.json",
                         "--out", out)
    assert status == 2 and err.count("\n") == 1, err
    assert "writes Intel MPI presets" in err and "algorithm_family openmpi" in err and not out.exists()


@pytest.fixture
def fake_home(tmp_path):
    home = tmp_path / "impi"
    (home / "bin").mkdir(parents=True)
    for name in ("mpicc", "mpiexec.hydra", "impi_info"):
        (home / "bin" / name).write_text("#!/bin/sh\nexit 1\n")
        os.chmod(home / "bin" / name, 0o755)
    return home


def test_sweep_intel_per_method_forces_through_the_environment(tmp_path, capsys, fake_home):
    bench = fake_home / "bin" / "mpicc"      # any executable: a dry run starts nothing
    status, out, err = run(capsys, "sweep", "--mpi", "intel", "--mpi-home", fake_home,
                           "--collective", "bcast", "--comm-sizes", "2", "--msg-sizes", "1K",
                           "--algorithms", "1,3", "--launches", "1", "--bench", bench,
                           "--mode", "per-method", "--out", tmp_path / "s.csv", "--dry-run")
    assert status == 0, err
    launches = [x for x in out.splitlines() if not x.startswith("#")]
    assert len(launches) == 3
    assert "I_MPI_ADJUST_BCAST" not in launches[0]              # the baseline: Intel's own
    assert "I_MPI_ADJUST_BCAST=1 " in launches[1] and "I_MPI_ADJUST_BCAST=3 " in launches[2]
    assert f"I_MPI_ROOT={fake_home}" in launches[1] and f"{fake_home}/bin/mpiexec.hydra -n 2" in out


def test_sweep_intel_by_size_is_its_default(tmp_path, capsys, fake_home):
    """One launch per P and launch number measures every preset, each a byte apart from m
    (reversed in even launches); the baseline keeps a launch of its own; nothing is written by
    the dry run."""
    bench = fake_home / "bin" / "mpicc"
    status, out, err = run(capsys, "sweep", "--mpi", "intel", "--mpi-home", fake_home,
                           "--collective", "bcast", "--comm-sizes", "2,4", "--msg-sizes",
                           "8,1K", "--algorithms", "1,3,7", "--launches", "2", "--bench", bench,
                           "--out", tmp_path / "s.csv", "--dry-run")
    assert status == 0, err
    launches = [x for x in out.splitlines() if not x.startswith("#")]
    assert len(launches) == 8                       # 2 launches x 2 P x (by size + baseline)
    forcing = tmp_path / "s.csv.forcing"
    assert f"I_MPI_TUNING={forcing}/P2-launch1-part1.json " in launches[0]
    assert "--sizes 8,9,10,1024,1025,1026 " in launches[0]
    assert "I_MPI_TUNING" not in launches[1] and "--sizes 8,1024 " in launches[1]
    assert f"I_MPI_TUNING={forcing}/P4-launch2-part1.json " in launches[6]
    assert "I_MPI_ADJUST_BCAST" not in out
    assert "# 8 launches, 32 of 32 point launches" in out
    assert not forcing.exists() and not (tmp_path / "s.csv").exists()


@pytest.mark.parametrize("extra, message", [
    (["--mode", "paired"], "--mpi intel --mode paired: Intel MPI reads I_MPI_ADJUST_* in "
                           "MPI_Init only"),
    (["--mpi-home", "/nonexistent"], "--mpi-home /nonexistent: no such directory"),
])
def test_sweep_intel_refusals(tmp_path, capsys, fake_home, extra, message):
    if "--mpi-home" not in extra:
        extra = [*extra, "--mpi-home", str(fake_home)]
    out = tmp_path / "s.csv"
    status, _, err = run(capsys, "sweep", "--mpi", "intel", "--collective", "bcast",
                         "--comm-sizes", "2", "--out", out, "--bench", "/bin/true", *extra,
                         "--dry-run")
    assert status == 2 and err.count("\n") == 1 and message in err, err
    assert not out.exists()


def test_by_size_is_intel_mpis_only(tmp_path, capsys):
    status, _, err = run(capsys, "sweep", "--collective", "bcast", "--mode", "by-size",
                         "--comm-sizes", "2", "--out", tmp_path / "s.csv", "--bench",
                         "/bin/true", "--dry-run")
    assert status == 2 and err.count("\n") == 1, err
    assert "--mode by-size is Intel MPI's" in err and "use --mode paired" in err


def test_tune_intel_measures_by_size(tmp_path, capsys, fake_home):
    status, out, err = run(capsys, "tune", "--mpi", "intel", "--mpi-home", fake_home,
                           "--collectives", "bcast,allreduce", "--comm-sizes", "2,3,4",
                           "--bench", fake_home / "bin" / "mpicc", "--out", tmp_path / "t",
                           "--dry-run")
    assert status == 0, err
    rows = {line.split()[0]: line.split() for line in out.splitlines()
            if line.startswith(("bcast ", "allreduce "))}
    assert rows["bcast"][1:3] == ["by-size", "23"] and rows["allreduce"][1:3] == ["by-size", "33"]
    assert rows["bcast"][5] == "1"                  # launches: no tie test to feed
    assert not (tmp_path / "t").exists()
