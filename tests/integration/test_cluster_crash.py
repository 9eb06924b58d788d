"""Tests that need the cluster's fixed names for themselves (the session cluster is taken down
first and brought back afterwards: conftest.cluster_names_free): `collsel cluster down` after an
`up` that was SIGKILLed part-way leaves no namespace, link, cgroup, daemon or file; an `up` whose
daemon does not start exits 1 naming the log, having removed everything else; SIGTERM during
`up` tears down; a CPU share holds the node's processes (agent and Slurm tasks) to its quota."""
import os
import shutil
import signal
import subprocess
import sys
import time

import pytest

from collsel.cluster import names, processes
from collsel.cluster.layout import Layout

# Outside /tmp (the nodes' slurmd have a private /tmp) and not the default directory, so `down`
# run without --state-dir has to find it through what `up` recorded.
STATE = "/var/lib/collsel/crash-test"
START_S = 60
ATTEMPTS = 5


def _up(*args, env=None):
    return subprocess.Popen([sys.executable, "-m", "collsel.cli", "cluster", "up", *args,
                             "--state-dir", STATE], stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True, env=env)


def _daemons_started(layout):
    """munged, slurmctld and at least one slurmd run (their PID files name live processes)."""
    pid = lambda path: processes.alive(processes.read_pid(path))  # noqa: E731
    slurmd = [f for f in os.listdir(layout.slurm_dir)] if os.path.isdir(layout.slurm_dir) else []
    return (pid(layout.munge_pid) and pid(layout.slurmctld_pid)
            and any(pid(os.path.join(layout.slurm_dir, f)) for f in slurmd
                    if f.startswith("slurmd-") and f.endswith(".pid")))


def _ours_in_proc(state_dir):
    """PIDs whose command line names `state_dir` (this test's own process excepted)."""
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit() and int(entry) != os.getpid():
            try:
                with open(f"/proc/{entry}/cmdline", "rb") as f:
                    cmdline = f.read().replace(b"\0", b" ").decode("utf-8", "replace")
            except OSError:
                continue
            if state_dir in cmdline and processes.alive(int(entry)):
                found.append((int(entry), cmdline))
    return found


def _leftovers():
    netns = os.listdir("/run/netns") if os.path.isdir("/run/netns") else []
    links = subprocess.run(["ip", "-o", "link", "show"], capture_output=True, text=True,
                           timeout=10).stdout
    cgroups = os.listdir("/sys/fs/cgroup/cpu")
    return {"netns": [n for n in netns if n.startswith("collsel")],
            "links": names.links_from_listing(links),
            "cgroups": [c for c in cgroups if c.startswith("collsel")],
            "processes": _ours_in_proc(STATE),
            "files": [p for p in (STATE, STATE + ".failed-logs", names.RUN_MARKER)
                      if os.path.exists(p)]}


def _kill_part_way():
    """Start `up` with a CPU share (a cgroup too) and SIGKILL it once a namespace exists and the
    daemons run; retried when `up` finished before the kill could land (it takes well under a
    second). The killed process."""
    layout = Layout(STATE)
    for _ in range(ATTEMPTS):
        up = _up("--nodes", "3", "--cpu-shares", "n2=0.5")
        deadline = time.monotonic() + START_S
        while up.poll() is None and time.monotonic() < deadline:
            if os.path.exists("/run/netns/collsel-n1") and _daemons_started(layout):
                up.send_signal(signal.SIGKILL)
                break
            time.sleep(0.002)
        up.wait(timeout=10)
        up.stderr.close()
        if up.returncode == -signal.SIGKILL:
            return up
        assert subprocess.run([sys.executable, "-m", "collsel.cli", "cluster", "down"],
                              capture_output=True, timeout=60).returncode == 0
    pytest.fail(f"`up` always finished before it could be killed ({ATTEMPTS} attempts)")


def test_down_after_a_sigkilled_up_leaves_nothing(cluster_names_free):
    _kill_part_way()
    left = _leftovers()
    # What the crash left (the test would pass vacuously otherwise).
    assert left["netns"] and left["links"] and left["processes"] and STATE in left["files"]
    assert "collsel-n2" in left["cgroups"]
    done = subprocess.run([sys.executable, "-m", "collsel.cli", "cluster", "down"],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert _leftovers() == {"netns": [], "links": [], "cgroups": [], "processes": [],
                            "files": []}


def test_up_whose_daemon_fails_exits_1_naming_its_log_and_removes_the_rest(
        cluster_names_free, tmp_path):
    fake = tmp_path / "slurmctld"          # slurmctld, unlike slurmd, sees this /tmp
    fake.write_text("#!/bin/sh\necho 'fake slurmctld: refusing to start' >&2\nexit 1\n")
    fake.chmod(0o755)
    up = _up("--nodes", "2", env={**os.environ, "PATH": f"{tmp_path}:{os.environ['PATH']}"})
    _, err = up.communicate(timeout=START_S)
    assert up.returncode == 1, err
    last = err.strip().splitlines()[-1]
    log = f"{STATE}.failed-logs/slurmctld.log"
    assert last == f"collsel: error: slurmctld did not start: see {log}"
    with open(log) as f:
        assert "fake slurmctld: refusing to start" in f.read()
    left = _leftovers()
    assert left == {"netns": [], "links": [], "cgroups": [], "processes": [],
                    "files": [f"{STATE}.failed-logs"]}
    shutil.rmtree(f"{STATE}.failed-logs")


def test_up_stopped_by_sigterm_removes_what_it_made(cluster_names_free):
    up = _up("--nodes", "3")
    deadline = time.monotonic() + START_S
    while up.poll() is None and time.monotonic() < deadline:
        if os.path.exists("/run/netns/collsel-n1"):
            up.send_signal(signal.SIGTERM)
            break
        time.sleep(0.002)
    _, err = up.communicate(timeout=START_S)
    if up.returncode == 0:
        pytest.skip("`up` finished before SIGTERM landed")
    assert up.returncode == 130, err
    assert "tearing down" in err
    assert _leftovers() == {"netns": [], "links": [], "cgroups": [], "processes": [],
                            "files": []}


def test_cpu_share_holds_agent_and_slurm_tasks_in_the_node_cgroup(cluster_names_free):
    up = _up("--nodes", "2", "--cpu-shares", "n2=0.25")
    _, err = up.communicate(timeout=START_S)
    assert up.returncode == 0, err
    group = "/sys/fs/cgroup/cpu/collsel-n2"
    with open(f"{group}/cpu.cfs_quota_us") as f:
        assert int(f.read()) == round(0.25 * os.cpu_count() * 100000)
    agent = f"{STATE}/agent"

    def cgroups(*cmd, env=None):
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=60, env=env)
        assert done.returncode == 0, done.stderr
        return done.stdout
    assert ":/collsel-n2\n" in cgroups(agent, "n2", "grep", ":cpu[,:]", "/proc/self/cgroup")
    assert "collsel" not in cgroups(agent, "n1", "grep", ":cpu[,:]", "/proc/self/cgroup")
    env = {**os.environ, "SLURM_CONF": f"{STATE}/slurm.conf"}
    assert ":/collsel-n2\n" in cgroups("srun", "-w", "n2", "grep", ":cpu[,:]",
                                       "/proc/self/cgroup", env=env)

    def throttled():
        with open(f"{group}/cpu.stat") as f:
            return int(dict(line.split() for line in f)["nr_throttled"])
    before = throttled()
    cgroups(agent, "n2", "timeout", "1", "sh", "-c", "'while :; do :; done'", "||", "true")
    assert throttled() > before          # the quota bites: n2 is a slower processor
