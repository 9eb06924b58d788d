"""The coll/base probe of `collsel verify` (collsel_coll_probe.c, shipped beside this module):
built with the MPI's compiler wrapper on first use into the cache (as the benchmark is), put
into a user's launch, and its per-rank reports read back as core.mpi.verify.RankReport.

A launch is the user's own words (`mpirun -n 4 ./app`, possibly behind `timeout 60` or `env`):
the probe goes in right after the launcher word as `-x LD_PRELOAD=...` (Open MPI's way to give
the ranks an environment variable, on every node), merged with an LD_PRELOAD the launch already
gives (a `-x LD_PRELOAD=...` word, or the environment mpirun passes on), so a preloaded library
such as libcollsel still runs. Nothing else in the words changes.
"""
import hashlib
import os
import re
import shutil
import subprocess
from pathlib import Path

from collsel.core.mpi.verify import Origin, RankReport, RulesRead, Site
from collsel.errors import InputError
from collsel.sources.measure import benchmark_program

SOURCE_NAME = "collsel_coll_probe.c"
CFLAGS = ["-shared", "-fPIC", "-O1", "-Wall", "-Wextra", "-Werror"]
PROBE_DIR_ENV = "COLL_PROBE_DIR"          # where the ranks write probe.<pid>, sites.<pid>
# Open MPI's launchers (4.1: mpirun, mpiexec, orterun; 5.0: prterun too), Debian's alternatives
# names included. MPICH's and Intel's hydra take the environment another way (-genv).
OMPI_LAUNCHER = re.compile(r"(mpirun|mpiexec|orterun|prterun)(\.openmpi)?")
OTHER_LAUNCHER = re.compile(r"(mpirun|mpiexec)(\.mpich|\.hydra)?|mpiexec\.hydra|srun|aprun")
# --mca NAME VALUE and its spellings (4.1: -mca, --mca, -gmca, --gmca; 5.0 also --pmca)
MCA_FLAGS = ("-mca", "--mca", "-gmca", "--gmca", "--pmca")


def source_path():
    """The probe's C source, package data beside this module (not among the benchmark's)."""
    return benchmark_program.source_dir().parent / SOURCE_NAME


def library(mpicc="mpicc", env=None):
    """The probe built by `mpicc` (links the MPI, so a non-MPI process it reaches still loads
    it), from the cache or compiled now."""
    src = source_path()
    if not src.is_file():
        raise InputError(f"probe source {src} not found (a broken collsel install?); "
                         "reinstall collsel")
    digest = hashlib.sha256(src.read_bytes()).hexdigest()
    target = benchmark_program.cached_path("collsel_coll_probe", digest, mpicc, ".so")
    if target.is_file():
        return target
    return benchmark_program.compile_cached(target, [*CFLAGS, str(src), "-ldl"],
                                            "the coll/base probe", mpicc, env)


def fnv1a(data):
    """The probe's hash of a rules file's bytes (collsel_coll_probe.c fnv1a), as hex."""
    h = 14695981039346656037
    for byte in data:
        h = ((h ^ byte) * 1099511628211) & 0xFFFFFFFFFFFFFFFF
    return f"{h:016x}"


# --- the launch ---------------------------------------------------------------------------

def launcher_index(words):
    """The index of the launcher word in LAUNCH (the first whose name is an MPI launcher; words
    before it, such as `timeout 60`, stay in front); InputError when there is none."""
    for i, word in enumerate(words):
        name = os.path.basename(word)
        if OMPI_LAUNCHER.fullmatch(name) or OTHER_LAUNCHER.fullmatch(name):
            return i
    shown = " ".join(words)[:120]
    raise InputError(f"LAUNCH '{shown}': no MPI launcher word (mpirun, mpiexec, orterun, "
                     "prterun): give the command that starts the program, e.g. "
                     "`collsel verify --rules FILE -- mpirun -n 4 ./app`")


def launcher_family(word, env=None):
    """'openmpi', 'mpich', 'intel' or None: what `WORD --version` says it is (a Debian name such
    as mpirun.mpich says it without running)."""
    name = os.path.basename(word)
    if name.endswith(".mpich") or name == "mpiexec.hydra":
        return "mpich"
    if name.endswith(".openmpi"):
        return "openmpi"
    if shutil.which(word, path=(env or os.environ).get("PATH")) is None:
        raise InputError(f"launcher '{word}' not found on PATH")
    try:
        done = subprocess.run([word, "--version"], capture_output=True, text=True, timeout=60,
                              env=env)
    except (OSError, subprocess.SubprocessError) as e:
        raise InputError(f"launcher '{word}': cannot run '{word} --version': {e}") from None
    text = done.stdout + done.stderr
    if "Open MPI" in text or "OpenRTE" in text:
        return "openmpi"
    if "Intel(R) MPI" in text:
        return "intel"
    if "HYDRA" in text:
        return "mpich"
    return None


def mpicc_for(word):
    """The compiler wrapper that belongs to launcher `word`: `mpicc` beside it when the word is
    a path, the Debian alternative of the same suffix (mpirun.openmpi -> mpicc.openmpi), else
    mpicc."""
    if os.sep in word:
        beside = Path(word).with_name("mpicc")
        if beside.is_file():
            return str(beside)
    suffix = os.path.basename(word).partition(".")[2]
    if suffix and shutil.which(f"mpicc.{suffix}"):
        return f"mpicc.{suffix}"
    return "mpicc"


def _preload_words(words, start):
    """(index of the word holding LD_PRELOAD after an -x, its value or None for a bare
    `-x LD_PRELOAD`), or (None, None)."""
    for i in range(start, len(words) - 1):
        if words[i] == "-x" and words[i + 1].split("=", 1)[0] == "LD_PRELOAD":
            value = words[i + 1].split("=", 1)
            return i, (value[1] if len(value) == 2 else None)
    return None, None


