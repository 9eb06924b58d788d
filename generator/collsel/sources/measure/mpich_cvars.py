"""Read MPICH's control variable descriptions through MPI_T (mpi_t_cvars.c, built with MPICH's
mpicc in a temporary directory and run as a plain process): the text core.catalogue reads
MPICH's algorithm names from."""
import shutil
import subprocess
import tempfile
from pathlib import Path

from collsel.errors import CollselError, InputError

SOURCE = Path(__file__).with_name("mpi_t_cvars.c")
NAME_PART = "_INTRA_ALGORITHM"


def _run(cmd, what):
    try:
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    except (OSError, subprocess.TimeoutExpired) as e:
        raise CollselError(f"{what}: {e}") from None
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or ["no message"])[-1]
        raise CollselError(f"{what} exited with status {done.returncode}: {last}")
    return done.stdout


def algorithm_cvars_text(mpicc="mpicc.mpich"):
    """`NAME<TAB>DESCRIPTION` lines of the MPI's *_INTRA_ALGORITHM control variables."""
    compiler = shutil.which(mpicc)
    if compiler is None:
        raise InputError(f"--mpicc: '{mpicc}' not found: install MPICH (Debian: libmpich-dev) "
                         "or give its compiler wrapper's path")
    with tempfile.TemporaryDirectory(prefix="collsel-cvars-") as tmp:
        exe = str(Path(tmp) / "mpi_t_cvars")
        _run([compiler, "-O1", "-o", exe, str(SOURCE)], f"{mpicc} {SOURCE.name}")
        return _run([exe, NAME_PART], f"{exe} {NAME_PART}")
