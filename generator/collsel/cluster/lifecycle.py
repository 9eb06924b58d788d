"""`up`, `down` and `status`: build the cluster in order (bridge, nodes, munged, slurmctld,
slurmds, Slurm idle), tear down whatever exists on any failure, and find leftovers by name."""
import os
import shutil
import time

from collsel.core.io.files import write_file
from collsel.errors import CollselError, InputError
from collsel.cluster import (cpu, launch, lock, munge, names, network, processes,
                                     slurm, state)
from collsel.cluster.layout import Layout
from collsel.cluster.system import DaemonFailed


def _require_root(action):
    if os.geteuid() != 0:
        raise CollselError(f"collsel cluster {action} needs root (network namespaces, cgroups, "
                           "daemons)")


def _leftovers():
    return network.existing_netns() + network.existing_links() + cpu.existing()


def check(layout, rec):
    """(healthy, problems, sinfo states) of the cluster `rec` describes."""
    node_names = [n["name"] for n in rec["nodes"]]
    problems = []
    missing = sorted(set(n["netns"] for n in rec["nodes"]) - set(network.existing_netns()))
    if missing:
        problems.append("missing namespaces " + ",".join(missing))
    if names.BRIDGE not in network.existing_links():
        problems.append(f"missing bridge {names.BRIDGE}")
    daemons = [("munged", layout.munge_pid), ("slurmctld", layout.slurmctld_pid)]
    daemons += [(f"slurmd {n}", layout.slurmd_pid(n)) for n in node_names]
    dead = [what for what, pid_file in daemons
            if not processes.alive(processes.read_pid(pid_file))]
    if dead:
        problems.append("not running: " + ", ".join(dead))
    states = slurm.node_states(layout)
    if not slurm.healthy(states, node_names):
        problems.append("sinfo: " + (", ".join(f"{n} {states.get(n, '?')}" for n in node_names)
                                     if states else "slurmctld does not answer"))
    return not problems, problems, states


def up(config, state_dir, progress=lambda line: None):
    """Bring the cluster `config` (config.desired()) up at `state_dir`; the loaded Cluster.
    Idempotent: the same configuration already up and healthy is left as it is."""
    _require_root("up")
    with lock.held(progress):
        return _up(config, state_dir, progress)


def _up(config, state_dir, progress):
    layout = Layout(state_dir)
    rec = state.read(layout.root)
    if rec is not None:
        if (rec["nodes"], rec["link"]) != (config["nodes"], config["link"]):
            raise InputError(f"an emulated cluster with another configuration is up at "
                             f"{layout.root}: run `collsel cluster down` first")
        healthy, problems, _ = check(layout, rec)
        if not healthy:
            raise CollselError(f"the emulated cluster at {layout.root} is up but unhealthy ("
                               f"{'; '.join(problems)}): run `collsel cluster down` first")
        progress(f"already up and healthy at {layout.root} ({len(rec['nodes'])} nodes)")
        return state.load(layout.root)
    leftovers = _leftovers()
    if leftovers or os.path.exists(layout.marker) or os.path.exists(names.RUN_MARKER):
        where = ", ".join(leftovers) or "a state directory without cluster.json"
        raise CollselError(f"collsel names are in use ({where}): another emulated cluster, or "
                           "what a crashed one left; run `collsel cluster down` first")
    if os.path.isdir(layout.root) and os.listdir(layout.root):
        raise InputError(f"{layout.root} is not empty and is no emulated cluster's state "
                         "directory: give another --state-dir")
    shutil.rmtree(layout.failed_logs, ignore_errors=True)
    started = time.monotonic()
    try:
        _build(config, layout, progress)
    except DaemonFailed as e:
        progress(f"failed: tearing down what was made; logs kept in {layout.failed_logs}")
        shutil.move(layout.log_dir, layout.failed_logs)
        _down(layout.root, lambda line: None, keep_failed_logs=True)
        log = os.path.join(layout.failed_logs, os.path.relpath(e.log, layout.log_dir))
        raise DaemonFailed(e.what, log) from None
    except BaseException:
        progress("failed: tearing down what was made")
        _down(layout.root, lambda line: None)
        raise
    progress(f"up in {time.monotonic() - started:.1f} s; `. {layout.env}` sets SLURM_CONF "
             "and Open MPI's launch variables")
    return state.load(layout.root)


def _build(config, layout, progress):
    nodes, node_names = config["nodes"], [n["name"] for n in config["nodes"]]
    # First of all: where the state is, so that `down` finds everything after a crash.
    os.makedirs(layout.root, mode=0o755, exist_ok=True)
    write_file(layout.marker, "collsel emulated cluster state directory\n")
    write_file(names.RUN_MARKER, layout.root + "\n")
    os.makedirs(layout.log_dir, exist_ok=True)
    env = launch.launch_env(layout)
    write_file(layout.slurm_conf, slurm.render_slurm_conf(layout, nodes))
    write_file(layout.cgroup_conf, slurm.CGROUP_CONF)
    write_file(layout.agent, launch.agent_script(node_names))
    os.chmod(layout.agent, 0o755)
    write_file(layout.hostfile, launch.hostfile(nodes))
    write_file(layout.env, launch.env_file(env))
    progress(f"state directory {layout.root}")
    network.create_bridge()
    progress(f"bridge {names.BRIDGE} {names.BRIDGE_ADDRESS}/{names.PREFIX_LEN}")
    for k, node in enumerate(nodes, 1):
        network.create_node(k, node, config["link"])
        group = cpu.create(node["name"], node["cpu_share"], node["cpus"])
        progress(f"node {node['name']}: namespace {node['netns']}, {node['address']}, tbf "
                 f"{node['rate']} each way" + (f", cpu share {node['cpu_share']:g} ({group})"
                                               if group else ""))
    munge.start(layout)
    progress(f"munged (socket {layout.munge_socket})")
    slurm.start_slurmctld(layout)
    progress(f"slurmctld as {names.CTL_HOST} on {names.BRIDGE_ADDRESS}:{slurm.SLURMCTLD_PORT}")
    for node in nodes:
        slurm.start_slurmd(layout, node)
    progress(f"slurmd on {', '.join(node_names)}")
    slurm.wait_idle(layout, node_names)
    progress(f"sinfo: {len(nodes)} nodes idle in partition {names.PARTITION}")
    state.save(layout, state.record(config, layout, env, launch.mpich_launch_args(layout)))


