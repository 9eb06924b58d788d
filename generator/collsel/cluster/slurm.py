"""The cluster's Slurm: slurm.conf and cgroup.conf rendered into the state directory, slurmctld
in the root network namespace as host `ctl` on the bridge address, and one slurmd per node inside
the node's namespace with the node's host name and a private /tmp (the pmix plugin's
/tmp/spmix_appdir_* directories of two nodes would collide otherwise)."""
import os
import time

from collsel.cluster import cpu, names
from collsel.cluster.system import DaemonFailed, run, start_daemon

# Not Slurm's default 6817, so a Slurm the host may run is neither used nor in the way.
SLURMCTLD_PORT = 6827
SLURMD_PORT = 6818                  # inside each node's own namespace
HEALTHY_STATES = ("idle", "mixed", "allocated", "completing")


def render_slurm_conf(layout, nodes):
    """slurm.conf for `nodes` (dicts as cluster.json holds them)."""
    lines = [
        "# collsel emulated cluster (collsel cluster up): generated, do not edit",
        "ClusterName=collsel",
        f"SlurmctldHost={names.CTL_HOST}({names.BRIDGE_ADDRESS})",
        f"SlurmctldPort={SLURMCTLD_PORT}",
        f"SlurmdPort={SLURMD_PORT}",
        "SlurmUser=root",
        "SlurmdUser=root",
        "AuthType=auth/munge",
        "CredType=cred/munge",
        f"AuthInfo=socket={layout.munge_socket}",
        "ProctrackType=proctrack/linuxproc",
        "TaskPlugin=task/none",
        "SelectType=select/cons_tres",
        "SelectTypeParameters=CR_CPU",
        # As sites do: srun without --mpi starts Open MPI's ranks through PMIx (with none
        # each rank starts alone and aborts in MPI_Init).
        "MpiDefault=pmix",
        "ReturnToService=2",
        "SlurmdTimeout=30",
        "InactiveLimit=0",
        "KillWait=5",
        "JobAcctGatherType=jobacct_gather/none",
        "AccountingStorageType=accounting_storage/none",
        "JobCompType=jobcomp/none",
        f"StateSaveLocation={layout.slurmctld_state}",
        f"SlurmctldPidFile={layout.slurmctld_pid}",
        f"SlurmctldLogFile={layout.slurmctld_log}",
        f"SlurmdSpoolDir={layout.slurmd_spool('%n')}",
        f"SlurmdPidFile={layout.slurmd_pid('%n')}",
        f"SlurmdLogFile={layout.slurmd_log('%n')}",
    ]
    for node in nodes:
        lines.append(f"NodeName={node['name']} NodeAddr={node['address']} "
                     f"NodeHostname={node['name']} CPUs={node['cpus']} State=UNKNOWN")
    lines.append(f"PartitionName={names.PARTITION} Nodes={','.join(n['name'] for n in nodes)} "
                 "Default=YES MaxTime=INFINITE State=UP OverSubscribe=FORCE")
    return "\n".join(lines) + "\n"


# Without it slurmd looks for a cgroup v2 hierarchy ("No filesystem mounted on /sys/fs/cgroup").
CGROUP_CONF = "# collsel emulated cluster: generated\nCgroupPlugin=cgroup/v1\n"


def client_env(layout):
    return {**os.environ, "SLURM_CONF": layout.slurm_conf}


def start_slurmctld(layout):
    for d in (layout.slurm_dir, layout.slurmctld_state, layout.log_dir):
        os.makedirs(d, exist_ok=True)
    start_daemon(["unshare", "--uts", "sh", "-c", 'hostname "$0" && exec slurmctld -f "$1"',
                  names.CTL_HOST, layout.slurm_conf],
                 "slurmctld", layout.slurmctld_pid, layout.slurmctld_log)


def start_slurmd(layout, node):
    """slurmd for `node` in its namespace, host name and private /tmp, in its cpu cgroup if any."""
    name = node["name"]
    os.makedirs(layout.slurmd_spool(name), exist_ok=True)
    tmp = layout.node_tmp(name)
    os.makedirs(tmp, exist_ok=True)
    os.chmod(tmp, 0o1777)
    group = cpu.path(name) if node["cpu_share"] < 1.0 else ""
    # The cgroup is joined first: `ip netns exec` mounts a fresh /sys without the cgroup trees.
    join = 'if [ -n "$0" ]; then echo $$ > "$0/cgroup.procs" || exit 1; fi; exec "$@"'
    script = 'hostname "$0" && mount --bind "$1" /tmp && exec slurmd -f "$2" -N "$0"'
    start_daemon(["sh", "-c", join, group, "ip", "netns", "exec", node["netns"], "unshare",
                  "--mount", "--uts", "--propagation", "private", "sh", "-c", script, name, tmp,
                  layout.slurm_conf], f"slurmd on {name}", layout.slurmd_pid(name),
                 layout.slurmd_log(name))


def node_states(layout):
    """{node: state} from sinfo, or {} when slurmctld does not answer."""
    done = run(["sinfo", "-h", "-N", "-p", names.PARTITION, "-o", "%N %T"],
               env=client_env(layout), timeout=10, check=False)
    if done.returncode != 0:
        return {}
    states = {}
    for line in done.stdout.splitlines():
        parts = line.split()
        if len(parts) == 2:
            states[parts[0]] = parts[1].lower()
    return states


def healthy(states, node_names):
    return bool(node_names) and all(
        states.get(n, "").rstrip("*~#!%$@^-") in HEALTHY_STATES for n in node_names)


def wait_idle(layout, node_names, timeout_s=40.0):
    """Wait until sinfo shows every node idle; CollselError naming the logs otherwise."""
    deadline = time.monotonic() + timeout_s
    states = {}
    while time.monotonic() < deadline:
        states = node_states(layout)
        if node_names and all(states.get(n) == "idle" for n in node_names):
            return states
        time.sleep(0.25)
    shown = ", ".join(f"{n} {states.get(n, '?')}" for n in node_names)
    raise DaemonFailed(f"Slurm nodes not idle after {timeout_s:.0f} s ({shown})",
                       layout.slurmctld_log)
