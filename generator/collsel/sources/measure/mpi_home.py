"""Which MPI installation a sweep drives: `--mpi FAMILY` with `--mpi-home DIR`, or found without
it, gives the compiler wrapper, the launcher program and the environment of every launch.

An installation is a prefix with bin/ (Debian's /usr, a PyPI venv of `make setup-mpis`, an
Intel oneAPI tree). Its family is told by a program only that family ships in bin/ (MARKERS),
so a home of another MPI is refused before anything is built. Without --mpi-home: Debian's
names for Open MPI and MPICH (mpicc / mpirun.openmpi, mpicc.mpich / mpirun.mpich: the
packages `make setup` installs), and for Intel MPI $I_MPI_ROOT, else the prefix of `impi_info`
on PATH. Intel MPI needs I_MPI_ROOT (its tuning files and providers are found from it), its
own libraries first on LD_LIBRARY_PATH (Debian's MPICH also has a libmpi.so.12), and the
shared-memory fabric on a machine without a network provider (I_MPI_FABRICS=shm).
"""
import os
import re
import shutil
import subprocess
from dataclasses import dataclass, field

from collsel.errors import InputError

MPI_NAMES = ("openmpi", "mpich", "intel")
TITLE = {"openmpi": "Open MPI", "mpich": "MPICH", "intel": "Intel MPI"}
# A program in bin/ that only this family installs.
MARKERS = {"openmpi": "ompi_info", "mpich": "mpichversion", "intel": "impi_info"}
# The launcher in bin/: Open MPI's mpirun (PRRTE's in 5.0), hydra for MPICH and Intel MPI.
LAUNCHER = {"openmpi": "mpirun", "mpich": "mpiexec", "intel": "mpiexec.hydra"}
# Without --mpi-home: the compiler wrapper of Debian's packages, which `make setup` installs (the
# launcher: launchers.default_program).
DEBIAN = {"openmpi": ("mpicc", None), "mpich": ("mpicc.mpich", None)}


@dataclass(frozen=True)
class Install:
    family: str
    home: str = None                    # None: Debian's programs on PATH
    mpicc: str = "mpicc"
    mpirun: str = None                  # None: launchers.default_program(family)
    env: dict = field(default_factory=dict)

    def describe(self):
        return f"{TITLE[self.family]} in {self.home}" if self.home else TITLE[self.family]


def family_of(home):
    """The families whose marker program is in home/bin."""
    return [f for f, m in MARKERS.items() if os.path.isfile(os.path.join(home, "bin", m))]


def resolve(family, home=None, environ=None):
    """The Install of `family` at `home` (--mpi-home), else found as the module says; one line
    (InputError) for a home that is no installation of that family."""
    environ = os.environ if environ is None else environ
    if family not in MPI_NAMES:
        raise InputError(f"--mpi {family}: unknown MPI (known: {', '.join(MPI_NAMES)})")
    if home is None:
        if family in DEBIAN:
            mpicc, mpirun = DEBIAN[family]
            return Install(family, None, mpicc, mpirun)
        home = _intel_home(environ)
    return _at(family, home, environ)


def _intel_home(environ):
    if environ.get("I_MPI_ROOT"):
        return environ["I_MPI_ROOT"]
    found = shutil.which("impi_info", path=environ.get("PATH"))
    if found is None:
        raise InputError("--mpi intel: no Intel MPI found (I_MPI_ROOT is not set, no impi_info "
                         "on PATH): pass --mpi-home DIR (make setup-mpis installs one in "
                         "build/mpis/intel)")
    return os.path.dirname(os.path.dirname(os.path.realpath(found)))


def _at(family, home, environ):
    where = f"--mpi-home {home}"
    home = os.path.abspath(home)
    mpicc = os.path.join(home, "bin", "mpicc")
    if not os.path.isdir(home):
        raise InputError(f"{where}: no such directory (make setup-mpis installs Open MPI 5, "
                         "MPICH 5 and Intel MPI in build/mpis/)")
    if not (os.path.isfile(mpicc) and os.access(mpicc, os.X_OK)):
        raise InputError(f"{where}: no bin/mpicc there: not an MPI installation (give the "
                         "prefix that holds bin/mpicc)")
    found = family_of(home)
    if not found:
        raise InputError(f"{where}: no bin/{MARKERS[family]} there: not an installation of "
                         f"{TITLE[family]}")
    if family not in found:
        hint = f"; pass --mpi {found[0]}" if len(found) == 1 else ""
        raise InputError(f"{where}: an installation of {' and '.join(TITLE[f] for f in found)}"
                         f", not {TITLE[family]}{hint}")
    mpirun = os.path.join(home, "bin", LAUNCHER[family])
    return Install(family, home, mpicc, mpirun, _environment(family, home, environ))


def _environment(family, home, environ):
    if family != "intel":
        return {}
    libs = [os.path.join(home, "lib")]
    if environ.get("LD_LIBRARY_PATH"):
        libs.append(environ["LD_LIBRARY_PATH"])
    return {"I_MPI_ROOT": home, "I_MPI_FABRICS": environ.get("I_MPI_FABRICS", "shm"),
            "LD_LIBRARY_PATH": os.pathsep.join(libs)}


def mpich_version(install):
    """The MPICH version `mpichversion` of the installation prints (e.g. '5.0.2'; Debian's on
    PATH without a home), which decides the algorithm names a sweep may force
    (core.mpi.algorithms.MPICH_VERSIONS); None when it cannot tell (then MPICH 4.0's names)."""
    program = (os.path.join(install.home, "bin", MARKERS["mpich"]) if install.home
               else shutil.which(MARKERS["mpich"]))
    try:
        done = subprocess.run([program or MARKERS["mpich"], "-v"], capture_output=True,
                              text=True, timeout=60, env={**os.environ, **install.env})
    except (OSError, subprocess.SubprocessError):
        return None
    found = re.search(r"Version:\s*(\d+\.\d+[.\w]*)", done.stdout)
    return found[1] if done.returncode == 0 and found else None
