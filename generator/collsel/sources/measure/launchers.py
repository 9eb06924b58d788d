"""How one benchmark run is started: local mpirun, mpirun --hostfile, or Slurm srun, under
Open MPI or MPICH.

Each launcher turns (P, MCA settings, benchmark argv) into (argv, extra environment). Forcing
uses Open MPI MCA parameters: `--mca` flags for mpirun (they reach remote daemons too), and
OMPI_MCA_* variables for srun (which exports the environment to the tasks). MPICH's hydra mpirun
takes `-n`, knows no `--oversubscribe`/`--mca`/`--allow-run-as-root`, and passes the environment
on; MPIR_CVAR_COLLECTIVE_FALLBACK=error makes an algorithm MPICH cannot run an error instead of a
silent fallback.
"""
import os
import shlex
import shutil

from collsel.errors import InputError

LAUNCHERS = ("local", "hostfile", "srun")
MPICH_ENV = {"MPIR_CVAR_COLLECTIVE_FALLBACK": "error"}


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

    def __init__(self, program, extra_args=""):
        self.program = program
        try:
            self.extra = shlex.split(extra_args or "")
        except ValueError as e:
            raise InputError(f"--launcher-args {extra_args!r}: {e}") from None

    def check(self):
        if shutil.which(self.program) is None:
            hint = ("install openmpi-bin with 'make setup'" if self.name != "srun"
                    else "is this a Slurm node?")
            raise InputError(f"launcher program '{self.program}' not found on PATH "
                             f"({hint}, or pass --mpirun PATH)")

    def mapping(self, nprocs):
        raise NotImplementedError

    def command(self, nprocs, mca, bench_argv):
        raise NotImplementedError


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

    def mapping(self, nprocs):
        return " ".join(self._placement(nprocs)) + f" ({self.ncores} cores)"

    def command(self, nprocs, mca, bench_argv):
        argv = [self.program, *_root_flag(), "-np", str(nprocs), *self._placement(nprocs),
                *_mca_flags(mca), *self.extra, *bench_argv]
        return argv, {}


class MpichLocalLauncher(LocalLauncher):
    """MPICH's hydra mpirun on this machine: bound to cores up to the core count, unbound
    beyond (hydra has no oversubscription flag and no yield-when-idle setting)."""

    def _placement(self, nprocs):
        return [] if nprocs > self.ncores else ["-bind-to", "core", "-map-by", "core"]

    def mapping(self, nprocs):
        return (" ".join(self._placement(nprocs)) or "no binding") + f" ({self.ncores} cores)"

    def command(self, nprocs, mca, bench_argv):
        argv = [self.program, "-n", str(nprocs), *self._placement(nprocs), *self.extra,
                *bench_argv]
        return argv, dict(MPICH_ENV)


class HostfileLauncher(Launcher):
    name = "hostfile"

    def __init__(self, program="mpirun", extra_args="", hostfile=None, map_by="core"):
        super().__init__(program, extra_args)
        if not hostfile:
            raise InputError("--launcher hostfile needs --hostfile FILE")
        if not os.path.isfile(hostfile):
            raise InputError(f"hostfile '{hostfile}' not found")
        self.hostfile = os.path.abspath(hostfile)
        self.map_by = map_by

    def mapping(self, nprocs):
        return f"--hostfile {self.hostfile} --map-by {self.map_by}"

    def command(self, nprocs, mca, bench_argv):
        argv = [self.program, *_root_flag(), "--hostfile", self.hostfile, "-np", str(nprocs),
                "--map-by", self.map_by, *_mca_flags(mca), *self.extra, *bench_argv]
        return argv, {}


class SrunLauncher(Launcher):
    """srun inside a Slurm allocation; Open MPI must have been built with Slurm/PMIx support."""
    name = "srun"

    def __init__(self, program="srun", extra_args="", require_allocation=True):
        super().__init__(program, extra_args)
        self.require_allocation = require_allocation

    def check(self):
        if self.require_allocation and not os.environ.get("SLURM_JOB_ID"):
            raise InputError("--launcher srun runs inside a Slurm allocation (SLURM_JOB_ID is "
                             "not set): use salloc/sbatch, or --emit-sbatch FILE")
        super().check()

    def mapping(self, nprocs):
        nodes = os.environ.get("SLURM_JOB_NUM_NODES", "?")
        return f"srun --ntasks {nprocs} --cpu-bind=cores (allocation nodes={nodes})"

    def command(self, nprocs, mca, bench_argv):
        env = {"OMPI_MCA_" + k: str(v) for k, v in mca.items()}
        argv = [self.program, "--ntasks", str(nprocs), "--cpu-bind=cores", *self.extra,
                *bench_argv]
        return argv, env


def make(name, mpirun=None, extra_args="", hostfile=None, map_by="core", for_script=False,
         family="openmpi"):
    if family == "mpich":
        if name != "local":
            raise InputError(f"--mpi mpich supports --launcher local only (not '{name}')")
        return MpichLocalLauncher(mpirun or default_program("mpich"), extra_args)
    if name == "local":
        return LocalLauncher(mpirun or default_program("openmpi"), extra_args)
    if name == "hostfile":
        return HostfileLauncher(mpirun or default_program("openmpi"), extra_args, hostfile,
                                map_by)
    if name == "srun":
        return SrunLauncher(mpirun or "srun", extra_args, require_allocation=not for_script)
    raise InputError(f"unknown launcher '{name}' (known: {', '.join(LAUNCHERS)})")


def render(argv, env):
    """A shell line that reproduces one launch."""
    prefix = " ".join(f"{k}={shlex.quote(v)}" for k, v in sorted(env.items()))
    return (prefix + " " if prefix else "") + shlex.join(argv)
