"""Find or build the C benchmark program (the C files of bench/, shipped beside this module;
what it does and prints: docs/formats/benchmark-output.md).

The binary is compiled with `mpicc` on first use into a cache directory, named after the hash of
its sources and the compiler wrapper (so an edited source is rebuilt, and Open MPI and MPICH
binaries live side by side), and concurrent sweeps never see a half-written file.
"""
import functools
import hashlib
import math
import os
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from collsel.core.io import jsonfile, values
from collsel.errors import CollselError, InputError

CFLAGS = ["-O2", "-std=c99", "-Wall", "-Wextra", "-Werror", "-pedantic"]
# One output line per message size, in the order of --sizes (`#@key=value` header lines first).
OUTPUT_FIELDS = ("msg_size", "mean_us", "median_us", "min_us", "max_us", "stdev_us",
                 "ci_halfwidth_us", "n", "ci_met")
# Paired mode (--methods): after each message size one line per method, in the order of
# --methods; `algorithm` is the token exactly as given (Open MPI id, MPICH algorithm name).
PAIRED_OUTPUT_FIELDS = ("msg_size", "algorithm", "segsize", "faninout", *OUTPUT_FIELDS[1:])
# --probe: the paired lines' last field, the median of the size's round probes (µs).
PROBE_FIELD = "probe_us"
# Header lines of what a launch does not measure: `#@skipped=M,...` (sizes at which the
# collective has no call, for every method) and `#@unusable.M=A:S:F,...` (paired: methods whose
# call returned an MPI error at size M, printed before that size's lines).
SKIPPED_KEY = "skipped"
UNUSABLE_PREFIX = "unusable."


def not_measured(key, value):
    """[(msg_size text, method fields)] a header line says will have no output line: the method
    fields (algorithm, segsize, faninout) of an unusable method, () for every method of a
    skipped size; [] for any other line."""
    if key == SKIPPED_KEY:
        return [(m, ()) for m in value.split(",") if m]
    if key.startswith(UNUSABLE_PREFIX):
        m = key[len(UNUSABLE_PREFIX):]
        return [(m, tuple(token.split(":"))) for token in value.split(",") if token]
    return []


# Exit status of the benchmark when a forced algorithm did not take (cvar missing, not
# writable, reads back different, or coll_tuned_use_dynamic_rules off under Open MPI).
EXIT_FORCING_FAILED = 6
# The compiler wrapper of each MPI family on Debian (`mpicc` is the alternatives' default).
MPICC = {"openmpi": "mpicc", "mpich": "mpicc.mpich", "intel": "mpicc"}   # intel: --mpi-home
# The ranges of the benchmark's options, as bench/options.c checks them (options_parse_long /
# options_parse_double calls in options_parse); the sweep and model fit check their flags
# against these through core.io.values before anything runs.
MSG_SIZE = (0, 2**31 - 1)           # m is passed to MPI as an int count
TIME_CAP_S = (1e-6, 1e6)            # --time-cap
REL_CI = (1e-6, 10.0)               # --rel-ci
REPS = (2, 100_000_000)             # --min-reps, --max-reps
WARMUP = (0, 1_000_000)             # --warmup
REPETITIONS = (1, REPS[1])          # n of one output line (one call can exceed the time cap)


def check_field(key, text, where):
    """One statistic of an output line (or of a journal line that keeps it), checked: the times
    through core.io.values.time_us, the spreads finite and >= 0 (the CI of a single repetition is
    inf), n a repetition count, ci_met 0 or 1. Returns the number or raises InputError naming
    `where`."""
    if key in ("mean_us", "median_us", "min_us", "max_us", PROBE_FIELD):
        return values.time_us(text, key, where)
    if key in ("stdev_us", "ci_halfwidth_us"):
        try:
            number = float(text)
        except ValueError:
            number = math.nan
        if not (number >= 0 and (math.isfinite(number) or key == "ci_halfwidth_us")):
            raise InputError(f"{where + ': ' if where else ''}{key} '{text[:30]}' is not a "
                             "number >= 0")
        return number
    if key in ("n", "ci_met"):
        low, high = REPETITIONS if key == "n" else (0, 1)
        try:
            return values.integer(text, key, low, high, where)
        except ValueError:      # int() refuses numbers of thousands of digits
            raise InputError(f"{where + ': ' if where else ''}{key} '{text[:20]}...' out of "
                             f"range [{low}, {high}]") from None
    raise KeyError(key)


@dataclass(frozen=True)
class Capabilities:
    """What the shipped benchmark can run, as the program itself reports it (`collsel_bench
    --capabilities`, kept beside its sources as capabilities.json, which `make
    bench-capabilities` writes and a test compares with the program's own answer), so collsel
    refuses up front exactly what the benchmark would refuse after a launch, without building
    it first (a dry run or a batch script builds nothing here)."""
    collectives: tuple          # --collective names
    sizeless: tuple             # collectives without a message size (barrier: --sizes 0)
    max_sizes: int              # message sizes in one launch
    max_methods: int            # paired: methods in one launch
    max_reps: int               # --max-reps; paired: --max-reps x methods


BENCH_DIR = "bench"                         # the program's sources, beside this module
CAPABILITIES_FILE = "capabilities.json"     # in BENCH_DIR: its --capabilities output


