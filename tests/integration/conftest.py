"""Fixtures of the integration tests.

`cluster`: the emulated cluster (collsel cluster up --nodes 4 --rate 1gbit, default state
directory), brought up once per session after a `down` that clears what a crashed run left, and
taken down at the end of the session, also when the session fails, is interrupted or is sent
SIGTERM. The cluster's names are fixed (one cluster per machine), so the session takes over any
cluster that is up. A test that needs the names for itself takes `cluster_names_free` (below).
"""
import atexit
import os
import shutil
import signal
import subprocess
import sys

import pytest

CLUSTER_ARGS = ("--nodes", "4", "--rate", "1gbit")
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
    from collsel.sources.cluster import load
    return load()


def cluster_down():
    done = cluster_command("down")
    assert done.returncode == 0, done.stderr


class _Session:
    up = False

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
    """The loaded emulated cluster (collsel.sources.cluster.Cluster) of 4 nodes."""
    _need_cluster_tools()
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
    was_up = _SESSION.up
    cluster_down()
    try:
        yield
    finally:
        cluster_down()
        if was_up:
            cluster_up()
