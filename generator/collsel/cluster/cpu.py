"""Per-node CPU shares: a cgroup v1 `cpu` controller group per node whose CFS quota is the share
of the machine's CPU time (share x CPUs x period), so nodes can be processors of different
speeds. Nothing is mounted; the host's hierarchy at /sys/fs/cgroup/cpu is used as it is."""
import os

from collsel.errors import CollselError
from collsel.cluster import names

ROOT = "/sys/fs/cgroup/cpu"
PERIOD_US = 100000


def path(node_name):
    return os.path.join(ROOT, names.cgroup(node_name))


def quota_us(share, cpus):
    return max(1000, int(round(share * cpus * PERIOD_US)))


def create(node_name, share, cpus):
    """The node's cgroup with its quota; its path (None when the share is 1: no limit)."""
    if share >= 1.0:
        return None
    where = path(node_name)
    try:
        os.makedirs(where, exist_ok=True)
        with open(os.path.join(where, "cpu.cfs_period_us"), "w") as f:
            f.write(str(PERIOD_US))
        with open(os.path.join(where, "cpu.cfs_quota_us"), "w") as f:
            f.write(str(quota_us(share, cpus)))
    except OSError as e:
        raise CollselError(f"cannot set up the cpu cgroup {where}: {e.strerror or e} (the cgroup "
                           "v1 cpu controller must be mounted at /sys/fs/cgroup/cpu)") from None
    return where


def existing():
    try:
        return [os.path.join(ROOT, e) for e in names.cgroups_from_listing(os.listdir(ROOT))]
    except OSError:
        return []


def members(where):
    try:
        with open(os.path.join(where, "cgroup.procs")) as f:
            return [int(line) for line in f if line.strip()]
    except OSError:
        return []


def remove_all():
    """Remove every collsel cgroup (their processes must have been stopped); what remains."""
    for where in existing():
        try:
            os.rmdir(where)
        except OSError:
            pass
    return existing()