def _recorded_dirs(state_dir):
    dirs = [state_dir]
    try:
        with open(names.RUN_MARKER) as f:
            recorded = f.read().strip()
    except OSError:
        recorded = ""
    if recorded and recorded not in dirs:
        dirs.append(recorded)
    return dirs


def _pid_files(layout):
    files = [layout.munge_pid, layout.slurmctld_pid]
    try:
        files += [os.path.join(layout.slurm_dir, e) for e in os.listdir(layout.slurm_dir)
                  if e.startswith("slurmd-") and e.endswith(".pid")]
    except OSError:
        pass
    return files


def down(state_dir, progress=lambda line: None, keep_failed_logs=False):
    """Stop every daemon and process of the cluster, delete its namespaces, links and cgroups and
    its state directory (and the logs a failed `up` kept, unless `keep_failed_logs`); also what a
    crashed `up` left. CollselError if anything remains."""
    _require_root("down")
    with lock.held(progress):
        _down(state_dir, progress, keep_failed_logs)


def _down(state_dir, progress, keep_failed_logs=False):
    dirs = _recorded_dirs(os.path.abspath(state_dir))
    layouts = [Layout(d) for d in dirs]
    pid_files = [p for lay in layouts for p in _pid_files(lay)]
    pids = processes.find(dirs, pid_files)
    pids = sorted(set(pids) | {p for g in cpu.existing() for p in cpu.members(g)})
    if pids:
        progress(f"stopping {len(pids)} processes")
    left = processes.stop(pids)
    gone = network.existing_netns() + network.existing_links() + cpu.existing()
    remaining = network.remove_all() + cpu.remove_all()
    if gone:
        progress(f"removed {', '.join(gone)}")
    for lay in layouts:
        if os.path.exists(lay.marker):
            shutil.rmtree(lay.root, ignore_errors=True)
            progress(f"removed {lay.root}")
            if os.path.exists(lay.root):
                remaining.append(lay.root)
        if not keep_failed_logs and os.path.isdir(lay.failed_logs):
            shutil.rmtree(lay.failed_logs, ignore_errors=True)
    try:
        os.unlink(names.RUN_MARKER)
    except FileNotFoundError:
        pass
    left = [p for p in left if processes.alive(p)]
    if left or remaining:
        raise CollselError("could not remove " + ", ".join(
            [f"PID {p}" for p in left] + remaining))
    if not (pids or gone):
        progress("nothing was up")


def status(state_dir):
    """(healthy, lines to print)."""
    layout = Layout(state_dir)
    rec = state.read(layout.root)
    if rec is None:
        leftovers = _leftovers()
        elsewhere = _recorded_dirs(layout.root)[1:]
        return False, [f"no emulated cluster is up at {layout.root}"] + (
            [f"one was brought up at {elsewhere[0]} (--state-dir {elsewhere[0]})"]
            if elsewhere else []) + (
            [f"leftovers: {', '.join(leftovers)} (collsel cluster down removes them)"]
            if leftovers and not elsewhere else [])
    healthy, problems, states = check(layout, rec)
    lines = [f"emulated cluster at {layout.root}: {'healthy' if healthy else 'UNHEALTHY'}",
             f"bridge {names.BRIDGE} {names.BRIDGE_ADDRESS}/{names.PREFIX_LEN}, link "
             f"{rec['link']['qdisc']} burst {rec['link']['burst']} latency "
             f"{rec['link']['latency']}"]
    for n in rec["nodes"]:
        pid = processes.read_pid(layout.slurmd_pid(n["name"]))
        lines.append(f"  {n['name']}  {n['address']}  {n['rate']:>8} each way  cpu share "
                     f"{n['cpu_share']:g}  slurmd {'alive' if processes.alive(pid) else 'DEAD'}"
                     f"  sinfo {states.get(n['name'], '?')}")
    for what, pid_file in (("munged", layout.munge_pid), ("slurmctld", layout.slurmctld_pid)):
        pid = processes.read_pid(pid_file)
        lines.append(f"  {what}: {'alive, PID ' + str(pid) if processes.alive(pid) else 'DEAD'}")
    lines += [f"  problem: {p}" for p in problems]
    lines.append(f"  use: . {layout.env}; mpirun --hostfile {layout.hostfile} ...; "
                 f"srun -p {names.PARTITION} ...")
    return healthy, lines
