"""Find or build the C benchmark program (collsel_bench.c, shipped beside this module).

The binary is compiled with `mpicc` on first use into a cache directory, named after the hash of
its source, so an edited source is rebuilt and concurrent sweeps never see a half-written file.
"""
import hashlib
import os
import shutil
import subprocess
import tempfile
from importlib import resources
from pathlib import Path

from collsel.errors import CollselError, InputError

CFLAGS = ["-O2", "-std=c99", "-Wall", "-Wextra", "-Werror", "-pedantic"]
# One output line per message size, in the order of --sizes (`#@key=value` header lines first).
OUTPUT_FIELDS = ("msg_size", "mean_us", "median_us", "min_us", "max_us", "stdev_us",
                 "ci_halfwidth_us", "n", "ci_met")


def source_path():
    """The benchmark source, package data of collsel (found the same way in a wheel install)."""
    return Path(str(resources.files(__package__).joinpath("collsel_bench.c")))


def source_digest():
    src = source_path()
    return hashlib.sha256(src.read_bytes()).hexdigest() if src.is_file() else None


def cache_dir():
    if os.environ.get("COLLSEL_CACHE"):
        return Path(os.environ["COLLSEL_CACHE"])
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "collsel"


def cached_binary():
    digest = source_digest()
    if digest is None:
        return None
    return cache_dir() / f"collsel_bench-{digest[:16]}"


def locate(explicit=None, mpicc="mpicc", build=True):
    """Path of the benchmark binary: `explicit` (--bench), $COLLSEL_BENCH, or the cached build."""
    path = explicit or os.environ.get("COLLSEL_BENCH")
    if path:
        if not (os.path.isfile(path) and os.access(path, os.X_OK)):
            raise InputError(f"benchmark program '{path}' is not an executable file")
        return os.path.abspath(path)
    target = cached_binary()
    if target is None:
        raise InputError(f"benchmark source {source_path()} not found (a broken collsel "
                         "install?); reinstall collsel, or build it and pass --bench PATH")
    if target.is_file() or not build:
        return str(target)
    return str(compile_bench(target, mpicc))


def compile_bench(target, mpicc="mpicc"):
    compiler = shutil.which(mpicc)
    if compiler is None:
        raise InputError(f"'{mpicc}' not found on PATH: install libopenmpi-dev (make setup) "
                         "or pass --mpicc / --bench")
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=".build-")
    os.close(fd)
    cmd = [compiler, *CFLAGS, "-o", tmp, str(source_path()), "-lm"]
    try:
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
        if done.returncode != 0:
            raise CollselError(f"compiling the benchmark failed ({' '.join(cmd)}):\n"
                               + done.stderr.strip())
        os.chmod(tmp, 0o755)
        os.replace(tmp, target)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
    return target
