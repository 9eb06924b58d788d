"""Where and when a measurement ran: recorded with every sweep table and model-fit experiment
file."""
import datetime
import os
import platform
import subprocess

from collsel.sources.measure import launchers


def now_iso():
    return datetime.datetime.now(datetime.timezone.utc).replace(microsecond=0).isoformat()


def loadavg():
    try:
        with open("/proc/loadavg") as f:
            return " ".join(f.read().split()[:3])
    except OSError:
        return "unknown"


def cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def ompi_version(mpi_home=None):
    """`ompi_info --version`'s first line: the ompi_info of the Open MPI at mpi_home (a
    --mpi-home prefix), else the one on PATH."""
    program = os.path.join(mpi_home, "bin", "ompi_info") if mpi_home else "ompi_info"
    try:
        out = subprocess.run([program, "--version"], capture_output=True, text=True,
                             timeout=30).stdout
        return out.splitlines()[0].strip() if out.strip() else "unknown"
    except (OSError, subprocess.SubprocessError):
        return "unknown"


def machine_metadata(mpi_home=None):
    """Host, cores, CPU, OS and Open MPI version (of the Open MPI at mpi_home when given), as
    metadata items."""
    return {"host": platform.node() or "unknown", "nproc": launchers.cores(),
            "cpu_model": cpu_model(), "os": f"{platform.system()} {platform.release()}",
            "ompi_version": ompi_version(mpi_home)}
