"""Read MPICH's control variable descriptions through MPI_T (mpi_t_cvars.c, built with MPICH's
mpicc in a temporary directory and run as a plain process): the text core.mpi.catalogue reads
MPICH's algorithm names from."""
import shutil
import tempfile
from pathlib import Path

from collsel.errors import InputError
from collsel.sources.measure.ompi_info import tool_output

SOURCE = Path(__file__).with_name("mpi_t_cvars.c")
NAME_PART = "_INTRA_ALGORITHM"


def algorithm_cvars_text(mpicc="mpicc.mpich"):
    """`NAME<TAB>DESCRIPTION` lines of the MPI's *_INTRA_ALGORITHM control variables."""
    compiler = shutil.which(mpicc)
    if compiler is None:
        raise InputError(f"--mpicc: '{mpicc}' not found: install MPICH (Debian: libmpich-dev) "
                         "or give its compiler wrapper's path")
    with tempfile.TemporaryDirectory(prefix="collsel-cvars-") as tmp:
        exe = str(Path(tmp) / "mpi_t_cvars")
        tool_output([compiler, "-O1", "-o", exe, SOURCE])
        return tool_output([exe, NAME_PART])
