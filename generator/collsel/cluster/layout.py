"""Where each file of a cluster lives inside its state directory."""
import os


class Layout:
    """Paths inside one state directory (kept outside /tmp: every node gets a private /tmp)."""

    def __init__(self, state_dir):
        self.root = os.path.abspath(state_dir)
        j = lambda *p: os.path.join(self.root, *p)  # noqa: E731
        self.marker = j(".collsel-cluster")          # `down` removes only directories holding it
        self.cluster_json = j("cluster.json")
        self.hostfile = j("hostfile")
        self.agent = j("agent")
        self.env = j("env")
        self.slurm_conf = j("slurm.conf")
        self.cgroup_conf = j("cgroup.conf")
        self.munge_dir = j("munge")
        self.munge_key = j("munge", "munge.key")
        self.munge_socket = j("munge", "munge.socket")
        self.munge_pid = j("munge", "munged.pid")
        self.munge_seed = j("munge", "munged.seed")
        self.log_dir = j("log")
        self.munge_log = j("log", "munged.log")
        self.slurmctld_log = j("log", "slurmctld.log")
        self.slurm_dir = j("slurm")
        self.slurmctld_state = j("slurm", "ctld")
        self.slurmctld_pid = j("slurm", "slurmctld.pid")
        self.tmp_dir = j("tmp")
        # The logs of an `up` that failed, kept beside the state directory it removed.
        self.failed_logs = self.root + ".failed-logs"

    def slurmd_log(self, node):
        return os.path.join(self.log_dir, f"slurmd-{node}.log")

    def slurmd_pid(self, node):
        return os.path.join(self.slurm_dir, f"slurmd-{node}.pid")

    def slurmd_spool(self, node):
        return os.path.join(self.slurm_dir, f"spool-{node}")

    def node_tmp(self, node):
        return os.path.join(self.tmp_dir, node)

    def pid_files(self, node_names):
        return [self.munge_pid, self.slurmctld_pid] + [self.slurmd_pid(n) for n in node_names]