def with_probe(words, probe, directory, env=None):
    """The Open MPI launch `words` with the probe in every rank: `-x LD_PRELOAD=PROBE[:THEIRS]
    -x COLL_PROBE_DIR=DIR` right after the launcher word, THEIRS the launch's own LD_PRELOAD
    (its `-x LD_PRELOAD[=...]` word, removed and merged here, else the environment's)."""
    env = os.environ if env is None else env
    at = launcher_index(words)
    index, value = _preload_words(words, at + 1)
    rest = list(words[at + 1:])
    if index is not None:
        del rest[index - at - 1:index - at + 1]
        theirs = value if value is not None else env.get("LD_PRELOAD", "")
    else:
        theirs = env.get("LD_PRELOAD", "")
    preload = ":".join([str(probe)] + ([theirs] if theirs else []))
    return [*words[:at + 1], "-x", f"LD_PRELOAD={preload}", "-x",
            f"{PROBE_DIR_ENV}={directory}", *rest]


def _param_files(launcher, env):
    """Open MPI's MCA parameter files the ranks read, in the order it reads them: the user's,
    then the installation's (beside the launcher's prefix, and Debian's /etc/openmpi)."""
    files = [Path(env.get("HOME", "~")).expanduser() / ".openmpi" / "mca-params.conf"]
    found = shutil.which(launcher, path=env.get("PATH"))
    if found:
        prefix = Path(os.path.realpath(found)).parents[1]
        # a distribution's Open MPI under /usr keeps it in /etc/openmpi (Debian, Ubuntu)
        files.append(Path("/etc/openmpi/openmpi-mca-params.conf") if prefix == Path("/usr")
                     else prefix / "etc" / "openmpi-mca-params.conf")
    return [f for f in dict.fromkeys(files) if f.is_file()]


def _file_setting(path, name):
    """(line number, value) of `name = value` in an MCA parameter file, or None."""
    try:
        lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return None
    found = None
    for number, line in enumerate(lines, 1):
        key, sep, value = line.split("#", 1)[0].partition("=")
        if sep and key.strip() == name:
            found = (number, value.strip())
    return found


def mca_origin(words, name, env=None):
    """Where the launch sets MCA parameter `name`, in Open MPI's order of precedence: its
    --mca flags (the last one), then OMPI_MCA_<name> in the environment, then the parameter
    files (the user's first); Origin(None, what was checked) when nothing does."""
    env = os.environ if env is None else env
    at = launcher_index(words)
    value = None
    for i in range(at + 1, len(words) - 2):
        if words[i] in MCA_FLAGS and words[i + 1] == name:
            value = words[i + 2]
    if value is not None:
        return Origin(value, f"`--mca {name} {value}` in the launch")
    if f"OMPI_MCA_{name}" in env:
        value = env[f"OMPI_MCA_{name}"]
        return Origin(value, f"OMPI_MCA_{name}={value} in the environment")
    files = _param_files(words[at], env)
    for path in files:
        found = _file_setting(path, name)
        if found:
            return Origin(found[1], f"{path}:{found[0]}")
    checked = "".join(f", {p}" for p in files)
    return Origin(None, f"checked: its --mca flags, OMPI_MCA_{name}{checked}")


# --- the reports --------------------------------------------------------------------------

def _unescape(text):
    return re.sub(r"\\x([0-9a-f]{2})", lambda m: chr(int(m.group(1), 16)), text)


def read_report(path):
    """One rank's sites.<pid> file as a RankReport (`complete` False when it lacks its end
    line: the writer died)."""
    report = RankReport(rank=-1, size=-1, complete=False, source=str(path))
    read = None
    for line in Path(path).read_text(encoding="ascii", errors="replace").splitlines():
        key, _, rest = line.partition(" ")
        if key == "rank":
            rank, size = rest.split()
            report.rank, report.size = int(rank), int(size)
        elif key == "finalize":
            report.settings_read = rest.strip() == "1"
        elif key in ("host", "cwd", "library"):
            setattr(report, key, _unescape(rest))
        elif key == "cvar":
            name, _, value = rest.partition(" ")
            report.settings[name] = _unescape(value)
        elif key == "rules_read":
            calls, rc, errno, digest, size, name = rest.split(" ", 5)
            read = dict(name=_unescape(name), rc=int(rc), open_errno=int(errno),
                        open_error="", content_hash=digest if int(errno) == 0 else "",
                        size=int(size))
        elif key == "rules_open_error" and read is not None:
            read["open_error"] = _unescape(rest)
        elif key == "dropped":
            report.dropped = int(rest)
        elif key == "site":
            size, function, nested, nbytes, seg, rule_size, rule_alg, calls = rest.split()
            if nested == "0":
                report.sites.append(Site(int(size), function.removeprefix("ompi_coll_base_"),
                                         int(nbytes), int(seg), int(rule_size), int(rule_alg),
                                         int(calls)))
        elif key == "end":
            report.complete = True
    if read is not None:
        report.rules_read = RulesRead(**read)
    return report


def read_reports(directory):
    """Every rank's report in `directory`, by rank."""
    reports = [read_report(p) for p in sorted(Path(directory).glob("sites.*"))]
    return sorted(reports, key=lambda r: (r.rank, r.source))


def library_version(reports):
    """'4.1.4' from the ranks' MPI_Get_library_version ('Open MPI v4.1.4, ...'), or None."""
    for report in reports:
        m = re.match(r"Open MPI v(\d+\.\d+\.\d+)", report.library)
        if m:
            return m.group(1)
    return None
