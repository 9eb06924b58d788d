"""Where and when a measurement ran: recorded with every sweep table and model-fit experiment
file."""
import datetime
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


def ompi_version():
    try:
        out = subprocess.run(["ompi_info", "--version"], capture_output=True, text=True,
                             timeout=30).stdout
        return out.splitlines()[0].strip() if out.strip() else "unknown"
    except (OSError, subprocess.SubprocessError):
        return "unknown"


def machine_metadata():
    """Host, cores, CPU, OS and Open MPI version, as metadata items."""
    return {"host": platform.node() or "unknown", "nproc": launchers.cores(),
            "cpu_model": cpu_model(), "os": f"{platform.system()} {platform.release()}",
            "ompi_version": ompi_version()}
