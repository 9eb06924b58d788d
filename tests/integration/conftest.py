"""Fixtures of the integration tests.

`cluster`: the emulated cluster (collsel cluster up --nodes 4 --rate 1gbit, default state
directory), brought up once per session after a `down` that clears what a crashed run left, and
taken down at the end of the session, also when the session fails, is interrupted or is sent
SIGTERM. The cluster's names are fixed (one cluster per machine): test sessions that use it take
turns (SESSION_LOCK), and a session takes over any cluster that is up, unless
COLLSEL_TEST_REUSE_CLUSTER=1: then a healthy cluster of the same configuration is used as it is
and left up (for a developer who has it up for other work). A test that needs the names for
itself takes `cluster_names_free` (below).
"""
import atexit
import os
import pathlib
import shutil
import signal
import subprocess
import sys

import pytest

from collsel.core.io.flock import wait_exclusive

CLUSTER_ARGS = ("--nodes", "4", "--rate", "1gbit")


def under_tmp(path):
    return os.path.realpath(path).startswith("/tmp/")


def outside_tmp(path):
    """`path`, or a directory of the same name in ~/.cache/collsel/tests when `path` is under
    /tmp (a checkout cloned there): every node of the emulated cluster has a private /tmp, so a
    program or script its tasks run must live elsewhere."""
    if not under_tmp(path):
        return path
    return pathlib.Path.home() / ".cache" / "collsel" / "tests" / pathlib.Path(path).name
CLUSTER_TIMEOUT_S = 120


def cluster_command(*args, timeout=CLUSTER_TIMEOUT_S):
    """`collsel cluster ARGS...` (its CompletedProcess; never raises on a non-zero exit)."""
    return subprocess.run([sys.executable, "-m", "collsel.cli", "cluster", *map(str, args)],
                          capture_output=True, text=True, timeout=timeout)


def _need_cluster_tools():
    if os.geteuid() != 0:
        pytest.skip("the emulated cluster needs root")
    missing = [t for t in ("ip", "tc", "munged", "slurmctld", "slurmd", "sinfo")
               if not shutil.which(t)]
    if missing:
        pytest.skip(f"the emulated cluster needs {' '.join(missing)} (make setup)")


def cluster_up():
    done = cluster_command("up", *CLUSTER_ARGS)
    assert done.returncode == 0, done.stderr
    from collsel.cluster import load
    return load()


def cluster_down():
    done = cluster_command("down")
    assert done.returncode == 0, done.stderr


# Test sessions that use the cluster run one at a time on the machine (its names are fixed, and
# one session's `down` would pull the cluster from under another's tests): the first that needs
# it holds this lock until it ends; the others wait, bounded.
SESSION_LOCK = "/run/lock/collsel-cluster-tests.lock"
SESSION_LOCK_WAIT_S = 900


class _Session:
    up = False            # this session brought the cluster up and takes it down
    reused = False        # COLLSEL_TEST_REUSE_CLUSTER: a cluster that was up is used as it is
    lock_fd = None

    def take_the_machine(self):
        if self.lock_fd is not None:
            return
        fd = os.open(SESSION_LOCK, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
        if not wait_exclusive(fd, SESSION_LOCK_WAIT_S, step_s=0.5):
            holder = os.pread(fd, 200, 0).decode(errors="replace").strip()
            os.close(fd)
            pytest.fail(f"another test session ({holder or '?'}) has held the emulated "
                        f"cluster for {SESSION_LOCK_WAIT_S} s ({SESSION_LOCK})")
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"PID {os.getpid()}\n".encode(), 0)
        self.lock_fd = fd

    def down(self):
        if self.up:
            self.up = False
            cluster_command("down")


_SESSION = _Session()
atexit.register(_SESSION.down)


def _on_sigterm(signum, frame):
    _SESSION.down()
    raise SystemExit(128 + signum)


@pytest.fixture(scope="session")
def cluster():
    """The loaded emulated cluster (collsel.cluster.Cluster) of 4 nodes."""
    _need_cluster_tools()
    _SESSION.take_the_machine()
    if os.environ.get("COLLSEL_TEST_REUSE_CLUSTER") == "1":
        done = cluster_command("up", *CLUSTER_ARGS)
        if done.returncode == 0 and "already up and healthy" in done.stderr:
            from collsel.cluster import load
            _SESSION.reused = True
            yield load()
            return
    cluster_down()
    previous = signal.signal(signal.SIGTERM, _on_sigterm)
    _SESSION.up = True
    try:
        yield cluster_up()
    finally:
        _SESSION.down()
        signal.signal(signal.SIGTERM, previous)


@pytest.fixture
def cluster_names_free():
    """The cluster's names free for the test (the session cluster, if up, is taken down), and the
    session cluster back up afterwards, at the same paths, so the order of tests does not matter."""
    _need_cluster_tools()
    _SESSION.take_the_machine()
    was_up = _SESSION.up or _SESSION.reused
    cluster_down()
    try:
        yield
    finally:
        cluster_down()
        if was_up:
            cluster_up()


# What may run beside what: `make integration` runs the other tests on two processes (--dist
# loadfile, a file's tests in one process), then the files of the emulated cluster alone, one
# process, marked `cluster` here. Its names are the machine's, and the session that brings it up
# holds SESSION_LOCK until it ends. Not beside other tests either: on a busy machine Open MPI
# 4.1.4 under `srun --mpi=pmix` (Slurm 22.05) crashes in MPI_Init, a peer's message reaching a
# rank before its PML is set up (measured 2026-11-30, 8 ranks on 4 nodes: 0/150 launches idle,
# 4/150 beside one busy loop, 10/150 beside two; mpirun --hostfile is not affected).
CLUSTER_FILES = {"test_cluster.py", "test_cluster_crash.py", "test_cluster_mpich_ppn.py",
                 "test_cluster_ompi_ppn.py", "test_cluster_sweeps.py", "test_lmo_cluster.py",
                 "test_model_fit_cluster.py", "test_tune_node_lost.py"}
CLUSTER_FIXTURES = {"cluster", "cluster_names_free"}


@pytest.hookimpl(tryfirst=True)  # before -m deselects by the mark
def pytest_collection_modifyitems(config, items):
    """The tests of CLUSTER_FILES marked `cluster`; a test of the cluster in a file the set lacks
    would run beside the others: refused."""
    for item in items:
        if item.path.name in CLUSTER_FILES:
            item.add_marker(pytest.mark.cluster)
    stray = sorted({item.path.name for item in items if CLUSTER_FIXTURES & set(item.fixturenames)
                    and item.path.name not in CLUSTER_FILES})
    if stray:
        raise pytest.UsageError(f"tests/integration/conftest.py: tests of the emulated cluster in "
                                f"{', '.join(stray)}: add the file to CLUSTER_FILES")


def pytest_xdist_node_collection_finished(node, ids):
    """The cluster's tests selected beside others, on several test processes: refused."""
    files = {pathlib.Path(nodeid.split("::")[0]).name in CLUSTER_FILES for nodeid in ids}
    if files == {True, False}:
        pytest.exit("tests/integration: the emulated cluster's tests run alone: select them with "
                    "-m cluster, the others with -m 'not cluster' (as `make integration` does)",
                    returncode=4)
