"""How one benchmark run is started: local mpirun, mpirun --hostfile, or Slurm srun, under
Open MPI or MPICH.

Each launcher turns (P, MCA settings, benchmark argv) into (argv, extra environment), and, given
ppn, places P = nodes x ppn ranks explicitly (ppn on each of P / ppn nodes). It also says where
the ranks should land (`expected`, checked against the benchmark's `#@rank_hosts=`). On the
emulated cluster (`cluster`, collsel.cluster) the hostfile launcher uses the cluster's
hostfile and both use its launch environment (agent, TCP interfaces, SLURM_CONF). Forcing
uses Open MPI MCA parameters: `--mca` flags for mpirun (they reach remote daemons too), and
OMPI_MCA_* variables for srun (which exports the environment to the tasks). MPICH's hydra mpirun
takes `-n`, knows no `--oversubscribe`/`--mca`/`--allow-run-as-root`, and passes the environment
on; MPIR_CVAR_COLLECTIVE_FALLBACK=error makes an algorithm MPICH cannot run an error instead of a
silent fallback.
"""
import ipaddress
import os
import re
import shlex
import shutil
import subprocess

from collsel.errors import InputError
from collsel.sources.measure.placement import Expected

LAUNCHERS = ("local", "hostfile", "srun")
MPICH_ENV = {"MPIR_CVAR_COLLECTIVE_FALLBACK": "error"}
# The emulated cluster's nodes share this machine's cores: ranks unbound (two nodes' rank 0
# bound to the same core would measure the binding) and yielding when idle (busy-polling ranks
# of one node would starve another's).
SHARED_CORES_ENV = {"OMPI_MCA_hwloc_base_binding_policy": "none",
                    "OMPI_MCA_mpi_yield_when_idle": "1"}


# srun's MPI plugin (--mpi) when --srun-mpi is not given and the cluster's MpiDefault is unset
# or none: without a PMI plugin srun starts each Open MPI rank alone and it aborts in MPI_Init
# ("Local abort before MPI_INIT completed"); Debian's Open MPI 4.1 talks PMIx.
SRUN_MPI_FALLBACK = "pmix"
_PLUGIN = re.compile(r"[A-Za-z0-9_.-]{1,64}")


def srun_mpi(given, env):
    """The plugin of `srun --mpi=`: `given` (--srun-mpi), else the cluster's MpiDefault (under
    `env`, which may name the cluster's SLURM_CONF) unless it is none, else
    SRUN_MPI_FALLBACK."""
    if given is not None:
        if not _PLUGIN.fullmatch(given):
            raise InputError(f"--srun-mpi {given!r}: not a plugin name (e.g. pmix, pmi2, none; "
                             "srun --mpi=list names them)")
        return given
    default = slurm_setting("MpiDefault", env)
    return default if default and default.lower() != "none" else SRUN_MPI_FALLBACK


def slurm_setting(name, env):
    """A setting of the Slurm configuration: from its slurm.conf ($SLURM_CONF, else
    /etc/slurm/slurm.conf; keys are case-blind there), else from `scontrol show config` (a
    configless site's login node has no file); None when neither says."""
    path = env.get("SLURM_CONF") or "/etc/slurm/slurm.conf"
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            text = f.read()
    except OSError:
        text = None
    if text is not None:
        for line in text.splitlines():
            key, sep, value = line.split("#", 1)[0].partition("=")
            if sep and key.strip().lower() == name.lower():
                return value.strip() or None
        return None
    if shutil.which("scontrol", path=env.get("PATH")) is None:
        return None
    try:
        done = subprocess.run(["scontrol", "show", "config"], capture_output=True, text=True,
                              timeout=10, env=env)
    except (OSError, subprocess.SubprocessError):
        return None
    for line in done.stdout.splitlines() if done.returncode == 0 else ():
        key, sep, value = line.partition("=")
        if sep and key.strip() == name:
            return value.strip() or None
    return None


