"""Run `ompi_info` for the coll/tuned parameters (the text core.mpi.catalogue reads)."""
import shutil
import subprocess

from collsel.errors import CollselError, InputError

ARGS = ("--param", "coll", "tuned", "--level", "9", "--parsable")


def coll_tuned_text(ompi_info="ompi_info"):
    """The `ompi_info --param coll tuned --level 9 --parsable` output of the given program."""
    program = shutil.which(ompi_info)
    if program is None:
        raise InputError(f"--ompi-info: '{ompi_info}' not found: install Open MPI (ompi_info "
                         "comes with openmpi-bin) or give its path")
    return tool_output([program, *ARGS])


def tool_output(cmd):
    """The standard output of a tool that must succeed within two minutes; CollselError naming
    the command and its last line of stderr otherwise."""
    cmd = [str(c) for c in cmd]
    try:
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    except (OSError, subprocess.TimeoutExpired) as e:
        raise CollselError(f"{' '.join(cmd)}: {e}") from None
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or ["no message"])[-1]
        raise CollselError(f"{' '.join(cmd)} exited with status {done.returncode}: {last}")
    return done.stdout