def capabilities_from(doc, where):
    """Capabilities from the parsed --capabilities output `doc`; InputError naming `where`
    when it is not what the program prints."""
    def names(key):
        value = doc.get(key) if isinstance(doc, dict) else None
        return tuple(value) if isinstance(value, list) and all(
            isinstance(n, str) for n in value) else None

    collectives, sizeless = names("collectives"), names("sizeless")
    limits = [doc.get(k) for k in ("max_sizes", "max_methods", "max_reps")] if collectives else []
    if not (collectives and sizeless is not None and set(sizeless) <= set(collectives)
            and all(isinstance(n, int) and not isinstance(n, bool) and n > 0 for n in limits)):
        raise InputError(f"{where}: not the benchmark's capabilities (collectives, sizeless, "
                         "max_sizes, max_methods, max_reps); reinstall collsel")
    return Capabilities(collectives, sizeless, *limits)


@functools.lru_cache(maxsize=1)
def capabilities():
    """The shipped benchmark's Capabilities; InputError when the file is missing or broken."""
    path = source_dir() / CAPABILITIES_FILE
    return capabilities_from(jsonfile.read(path, "cannot read the benchmark's capabilities "
                                           "(reinstall collsel)"), path)


def source_dir():
    """The benchmark's sources, package data of collsel (found the same way in a wheel)."""
    return Path(str(resources.files(__package__).joinpath(BENCH_DIR)))


def source_path():
    """The benchmark's main source file (its top comment names the others)."""
    return source_dir() / "collsel_bench.c"


def sources():
    """Every C file of the program, in name order: all of them are compiled together."""
    return sorted(source_dir().glob("*.c"))


def compile_command(compiler, output, flags=CFLAGS):
    """The compiler's command line building the program into `output`."""
    return [compiler, *flags, "-o", str(output), *map(str, sources()), "-lm"]


def source_digest():
    """SHA-256 over every source and header of the program (names and contents), None when
    the program's sources are missing."""
    if not source_path().is_file():
        return None
    digest = hashlib.sha256()
    for part in sorted([*source_dir().glob("*.c"), *source_dir().glob("*.h")]):
        digest.update(part.name.encode() + b"\0" + part.read_bytes())
    return digest.hexdigest()


def cache_dir():
    if os.environ.get("COLLSEL_CACHE"):
        return Path(os.environ["COLLSEL_CACHE"])
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "collsel"


def cached_binary(mpicc="mpicc"):
    """The cache path of the binary built by `mpicc`: the default wrapper keeps the historical
    name, any other (mpicc.mpich, a full path) gets its own, so builds of different MPIs
    never overwrite each other."""
    digest = source_digest()
    if digest is None:
        return None
    return cached_path("collsel_bench", digest, mpicc)


def cached_path(stem, digest, mpicc="mpicc", suffix=""):
    """cache_dir()/<stem>-<digest>[-<wrapper>-<tag>]<suffix>: one file per source version and
    compiler wrapper (the benchmark, the coll/base probe of `collsel verify`)."""
    if mpicc == "mpicc":
        return cache_dir() / f"{stem}-{digest[:16]}{suffix}"
    tag = hashlib.sha256(mpicc.encode()).hexdigest()[:8]
    name = "".join(c if c.isalnum() or c in "._-" else "_" for c in os.path.basename(mpicc))
    return cache_dir() / f"{stem}-{digest[:16]}-{name[:40]}-{tag}{suffix}"


def locate(explicit=None, mpicc="mpicc", build=True, env=None):
    """Path of the benchmark binary: `explicit` (--bench), $COLLSEL_BENCH, or the cached build
    (compiled with `env` added to the environment: an MPI installation's, mpi_home)."""
    path = explicit or os.environ.get("COLLSEL_BENCH")
    if path:
        if not (os.path.isfile(path) and os.access(path, os.X_OK)):
            raise InputError(f"benchmark program '{path}' is not an executable file")
        return os.path.abspath(path)
    target = cached_binary(mpicc)
    if target is None:
        raise InputError(f"benchmark source {source_path()} not found (a broken collsel "
                         "install?); reinstall collsel, or build it and pass --bench PATH")
    if target.is_file() or not build:
        return str(target)
    return str(compile_bench(target, mpicc, env))


def compile_bench(target, mpicc="mpicc", env=None):
    return compile_cached(target, [*CFLAGS, *map(str, sources()), "-lm"], "the benchmark",
                          mpicc, env)


def compile_cached(target, arguments, what, mpicc="mpicc", env=None):
    """`mpicc ARGUMENTS -o TARGET`, written atomically (concurrent runs never see a half-written
    file); `what` names the product in errors."""
    compiler = shutil.which(mpicc)
    if compiler is None:
        package = "libmpich-dev" if "mpich" in os.path.basename(mpicc) else "libopenmpi-dev"
        raise InputError(f"'{mpicc}' not found on PATH: install {package} (make setup) "
                         "or pass --mpicc / --bench")
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=".build-")
    os.close(fd)
    cmd = [compiler, *arguments, "-o", tmp]
    try:
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=300,
                              env={**os.environ, **(env or {})})
        if done.returncode != 0:
            raise CollselError(f"compiling {what} failed ({' '.join(cmd)}):\n"
                               + done.stderr.strip())
        os.chmod(tmp, 0o755)
        os.replace(tmp, target)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
    return target