def default_program(family):
    """mpirun.openmpi / mpirun.mpich (Debian's alternatives) when present, else mpirun."""
    named = f"mpirun.{family}"
    return named if shutil.which(named) else "mpirun"


def cores():
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:
        return os.cpu_count() or 1


class Launcher:
    name = "?"
    # The emulated cluster's nodes are namespaces of this machine: all ranks share its cores.
    shares_this_machine = False
    cluster = None          # the emulated cluster it launches on (collsel.cluster.Cluster)

    def __init__(self, program, extra_args="", env=None):
        self.program = program
        self.env = dict(env or {})          # added to every launch's environment
        try:
            self.extra = shlex.split(extra_args or "")
        except ValueError as e:
            raise InputError(f"--launcher-args {extra_args!r}: {e}") from None

    def describe(self):
        """The launcher for the table's `# launcher=`: name, program, added environment."""
        env = f"; environment: {render([], self.env).strip()}" if self.env else ""
        return f"{self.name} ({self.program}){env}"

    def check(self):
        if shutil.which(self.program) is None:
            hint = ("install openmpi-bin with 'make setup'" if self.name != "srun"
                    else "is this a Slurm node?")
            raise InputError(f"launcher program '{self.program}' not found on PATH "
                             f"({hint}, or pass --mpirun PATH)")

    def mapping(self, nprocs, ppn=None):
        raise NotImplementedError

    def command(self, nprocs, mca, bench_argv, ppn=None):
        """(argv, environment) of one launch of nprocs ranks; ppn: nprocs / ppn nodes with
        ppn ranks each."""
        raise NotImplementedError

    def expected(self, nprocs, ppn=None):
        """Where the ranks should land (placement.Expected)."""
        raise NotImplementedError

    def sharing(self, nprocs, ppn=None):
        """(ranks, cores): the ranks of a launch that share the cores of one machine, and how
        many cores it has; None when the launcher does not know."""
        return (nprocs, cores()) if self.shares_this_machine else None

    def check_shape(self, nodes, ppn):
        """One line when this launcher cannot place ppn ranks on each of `nodes` nodes."""
        if nodes > 1:
            raise InputError(f"--nodes {nodes}: the {self.name} launcher runs on this machine "
                             "only (one node); use --launcher hostfile or srun, or --cluster")


def _root_flag():
    # Open MPI refuses to start as root without this; containers and CI often run as root.
    return ["--allow-run-as-root"] if hasattr(os, "geteuid") and os.geteuid() == 0 else []


def _mca_flags(mca):
    return [x for k, v in mca.items() for x in ("--mca", k, str(v))]


class LocalLauncher(Launcher):
    """mpirun on this machine. Beyond the core count, ranks share cores: oversubscribe, no
    binding, and mpi_yield_when_idle so spinning ranks give the core to the one with work."""
    name = "local"

    def __init__(self, program="mpirun", extra_args="", ncores=None):
        super().__init__(program, extra_args)
        self.ncores = ncores or cores()

    def _placement(self, nprocs):
        if nprocs > self.ncores:
            return ["--oversubscribe", "--bind-to", "none", "--mca", "mpi_yield_when_idle", "1"]
        return ["--map-by", "core", "--bind-to", "core"]

    def mapping(self, nprocs, ppn=None):
        return " ".join(self._placement(nprocs)) + f" ({self.ncores} cores)"

    def sharing(self, nprocs, ppn=None):
        return nprocs, self.ncores

    def command(self, nprocs, mca, bench_argv, ppn=None):
        argv = [self.program, *_root_flag(), "-np", str(nprocs), *self._placement(nprocs),
                *_mca_flags(mca), *self.extra, *bench_argv]
        return argv, dict(self.env)

    def expected(self, nprocs, ppn=None):
        return Expected(nodes=1, ppn=nprocs, what=f"all {nprocs} ranks on this host")


