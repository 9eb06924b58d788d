"""Background load at named levels, made by someone else than the benchmark (sweep
--load-levels, issue 19): a generator turns a level into the processes that make the load; the
sweep starts them before a launch, waits for the load to settle, and stops them after it, so
every launch runs under one known level and the levels interleave launch by launch.

The level is experiment control only: a decision may use what the probe sees at run time
(probe_us, measured by the benchmark in the same launch), never the level's name.

Generators (GENERATORS; `offered` says what each level offers, recorded in the table):
  stress-cpu     local: stress-ng CPU workers demanding 0.5 / 1 / 2 x the machine's cores
  stress-memory  local: stress-ng `stream` workers (memory bandwidth): 1, cores, 2 x cores
  iperf3         emulated cluster: TCP streams between the nodes' namespaces, node k to node
                 k + 1 (a ring), each offered 10 / 40 / 80 % of the sending node's link rate
                 (iperf3 -b, -t 0: until stopped); servers first, then clients (designed;
                 not yet run on the cluster)
  slurm-mpi      emulated cluster: another Slurm job (srun outside the sweep's allocation), one
                 rank per node, back-to-back bcasts of 4 KiB / 64 KiB / 1 MiB (the benchmark
                 itself as the traffic program; unpaced, the traffic rises with the size;
                 designed; not yet run)
`off` runs nothing. A level's processes run in their own sessions and die with the sweep
(PR_SET_PDEATHSIG); stopping one is SIGTERM to its process group, then SIGKILL.
"""
import shlex
import shutil
import subprocess
import tempfile
import time
from contextlib import contextmanager
from dataclasses import dataclass

from collsel.errors import CollselError, InputError
from collsel.sources.measure import launchers, supervise

LEVELS = ("off", "low", "medium", "high")
OFF = "off"
SETTLE_S = 1.0          # after starting a level, before the launch: the load is established
STAGE_GAP_S = 0.5       # between stages (iperf3: servers listen before clients connect)


@dataclass(frozen=True)
class Level:
    """One level: stages of commands (argv tuples) started in order, and what it offers."""
    name: str
    stages: tuple = ()
    offered: str = "nothing"

    @property
    def commands(self):
        return [argv for stage in self.stages for argv in stage]


def parse_levels(text):
    """The levels of --load-levels (comma-separated, each once, from LEVELS), in the given
    order (the order of their launches within a round)."""
    names = [w.strip() for w in str(text).split(",") if w.strip()]
    if not names:
        raise InputError("--load-levels: empty list (e.g. off,low,medium,high)")
    for name in names:
        if name not in LEVELS:
            raise InputError(f"--load-levels: unknown level {name!r} (known: "
                             f"{', '.join(LEVELS)})")
    if len(set(names)) != len(names):
        raise InputError(f"--load-levels {text}: a level is listed twice")
    return names


class Generator:
    """Levels by name; `running(level)` makes the load for the duration of a with-block."""
    name = "?"
    summary = "?"           # what kind of load, for `describe`
    program = None          # the program every level runs (checked by `check`)
    where = "local"         # or "cluster": needs --cluster

    def level(self, name):
        if name == OFF:
            return Level(OFF)
        return self._level(name)

    def _level(self, name):
        raise NotImplementedError

    def describe(self):
        """The table's `# load=` value: what makes the load and what each level offers."""
        levels = "; ".join(f"{n}: {self.level(n).offered}" for n in LEVELS)
        return (f"{self.name} ({self.summary}); {levels}; started {SETTLE_S:g} s before each "
                "launch and stopped after it")

    def commands_text(self, name):
        """Every command of a level as shell lines (for --dry-run and the metadata)."""
        return [shlex.join(argv) for argv in self.level(name).commands]

    def check(self):
        if self.program and shutil.which(self.program) is None:
            raise InputError(f"--load {self.name} needs '{self.program}' on PATH (Debian: "
                             f"apt-get install {self.program}, or make setup)")

    @contextmanager
    def running(self, name, settle_s=SETTLE_S):
        level = self.level(name)
        procs = []
        try:
            for i, stage in enumerate(level.stages):
                if i:
                    time.sleep(STAGE_GAP_S)
                procs += [_start(argv) for argv in stage]
            if procs:
                time.sleep(settle_s)
                _check_alive(level, procs)
            yield level
        finally:
            for proc, _ in reversed(procs):
                supervise.kill(proc)
            for _, err in procs:
                err.close()


def _start(argv):
    """One load process in its own session, dying with the sweep; its stderr kept for a
    failure message."""
    err = tempfile.TemporaryFile()
    try:
        proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                stderr=err, start_new_session=True,
                                preexec_fn=supervise.die_with_parent())
    except OSError as e:
        err.close()
        raise CollselError(f"load: cannot start {shlex.join(argv)}: {e.strerror or e}") from None
    return proc, err


def _check_alive(level, procs):
    """A load process that already ended (bad arguments, missing peer) makes no load: stop."""
    for proc, err in procs:
        if proc.poll() is not None:
            raise CollselError(f"load level {level.name}: {shlex.join(proc.args)} ended with "
                               f"status {proc.returncode} before the launch: "
                               f"{supervise.stderr_tail(err)}")


class StressCpu(Generator):
    """CPU demand of 0.5, 1 and 2 times the machine's cores: `cores` workers half busy, `cores`
    workers fully busy, 2 x `cores` workers fully busy."""
    name = "stress-cpu"
    program = "stress-ng"
    summary = "local CPU interference: stress-ng --cpu"
    DEMAND = {"low": (1, 50), "medium": (1, 100), "high": (2, 100)}   # (workers/core, % busy)

    def __init__(self, cores=None):
        self.cores = cores or launchers.cores()

    def _level(self, name):
        per_core, busy = self.DEMAND[name]
        workers = per_core * self.cores
        argv = ("stress-ng", "--cpu", str(workers), "--cpu-load", str(busy), "--quiet")
        return Level(name, ((argv,),), f"{workers} CPU workers busy {busy} % each "
                     f"({per_core * busy / 100:g} x the {self.cores} cores)")


