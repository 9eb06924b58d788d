"""The cluster's processes: found by PID file, and by scanning /proc for any process whose command
line or launch environment names the state directory or that runs inside one of the cluster's
network namespaces (so `down` finds daemons, MPI ranks and launchers a crashed `up`, an
unfinished job or a killed test left); stopped with SIGTERM, then SIGKILL."""
import os
import signal
import time

from collsel.cluster import names

NETNS_DIR = "/run/netns"


def read_pid(path):
    try:
        with open(path) as f:
            text = f.read().strip()
    except OSError:
        return None
    return int(text) if text.isdigit() else None


def alive(pid):
    """Whether `pid` runs (a zombie does not count)."""
    if not pid:
        return False
    try:
        with open(f"/proc/{pid}/stat") as f:
            state = f.read().rpartition(")")[2].split()[0]
    except (OSError, IndexError):
        return False
    return state not in ("Z", "X")


def _proc_strings(pid, what):
    """/proc/PID/cmdline or environ as its NUL-separated strings ([] when gone or unreadable)."""
    try:
        with open(f"/proc/{pid}/{what}", "rb") as f:
            return f.read().decode("utf-8", "replace").split("\0")
    except OSError:
        return []


def _inode(path):
    try:
        return os.stat(path).st_ino
    except OSError:
        return None


def _our_netns_inodes():
    try:
        entries = os.listdir(NETNS_DIR)
    except OSError:
        return set()
    inodes = {_inode(os.path.join(NETNS_DIR, e)) for e in entries if names.ours(e)}
    return inodes - {None}


def _ancestors():
    """This process and its parents (never ours to stop, even when their command line names the
    state directory: `collsel cluster down --state-dir DIR`)."""
    pids, pid = set(), os.getpid()
    while pid > 1 and pid not in pids:
        pids.add(pid)
        try:
            with open(f"/proc/{pid}/stat") as f:
                pid = int(f.read().rpartition(")")[2].split()[1])
        except (OSError, ValueError, IndexError):
            break
    return pids


def matches(cmdline, net_inode, state_dirs, netns_inodes, environ=()):
    """Whether a process is the cluster's: its command line names a state directory (as a whole
    path component), or it was started with the cluster's launch environment (SLURM_CONF or
    Open MPI's agent in a state directory: srun, salloc, mpirun in the root namespace, which
    outlive a killed parent), or it runs inside one of the cluster's network namespaces."""
    if net_inode is not None and net_inode in netns_inodes:
        return True
    launch_vars = [entry.partition("=")[2] for entry in environ
                   if entry.startswith(("SLURM_CONF=", "OMPI_MCA_plm_rsh_agent="))]
    return any(_names_a_state_dir(text, state_dirs) for text in [cmdline] + launch_vars)


def _names_a_state_dir(cmdline, state_dirs):
    for d in state_dirs:
        d = d.rstrip("/")
        at = cmdline.find(d)
        while at >= 0:
            end = at + len(d)
            if end == len(cmdline) or cmdline[end] in "/ =:'\"":
                return True
            at = cmdline.find(d, at + 1)
    return False


def find(state_dirs, pid_files=()):
    """PIDs of the cluster's processes (excluding this one and its parents)."""
    netns_inodes = _our_netns_inodes()
    found = {p for p in map(read_pid, pid_files) if alive(p)}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            pid = int(entry)
            if matches(" ".join(_proc_strings(pid, "cmdline")), _inode(f"/proc/{pid}/ns/net"),
                       state_dirs, netns_inodes, _proc_strings(pid, "environ")):
                found.add(pid)
    return sorted(found - _ancestors())


def stop(pids, grace_s=3.0):
    """SIGTERM `pids`, SIGKILL whatever still runs after `grace_s`; PIDs that still run."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        for pid in pids:
            try:
                os.kill(pid, sig)
            except OSError:
                pass
        deadline = time.monotonic() + grace_s
        while time.monotonic() < deadline and any(alive(p) for p in pids):
            time.sleep(0.05)
        pids = [p for p in pids if alive(p)]
        if not pids:
            break
    return pids