class MpichLocalLauncher(LocalLauncher):
    """MPICH's hydra mpirun on this machine: bound to cores up to the core count, unbound
    beyond (hydra has no oversubscription flag and no yield-when-idle setting)."""
    family_env = MPICH_ENV

    def _placement(self, nprocs):
        return [] if nprocs > self.ncores else ["-bind-to", "core", "-map-by", "core"]

    def mapping(self, nprocs, ppn=None):
        return (" ".join(self._placement(nprocs)) or "no binding") + f" ({self.ncores} cores)"

    def command(self, nprocs, mca, bench_argv, ppn=None):
        argv = [self.program, "-n", str(nprocs), *self._placement(nprocs), *self.extra,
                *bench_argv]
        return argv, {**self.env, **self.family_env}


class IntelLocalLauncher(LocalLauncher):
    """Intel MPI's hydra mpirun on this machine, shared memory only. The forcing settings are
    environment variables (I_MPI_ADJUST_<COLL>=preset, read in MPI_Init: Intel MPI cannot be
    forced per communicator) and the launch gets the installation's environment (intel_env)."""

    def __init__(self, program, extra_args="", home=None):
        super().__init__(program, extra_args)
        self.env = intel_env(home or os.path.dirname(os.path.dirname(os.path.abspath(
            shutil.which(program) or program))))

    def mapping(self, nprocs, ppn=None):
        # beyond the core count hydra's pinning would stack ranks: unpinned, and waiting ranks
        # give up the core (I_MPI_WAIT_MODE) instead of polling it
        pin = "pinned by hydra" if nprocs <= self.ncores else "I_MPI_PIN=0, I_MPI_WAIT_MODE=1"
        return f"{pin} ({self.ncores} cores)"

    def command(self, nprocs, mca, bench_argv, ppn=None):
        argv = [self.program, "-n", str(nprocs), *self.extra, *bench_argv]
        over = {"I_MPI_PIN": "0", "I_MPI_WAIT_MODE": "1"} if nprocs > self.ncores else {}
        return argv, {**self.env, **over, **{k: str(v) for k, v in mca.items()}}


def intel_env(home):
    """The environment an Intel MPI installed under `home` (a PyPI impi-rt/impi-devel venv or
    an oneAPI mpi/latest) runs with: its root, its libraries and libfabric providers, and the
    shared-memory fabric (one node)."""
    lib = os.path.join(home, "lib")
    return {"I_MPI_ROOT": home, "LD_LIBRARY_PATH": lib, "FI_PROVIDER_PATH": lib,
            "I_MPI_FABRICS": "shm"}