class StressMemory(Generator):
    name = "stress-memory"
    program = "stress-ng"
    summary = "local memory-bandwidth interference: stress-ng --stream"

    def __init__(self, cores=None):
        self.cores = cores or launchers.cores()

    def _level(self, name):
        workers = {"low": 1, "medium": self.cores, "high": 2 * self.cores}[name]
        argv = ("stress-ng", "--stream", str(workers), "--quiet")
        return Level(name, ((argv,),), f"{workers} stream (memory bandwidth) workers")


class Iperf3(Generator):
    """TCP streams between the emulated cluster's nodes (collsel.cluster): node k sends
    to node k + 1 (mod N), at a share of node k's link rate; each node runs one server."""
    name = "iperf3"
    program = "iperf3"
    where = "cluster"
    summary = "network load on the emulated cluster: iperf3 TCP streams, a ring of nodes"
    SHARE = {"low": 0.10, "medium": 0.40, "high": 0.80}
    PORT = 5301

    def __init__(self, cluster):
        self.cluster = cluster

    def _level(self, name):
        nodes = self.cluster.nodes
        if len(nodes) < 2:
            raise InputError("--load iperf3 needs an emulated cluster of 2 nodes or more")
        share = self.SHARE[name]
        servers = tuple(("ip", "netns", "exec", n.netns, "iperf3", "--server", "--port",
                         str(self.PORT)) for n in nodes)
        clients = tuple(("ip", "netns", "exec", n.netns, "iperf3", "--client",
                         nodes[(i + 1) % len(nodes)].address, "--port", str(self.PORT),
                         "--bitrate", str(int(share * n.rate_bits)), "--time", "0")
                        for i, n in enumerate(nodes))
        return Level(name, (servers, clients),
                     f"{len(nodes)} TCP streams n_k -> n_k+1, each {share:.0%} of the sender's "
                     "link rate")


class SlurmMpi(Generator):
    """Another job through the emulated Slurm: back-to-back bcasts over every node (one rank
    each), the benchmark as the traffic program, for as long as the level lasts."""
    name = "slurm-mpi"
    program = "srun"
    where = "cluster"
    summary = "network load on the emulated cluster: another Slurm job of back-to-back bcasts"
    SIZE = {"low": 4096, "medium": 65536, "high": 1 << 20}

    def __init__(self, cluster, bench_path):
        self.cluster = cluster
        self.bench_path = bench_path

    def _level(self, name):
        nodes = len(self.cluster.nodes)
        size = self.SIZE[name]
        argv = ("env", *(f"{k}={v}" for k, v in sorted(self.cluster.launch_env.items())),
                "srun", "--partition", self.cluster.partition, "--nodes", str(nodes),
                "--ntasks-per-node", "1", "--mpi=pmix", "--cpu-bind=none",
                "--job-name", "collsel-load", self.bench_path, "--collective", "bcast",
                "--sizes", str(size), "--min-reps", "100000000", "--max-reps", "100000000",
                "--time-cap", "1000000", "--warmup", "0")
        return Level(name, ((argv,),), f"a {nodes}-node job of back-to-back {size}-byte bcasts")


GENERATORS = ("stress-cpu", "stress-memory", "iperf3", "slurm-mpi")
SCHEDULER_COLUMN = "cluster_load"   # the scheduler's view beside probe_us (issue 19 item 5)


class SchedulerView:
    """The scheduler's view of the load (the paper's figure 1b): how many of the emulated
    cluster's nodes its Slurm shows allocated to running jobs other than the sweep's own
    (`squeue -t R`, each job's node count, summed and capped at the cluster's size). It sees
    jobs, not traffic: iperf3 streams started outside Slurm leave it at 0."""

    def __init__(self, cluster):
        self.cluster = cluster

    def __call__(self):
        import os
        env = {**os.environ, **{k: str(v) for k, v in self.cluster.launch_env.items()}}
        own = os.environ.get("SLURM_JOB_ID", "")
        try:
            out = subprocess.run(["squeue", "--noheader", "--states", "R", "--format", "%i %D"],
                                 env=env, capture_output=True, text=True, timeout=10)
        except (OSError, subprocess.TimeoutExpired) as e:
            raise CollselError(f"cluster_load: squeue failed: {e}") from None
        if out.returncode != 0:
            raise CollselError(f"cluster_load: squeue exited {out.returncode}: "
                               f"{out.stderr.strip()[:200]}")
        busy = sum(int(n) for job, n in (line.split() for line in out.stdout.splitlines()
                                          if line.strip()) if job != own)
        return min(busy, len(self.cluster.nodes))


def make(name, cluster=None, bench_path=None, cores=None):
    """The generator `name` (GENERATORS); the cluster ones need the emulated cluster."""
    if name == "stress-cpu":
        return StressCpu(cores)
    if name == "stress-memory":
        return StressMemory(cores)
    if name in ("iperf3", "slurm-mpi"):
        if cluster is None:
            raise InputError(f"--load {name} makes traffic between the emulated cluster's "
                             "nodes: give --cluster (or a local generator: stress-cpu, "
                             "stress-memory)")
        return Iperf3(cluster) if name == "iperf3" else SlurmMpi(cluster, bench_path)
    raise InputError(f"--load: unknown generator {name!r} (known: {', '.join(GENERATORS)})")