class HostfileLauncher(Launcher):
    """mpirun over the hosts of a hostfile. Plain P: `--hostfile H -np P --map-by X`. Explicit
    nodes x ppn: the first `nodes` hosts of the hostfile, `--host h1:PPN,... --map-by
    ppr:PPN:node` (ppn slots on each, exactly ppn ranks on each)."""
    name = "hostfile"

    def __init__(self, program="mpirun", extra_args="", hostfile=None, map_by="core",
                 env=None):
        super().__init__(program, extra_args, env)
        if not hostfile:
            raise InputError("--launcher hostfile needs --hostfile FILE")
        if not os.path.isfile(hostfile):
            raise InputError(f"hostfile '{hostfile}' not found")
        self.hostfile = os.path.abspath(hostfile)
        self.map_by = map_by
        self.hosts = hostfile_hosts(self.hostfile)

    def check_shape(self, nodes, ppn):
        if nodes > len(self.hosts):
            raise InputError(f"--nodes {nodes}: the hostfile {self.hostfile} names "
                             f"{len(self.hosts)} host{'s' if len(self.hosts) != 1 else ''}")

    def _hosts(self, nprocs, ppn):
        return self.hosts[:nprocs // ppn]

    def _where(self, nprocs, ppn):
        if ppn:
            return ["--host", ",".join(f"{h}:{ppn}" for h in self._hosts(nprocs, ppn)),
                    "-np", str(nprocs), "--map-by", f"ppr:{ppn}:node"]
        return ["--hostfile", self.hostfile, "-np", str(nprocs), "--map-by", self.map_by]

    def mapping(self, nprocs, ppn=None):
        return " ".join(self._where(nprocs, ppn))

    def command(self, nprocs, mca, bench_argv, ppn=None):
        argv = [self.program, *_root_flag(), *self._where(nprocs, ppn), *_mca_flags(mca),
                *self.extra, *bench_argv]
        return argv, dict(self.env)

    def expected(self, nprocs, ppn=None):
        names = () if any(_is_address(h) for h in self.hosts) else tuple(self.hosts)
        if ppn:
            hosts = self._hosts(nprocs, ppn)
            return Expected(len(hosts), ppn, tuple(hosts) if names else (),
                            f"{ppn} per node on {','.join(hosts)}")
        return Expected(hosts=names, what=f"hosts of {self.hostfile}")


class MpichHostfileLauncher(HostfileLauncher):
    """MPICH's hydra over the hosts of a hostfile (an Open MPI one: its host names are used):
    plain P `-hosts h1,h2,... -n P` (hydra's round robin); explicit nodes x ppn `-hosts
    h1:PPN,... -n P -ppn PPN`. `launch_args`: the emulated cluster's hydra flags (its agent as
    the ssh launcher, the bridge as the interface)."""

    def __init__(self, program, extra_args="", hostfile=None, env=None, launch_args=()):
        super().__init__(program, extra_args, hostfile, "", env)
        self.launch_args = list(launch_args)

    def _where(self, nprocs, ppn):
        if ppn:
            return ["-hosts", ",".join(f"{h}:{ppn}" for h in self._hosts(nprocs, ppn)),
                    "-n", str(nprocs), "-ppn", str(ppn)]
        return ["-hosts", ",".join(self.hosts), "-n", str(nprocs)]

    def command(self, nprocs, mca, bench_argv, ppn=None):
        argv = [self.program, *self.launch_args, *self._where(nprocs, ppn), *self.extra,
                *bench_argv]
        return argv, {**self.env, **MPICH_ENV}


def _hostfile_lines(path):
    """[(line number, words)] of an Open MPI hostfile's host lines (`# comments` and blank lines
    left out)."""
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            lines = [(n, line.split("#", 1)[0].split()) for n, line in enumerate(f, 1)]
    except OSError as e:
        raise InputError(f"hostfile '{path}': cannot read it: {e.strerror or e}") from None
    return [(n, words) for n, words in lines if words]


def hostfile_hosts(path):
    """The distinct host names of an Open MPI hostfile, in order (`# comments`, `slots=`...)."""
    hosts = list(dict.fromkeys(words[0] for _, words in _hostfile_lines(path)))
    if not hosts:
        raise InputError(f"hostfile '{path}' names no host")
    return hosts


def hostfile_slots(path):
    """The ranks an Open MPI hostfile offers (the sum of its lines' `slots=N`: mpirun starts no
    more without --oversubscribe), or None when a host line gives no slots= (mpirun then counts
    that host's cores, unknown here; or none is named: the launcher says so)."""
    lines = _hostfile_lines(path)
    if not lines:
        return None
    total = 0
    for number, words in lines:
        given = [w.split("=", 1)[1] for w in words[1:] if w.startswith("slots=")]
        if not given:
            return None
        if not given[0].isdigit():
            raise InputError(f"hostfile '{path}':{number}: slots={given[0]} is not a count")
        total += int(given[0])
    return total


def host_slots(cluster=None, hostfile=None):
    """(slots, where) of the hosts a launch runs on: an emulated cluster's (collsel.cluster.load:
    a slot per CPU of each node), else a hostfile's (hostfile_slots); (None, None) when unknown."""
    if cluster is not None:
        return cluster.slots, (f"the emulated cluster's {cluster.slots} slots "
                               f"({len(cluster.nodes)} nodes; {cluster.state_dir}/hostfile)")
    if hostfile is not None:
        slots = hostfile_slots(hostfile)
        return slots, f"the {slots} slots of --hostfile {hostfile}"
    return None, None


def within_slots(comm_sizes, slots, where, given):
    """The P of `comm_sizes` mpirun can start on hosts offering `slots` ranks (`where` names
    them in messages; None slots: unknown, every P kept): mpirun --hostfile starts no more, so
    the default P (`given` False) stop at them and a given P beyond them is refused."""
    if slots is None:
        return list(comm_sizes)
    beyond = [p for p in comm_sizes if p > slots]
    if beyond and given:
        raise InputError(f"--comm-sizes {','.join(map(str, beyond))}: beyond {where}, which "
                         f"mpirun will not exceed: give P up to {slots}")
    kept = [p for p in comm_sizes if p <= slots]
    if not kept:
        raise InputError(f"{where}: no P of the default grid fits; give --comm-sizes")
    return kept


def _is_address(host):
    try:
        ipaddress.ip_address(host)
        return True
    except ValueError:
        return False


class SrunLauncher(Launcher):
    """srun inside a Slurm allocation; Open MPI must have been built with Slurm/PMIx support.
    Explicit nodes x ppn: `-N nodes --ntasks-per-node ppn`."""
    name = "srun"

    def __init__(self, program="srun", extra_args="", require_allocation=True, env=None,
                 mpi_plugin=SRUN_MPI_FALLBACK, cpu_bind="cores", max_nodes=None):
        super().__init__(program, extra_args, env)
        self.require_allocation = require_allocation
        self.max_nodes = max_nodes          # the emulated cluster's size, when known
        self.mpi_plugin = mpi_plugin        # srun --mpi= (srun_mpi)
        # --cpu-bind: none on the emulated cluster, whose nodes share this machine's cores
        self.step_args = [f"--mpi={mpi_plugin}", f"--cpu-bind={cpu_bind}"]
        self._allocation = None

    def check(self):
        if self.require_allocation and not os.environ.get("SLURM_JOB_ID"):
            raise InputError("--launcher srun runs inside a Slurm allocation (SLURM_JOB_ID is "
                             "not set): use salloc/sbatch, or --emit-sbatch FILE")
        super().check()

    def check_shape(self, nodes, ppn):
        have = os.environ.get("SLURM_JOB_NUM_NODES", "")
        if self.require_allocation and have.isdigit() and nodes > int(have):
            raise InputError(f"--nodes {nodes}: the allocation has {have} node"
                             f"{'s' if have != '1' else ''} (SLURM_JOB_NUM_NODES)")
        if self.max_nodes and nodes > self.max_nodes:
            raise InputError(f"--nodes {nodes}: the emulated cluster has {self.max_nodes} "
                             "nodes")

    def _where(self, nprocs, ppn):
        if ppn:
            return ["--nodes", str(nprocs // ppn), "--ntasks-per-node", str(ppn),
                    "--ntasks", str(nprocs)]
        return ["--ntasks", str(nprocs)]

    def sharing(self, nprocs, ppn=None):
        """The ranks on one node against its CPUs as the allocation states them
        (SLURM_JOB_CPUS_PER_NODE, e.g. `2(x3)`)."""
        if self.shares_this_machine:
            return super().sharing(nprocs, ppn)
        cpus = re.match(r"\d+", os.environ.get("SLURM_JOB_CPUS_PER_NODE", ""))
        nodes = os.environ.get("SLURM_JOB_NUM_NODES", "")
        if cpus is None or not (ppn or nodes.isdigit()):
            return None
        return ppn or -(-nprocs // int(nodes)), int(cpus.group())

    def mapping(self, nprocs, ppn=None):
        nodes = os.environ.get("SLURM_JOB_NUM_NODES", "?")
        return (f"srun {' '.join([*self._where(nprocs, ppn), *self.step_args])} "
                f"(allocation nodes={nodes})")

    def command(self, nprocs, mca, bench_argv, ppn=None):
        env = {**self.env, **{"OMPI_MCA_" + k: str(v) for k, v in mca.items()}}
        argv = [self.program, *self._where(nprocs, ppn), *self.step_args, *self.extra,
                *bench_argv]
        return argv, env

    def expected(self, nprocs, ppn=None):
        if self._allocation is None:
            self._allocation = allocation_hosts({**os.environ, **self.env})
        what = (f"{ppn} per node on {nprocs // ppn} of the allocation's nodes" if ppn
                else "the allocation's nodes")
        return Expected(nprocs // ppn if ppn else 0, ppn or 0, self._allocation, what)


def allocation_hosts(env):
    """The host names of this Slurm allocation (`scontrol show hostnames`, under `env`, which
    names the cluster's SLURM_CONF), () when unknown."""
    nodelist = env.get("SLURM_JOB_NODELIST")
    if not nodelist or shutil.which("scontrol", path=env.get("PATH")) is None:
        return ()
    try:
        done = subprocess.run(["scontrol", "show", "hostnames", nodelist], capture_output=True,
                              text=True, timeout=30, env=env)
    except (OSError, subprocess.SubprocessError):
        return ()
    return tuple(done.stdout.split()) if done.returncode == 0 else ()


def make(name, mpirun=None, extra_args="", hostfile=None, map_by="core", for_script=False,
         family="openmpi", cluster=None, mpi_plugin=None, env=None):
    """The launcher `name`; on the emulated `cluster` (collsel.cluster.Cluster) with its
    hostfile and launch environment, ranks unbound and yielding (SHARED_CORES_ENV). srun gets
    `--mpi=` srun_mpi(mpi_plugin) (--srun-mpi, else the cluster's MpiDefault or pmix). `env`:
    the MPI installation's environment (mpi_home), added to every launch's."""
    if family == "intel":
        if name != "local":
            raise InputError(f"--mpi intel supports --launcher local (not '{name}')")
        launcher = IntelLocalLauncher(mpirun or "mpiexec.hydra", extra_args)
    else:
        launcher = _make(name, mpirun, extra_args, hostfile, map_by, for_script, family,
                         cluster, mpi_plugin)
    launcher.env.update(env or {})
    launcher.shares_this_machine = cluster is not None
    launcher.cluster = cluster
    return launcher


def _make(name, mpirun, extra_args, hostfile, map_by, for_script, family, cluster, mpi_plugin):
    env = {**cluster.launch_env, **SHARED_CORES_ENV} if cluster is not None else {}
    if name == "local" and cluster is not None:
        raise InputError("--cluster launches on the emulated cluster: --launcher hostfile "
                         "(its default) or srun, not local")
    if name == "hostfile" and cluster is not None and hostfile:
        raise InputError("--cluster brings its own hostfile: drop --hostfile")
    hosts = cluster.hostfile if cluster is not None else hostfile
    if family == "mpich":
        program = mpirun or default_program("mpich")
        if name == "local":
            return MpichLocalLauncher(program, extra_args)
        if name == "hostfile":
            hydra_args = cluster.mpich_launch_args if cluster is not None else ()
            return MpichHostfileLauncher(program, extra_args, hosts, env, hydra_args)
        raise InputError(f"--mpi mpich supports --launcher local or hostfile (not '{name}')")
    if name == "local":
        return LocalLauncher(mpirun or default_program("openmpi"), extra_args)
    if name == "hostfile":
        return HostfileLauncher(mpirun or default_program("openmpi"), extra_args, hosts, map_by,
                                env)
    if name == "srun":
        return SrunLauncher(mpirun or "srun", extra_args, require_allocation=not for_script,
                            env=env, mpi_plugin=srun_mpi(mpi_plugin, {**os.environ, **env}),
                            cpu_bind="none" if cluster is not None else "cores",
                            max_nodes=len(cluster.node_names) if cluster is not None else None)
    raise InputError(f"unknown launcher '{name}' (known: {', '.join(LAUNCHERS)})")


def render(argv, env):
    """A shell line that reproduces one launch."""
    prefix = " ".join(f"{k}={shlex.quote(v)}" for k, v in sorted(env.items()))
    return (prefix + " " if prefix else "") + shlex.join(argv)
