"""The sweep: each (P, method) measured in `launches` separate benchmark launches, in rounds (all
methods of one P once, then again), so a point's launches are spread over minutes; a point's row
goes into the table when its last launch reports it.

Durability: the table and its journal TABLE.launches (one line per point and launch) start as
metadata + header (written atomically); each finished point of a launch is then appended to the
journal, and each finished point to the table, as one whole line with a single write() followed
by fsync(), so a sweep killed at any moment leaves complete rows plus at most one truncated last
line per file, which `--resume` drops.
Failures (non-zero exit, crash, hang past the silence timeout, wrong output) become `# failed.K=`
metadata lines and the sweep goes on with the next point.
"""
import csv
import datetime
import os
import platform
import selectors
import shlex
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass

from collsel import __version__
from collsel.core import algorithms
from collsel.errors import CollselError, InputError, located
from collsel.core.files import write_file
from collsel.core.table import COLUMN_ORDER, render_table
from collsel.sources.measure import benchmark_program as bench, launchers
from collsel.sources.sweep import launch_stats as statistics
from collsel.sources.measure.progress import Progress

COLUMNS = list(COLUMN_ORDER)
# Every launch's statistics of every point, kept beside the table (TABLE.launches): the table row
# of a point is written once all its launches are in, from this journal.
JOURNAL_COLUMNS = ["collective", "comm_size", "msg_size", "algorithm", "segsize", "launch",
                   *statistics.LAUNCH_FIELDS]
DEFAULT_COMM_SIZES = (2, 3, 4, 6, 8, 12, 16)
DEFAULT_SEGSIZES = (0, 1024, 8192, 32768, 131072)
BENCH_FIELDS = ("msg_size", "mean_us", "median_us", "min_us", "max_us", "stdev_us",
                "ci_halfwidth_us", "n", "ci_met")


def default_msg_sizes(low=1, high=4 << 20):
    """Powers of two and the midpoints 3·2^k between them."""
    sizes = {2**k for k in range(64) if low <= 2**k <= high}
    sizes |= {3 * 2**k for k in range(62) if low <= 3 * 2**k <= high}
    return sorted(sizes)


_SUFFIX = {"": 0, "k": 10, "kb": 10, "kib": 10, "m": 20, "mb": 20, "mib": 20, "g": 30,
           "gb": 30, "gib": 30, "b": 0}


def parse_size(text, what):
    t = text.strip().lower()
    digits = len(t) - len(t.lstrip("0123456789"))
    if digits == 0 or t[digits:] not in _SUFFIX:
        raise InputError(f"{what}: '{text}' is not a size in bytes (e.g. 4096, 4K, 4MiB)")
    return int(t[:digits]) << _SUFFIX[t[digits:]]


def parse_size_list(text, what):
    values = [parse_size(x, what) for x in text.split(",") if x.strip()]
    if not values:
        raise InputError(f"{what}: empty list")
    return sorted(set(values))


def parse_comm_sizes(text):
    values = set()
    for part in (x.strip() for x in text.split(",")):
        if not part:
            continue
        lo, _, hi = part.partition("-") if not part.startswith("-") else (part, "", "")
        try:
            lo_v = int(lo)
            hi_v = int(hi) if hi else lo_v
        except ValueError:
            raise InputError(f"--comm-sizes: '{part}' is not an integer or a range A-B") from None
        if lo_v < 1 or hi_v < 1:
            raise InputError(f"--comm-sizes: communicator size {min(lo_v, hi_v)} is below 1 "
                             "(P must be at least 1)")
        if hi_v < lo_v:
            raise InputError(f"--comm-sizes: empty range '{part}'")
        values.update(range(lo_v, hi_v + 1))
    if not values:
        raise InputError("--comm-sizes: empty list")
    return sorted(values)


@dataclass(frozen=True, order=True)
class Method:
    algorithm: int
    segsize: int

    def label(self, collective):
        name = algorithms.algorithm_name(collective, self.algorithm)
        return f"{self.algorithm}:{name}" + (f"/seg={self.segsize}" if self.segsize else "")


def plan_methods(collective, algorithms_text=None, segsizes_text=None, baseline=True):
    """Methods to measure. Segmenting algorithms get every segment size; the others get 0.
    `ALG:SEG` pins one segment size. Asking for a segment size on an algorithm that ignores it
    is an error rather than a silently repeated measurement."""
    segsizes = (parse_size_list(segsizes_text, "--segsizes") if segsizes_text
                else list(DEFAULT_SEGSIZES))
    methods = set()
    if algorithms_text:
        items = [x.strip() for x in algorithms_text.split(",") if x.strip()]
        if not items:
            raise InputError("--algorithms: empty list")
    else:
        items = [str(a) for a in sorted(algorithms.ALGORITHMS[collective]) if a != 0]
    for item in items:
        name, _, seg = item.partition(":")
        alg = algorithms.algorithm_id(collective, name)
        label = f"{collective} algorithm {alg} ({algorithms.algorithm_name(collective, alg)})"
        if seg:
            seg_v = parse_size(seg, f"--algorithms {item}")
            if seg_v and not algorithms.segments(collective, alg):
                raise InputError(f"{label} ignores the segment size; '{item}' asks for "
                                 f"{seg_v} bytes (use segment size 0)")
            methods.add(Method(alg, seg_v))
        elif alg == 0 or not algorithms.segments(collective, alg):
            if algorithms_text and segsizes_text and any(segsizes):
                raise InputError(f"{label} ignores the segment size, but --segsizes "
                                 f"{segsizes_text} was given for it; drop it from --algorithms "
                                 "or pin ALG:0")
            methods.add(Method(alg, 0))
        else:
            methods.update(Method(alg, s) for s in segsizes)
    if baseline:
        methods.add(Method(algorithms.BASELINE_ALGORITHM, 0))
    return sorted(methods)


def mca_settings(collective, method):
    prefix = f"coll_tuned_{collective}_algorithm"
    return {"coll_tuned_use_dynamic_rules": 1, prefix: method.algorithm,
            prefix + "_segmentsize": method.segsize}


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


# ---------------------------------------------------------------------------------------------
# The table file


class TableFile:
    """Append-only access to the table (or journal) being filled."""

    def __init__(self, path, columns):
        self.path = path
        self.columns = columns
        self.fd = None

    def create(self, metadata):
        write_file(self.path, render_table([], metadata, columns=self.columns))

    def open(self):
        self.fd = os.open(self.path, os.O_WRONLY | os.O_APPEND)

    def append(self, text):
        data = text.encode("utf-8")
        written = 0
        while written < len(data):  # one write() in practice; the loop only guards short writes
            written += os.write(self.fd, data[written:])
        os.fsync(self.fd)

    def append_row(self, row):
        self.append(render_table([row], {}, columns=self.columns).split("\n", 1)[1])

    def append_meta(self, key, value):
        self.append(f"# {key}={' '.join(str(value).split())}\n")

    def close(self):
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None


def load_existing(path, columns, collective, repair=True):
    """Metadata and rows of a table (or journal) this driver wrote. A truncated last line (the
    point in flight when a sweep was killed) is cut off the file unless `repair` is false.
    Returns (metadata, rows as {column: text}, dropped bytes)."""
    with open(path, "rb") as f:
        raw = f.read()
    dropped = b""
    if raw and not raw.endswith(b"\n"):
        cut = raw.rfind(b"\n") + 1
        dropped = raw[cut:]
        raw = raw[:cut]
        if repair:
            os.truncate(path, cut)
    meta, header, rows = {}, None, []
    for lineno, text in enumerate(raw.decode("utf-8", errors="replace").splitlines(), 1):
        if not text.strip():
            continue
        if text.startswith("#"):
            key, eq, value = text[1:].strip().partition("=")
            if eq:
                meta[key.strip()] = value.strip()
            continue
        fields = next(csv.reader([text]))
        if header is None:
            if fields != columns:
                raise located(path, lineno, "not written by this version of 'collsel sweep' "
                              f"(header {','.join(fields)}); cannot resume into it")
            header = fields
            continue
        if len(fields) != len(columns):
            raise located(path, lineno, f"{len(fields)} fields, expected {len(columns)}")
        if fields[0] != collective:
            raise located(path, lineno, f"row for collective '{fields[0]}', but this sweep "
                          f"measures '{collective}'")
        row = dict(zip(columns, fields))
        try:
            for key in ("comm_size", "msg_size", "algorithm", "segsize", "launch"):
                if key in row:
                    row[key] = int(row[key])
        except ValueError:
            raise located(path, lineno, "malformed row") from None
        rows.append(row)
    if "collective" in meta and meta["collective"] != collective:
        raise InputError(f"{path}: table is a '{meta['collective']}' sweep, not '{collective}'")
    return meta, rows, dropped


def point_key(row):
    return (row["comm_size"], row["msg_size"], row["algorithm"], row["segsize"])


# ---------------------------------------------------------------------------------------------
# One launch


class LaunchResult:
    def __init__(self):
        self.meta = {}
        self.rows = 0
        self.failure = None     # text, when the launch ended badly
        self.header_seen = False


def _die_with_parent():
    """Runs in the child before exec: on Linux, SIGTERM the launch when the sweep dies, even by
    SIGKILL, so a killed sweep leaves no mpirun behind (mpirun passes SIGTERM to its ranks)."""
    try:
        import ctypes
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, signal.SIGTERM)   # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass


def _kill(proc):
    """Stop a launch and everything it started (it runs in its own session)."""
    for sig, wait in ((signal.SIGTERM, 5), (signal.SIGKILL, 5)):
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            return
        try:
            proc.wait(timeout=wait)
            return
        except subprocess.TimeoutExpired:
            continue


def run_launch(argv, env, sizes, silence_timeout, on_point):
    """Run one benchmark launch; call on_point(fields) for each message-size line as it
    arrives. The launch is killed when it prints nothing for `silence_timeout` seconds."""
    result = LaunchResult()
    expected = list(sizes)
    with tempfile.TemporaryFile() as errf:
        proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=errf, stdin=subprocess.DEVNULL,
                                env={**os.environ, **env}, start_new_session=True,
                                preexec_fn=_die_with_parent if sys.platform == "linux" else None)
        sel = selectors.DefaultSelector()
        sel.register(proc.stdout, selectors.EVENT_READ)
        buf = b""
        deadline = time.monotonic() + silence_timeout
        try:
            while True:
                left = deadline - time.monotonic()
                if left <= 0:
                    _kill(proc)
                    result.failure = (f"no output for {silence_timeout:g} s (hang?); "
                                      "launch killed")
                    break
                if not sel.select(timeout=min(left, 1.0)):
                    continue
                chunk = os.read(proc.stdout.fileno(), 65536)
                if not chunk:
                    break
                buf += chunk
                deadline = time.monotonic() + silence_timeout
                while b"\n" in buf:
                    line, buf = buf.split(b"\n", 1)
                    text = line.decode("utf-8", errors="replace").strip()
                    if text.startswith("#@"):
                        key, _, value = text[2:].partition("=")
                        result.meta[key] = value
                        result.header_seen = True
                    elif text.startswith("#") or not text:
                        continue
                    else:
                        fields = text.split()
                        if (len(fields) != len(BENCH_FIELDS) or not expected
                                or fields[0] != str(expected[0])):
                            _kill(proc)
                            result.failure = f"unexpected benchmark output line '{text[:120]}'"
                            break
                        expected.pop(0)
                        on_point(dict(zip(BENCH_FIELDS, fields)))
                        result.rows += 1
                if result.failure:
                    break
        except BaseException:
            _kill(proc)
            raise
        finally:
            sel.close()
        rc = proc.wait()
        proc.stdout.close()
        if result.failure is None and rc != 0:
            how = (f"killed by signal {-rc}" if rc < 0 else
                   f"exited with status {rc} (a rank died of signal {rc - 128})" if rc > 128 else
                   f"exited with status {rc}")
            errf.flush()
            result.failure = f"benchmark {how}: " + _tail_file(errf)
        elif result.failure is None and expected:
            result.failure = (f"benchmark exited 0 but reported {result.rows} of "
                              f"{len(sizes)} message sizes")
        elif result.failure and "hang" not in result.failure:
            result.failure += ": " + _tail_file(errf)
    return result


def _tail_file(f):
    f.seek(0)
    lines = [ln.strip() for ln in f.read().decode("utf-8", errors="replace").splitlines()
             if ln.strip()]
    # Our own messages first, then mpirun's one-line verdict, then whatever came last
    # (backtraces are long and say little).
    mine = [ln for ln in lines if "collsel_bench:" in ln]
    verdict = [ln for ln in lines if "exited on signal" in ln or "noticed that" in ln]
    return (" | ".join((mine or verdict or lines)[-3:]) or "no error output")[:400]


# ---------------------------------------------------------------------------------------------
# The sweep


@dataclass
class Config:
    collective: str
    out: str
    comm_sizes: list
    msg_sizes: list
    methods: list
    launcher: launchers.Launcher
    bench_path: str
    bench_args: list            # options passed to every benchmark run
    silence_timeout: float
    resume: bool = False
    force: bool = False
    dry_run: bool = False
    command: str = ""
    options: str = ""
    progress_interval: float = 30.0
    launches: int = 3           # launches per point; the point's CI is taken across them
    rel_ci: float = 0.025       # precision target of the combined CI (ci_met)


def _bench_argv(cfg, sizes):
    return [cfg.bench_path, "--collective", cfg.collective,
            "--sizes", ",".join(str(m) for m in sizes), *cfg.bench_args]


def machine_metadata():
    """Where a measurement ran: recorded with every sweep and model-fit experiment file."""
    return {"host": platform.node() or "unknown", "nproc": launchers.cores(),
            "cpu_model": cpu_model(), "os": f"{platform.system()} {platform.release()}",
            "ompi_version": ompi_version()}


def header_metadata(cfg):
    methods = " ".join(m.label(cfg.collective) for m in cfg.methods)
    mapping = "; ".join(f"P={p}: {cfg.launcher.mapping(p)}" for p in cfg.comm_sizes)
    return {
        "source": "collsel sweep",
        "collsel_version": __version__,
        "collective": cfg.collective,
        "statistic": statistics.STATISTIC,
        "launches_per_point": cfg.launches,
        "journal": os.path.basename(journal_path(cfg.out)) + " (every launch of every point)",
        "precision_target": "each launch repeats until the 95 % CI half-width of its mean <= "
                            "rel_ci x mean (after min_reps), or max_reps, or time_cap spent on "
                            f"the point; ci_met: the CI across launches <= {cfg.rel_ci:g} x "
                            "time_us",
        "bench_options": " ".join(cfg.bench_args),
        "baseline": "algorithm 0 rows = Open MPI's fixed decision (coll_tuned_use_dynamic_rules=1, "
                    "algorithm 0), a baseline, not a candidate",
        "forcing": f"--mca coll_tuned_use_dynamic_rules 1 --mca coll_tuned_{cfg.collective}"
                   f"_algorithm A --mca coll_tuned_{cfg.collective}_algorithm_segmentsize S",
        **machine_metadata(),
        "launcher": f"{cfg.launcher.name} ({cfg.launcher.program})",
        "mapping": mapping,
        "date": now_iso(),
        "command": cfg.command,
        "options": cfg.options,
        "comm_sizes": ",".join(map(str, cfg.comm_sizes)),
        "msg_sizes": ",".join(map(str, cfg.msg_sizes)),
        "methods": methods,
        "bench_source_sha256": bench.source_digest() or "unknown",
    }


def journal_path(out):
    return out + ".launches"


def _next_index(meta, prefix):
    used = [int(k[len(prefix):].split(".")[0]) for k in meta
            if k.startswith(prefix) and k[len(prefix):].split(".")[0].isdigit()]
    return max(used, default=0) + 1


class Plan:
    """What is done and what is left: table rows, journal entries and the launches to run.

    Round r (1..launches) of P measures every method once; a point's row is written when its
    launches are all in the journal."""

    def __init__(self, cfg, done, journal_rows):
        self.cfg = cfg
        self.done = done                       # points with a table row
        self.partial = {}                      # point -> {launch: fields}, no row yet
        for row in journal_rows:
            key = point_key(row)
            if key not in done and 1 <= row["launch"] <= cfg.launches:
                self.partial.setdefault(key, {})[row["launch"]] = row
        # A sweep killed between a point's last journal line and its table row: write the row
        # from the journal when the sweep resumes.
        self.ready = sorted(k for k, got in self.partial.items() if len(got) == cfg.launches)
        self.launches = []                     # (P, round, method, sizes)
        for p in cfg.comm_sizes:
            for r in range(1, cfg.launches + 1):
                for method in cfg.methods:
                    sizes = [m for m in cfg.msg_sizes if self.needs(p, m, method, r)]
                    if sizes:
                        self.launches.append((p, r, method, sizes))
        self.total = len(cfg.comm_sizes) * len(cfg.methods) * len(cfg.msg_sizes) * cfg.launches
        self.left = sum(len(s) for *_, s in self.launches)

    def needs(self, p, m, method, r):
        key = (p, m, method.algorithm, method.segsize)
        return key not in self.done and r not in self.partial.get(key, {})

    def add(self, key, r, fields):
        """Record launch r of a point; returns the point's combined row once complete."""
        got = self.partial.setdefault(key, {})
        got[r] = fields
        return self.combine(key) if len(got) == self.cfg.launches else None

    def combine(self, key):
        got = self.partial.pop(key)
        self.done.add(key)
        return statistics.combine([got[i] for i in sorted(got)], self.cfg.rel_ci)


def _table_row(collective, key, stats):
    return {"collective": collective, "comm_size": key[0], "msg_size": key[1],
            "algorithm": key[2], "segsize": key[3], "faninout": 0, **stats}


def run(cfg, stdout=None, stderr=None):
    """Run (or with dry_run, print) the sweep. Returns the exit status."""
    stdout = stdout or sys.stdout
    stderr = stderr or sys.stderr
    journal_file = journal_path(cfg.out)
    done, journal_rows, meta, dropped = set(), [], {}, []
    exists = os.path.exists(cfg.out)
    if exists and not (cfg.resume or cfg.force or cfg.dry_run):
        raise InputError(f"{cfg.out} exists: pass --resume to continue that sweep or --force "
                         "to start it again")
    resuming = exists and cfg.resume
    if resuming:
        repair = not cfg.dry_run
        meta, rows, cut = load_existing(cfg.out, COLUMNS, cfg.collective, repair)
        done = {point_key(r) for r in rows}
        dropped.append(cut)
        if os.path.exists(journal_file):
            _, journal_rows, cut = load_existing(journal_file, JOURNAL_COLUMNS, cfg.collective,
                                                 repair)
            dropped.append(cut)
    plan = Plan(cfg, done, journal_rows)

    if cfg.dry_run:
        for p, r, method, sizes in plan.launches:
            argv, env = cfg.launcher.command(p, mca_settings(cfg.collective, method),
                                             _bench_argv(cfg, sizes))
            stdout.write(launchers.render(argv, env) + "\n")
        stdout.write(f"# {len(plan.launches)} launches, {plan.left} of {plan.total} point "
                     f"launches to measure ({cfg.launches} per point)\n")
        return 0

    table = TableFile(cfg.out, COLUMNS)
    journal = TableFile(journal_file, JOURNAL_COLUMNS)
    if not resuming:
        header = header_metadata(cfg)
        journal.create({"source": header["source"], "collective": cfg.collective,
                        "table": os.path.basename(cfg.out)})
        table.create(header)
        meta = {}
    elif not os.path.exists(journal_file):
        journal.create({"source": "collsel sweep", "collective": cfg.collective,
                        "table": os.path.basename(cfg.out)})
    run_no = _next_index(meta, "run.")
    fail_no = _next_index(meta, "failed.")
    table.open()
    journal.open()
    # A sweep stopped by `kill` (SIGTERM; background jobs also ignore SIGINT) still kills its
    # running launch and closes the table: the handler turns the signal into an exception.
    def _terminate(signum, frame):
        raise KeyboardInterrupt
    previous = signal.signal(signal.SIGTERM, _terminate)
    started = time.monotonic()
    failures = 0
    progress = Progress(plan.total, plan.total - plan.left, stderr, cfg.progress_interval)
    try:
        table.append_meta(f"run.{run_no}.start", now_iso())
        table.append_meta(f"run.{run_no}.loadavg_start", loadavg())
        if run_no > 1:
            table.append_meta(f"run.{run_no}.command", cfg.command)
            for cut in dropped:
                if cut:
                    table.append_meta(f"run.{run_no}.dropped_truncated_line",
                                      cut.decode("utf-8", "replace")[:200])
        for key in plan.ready:
            table.append_row(_table_row(cfg.collective, key, plan.combine(key)))
        have_library = "mpi_library" in meta
        for p, r, method, sizes in plan.launches:
            label = f"P={p} {method.label(cfg.collective)} launch {r}/{cfg.launches}"
            progress.label = label
            progress.show()
            todo = list(sizes)
            while todo:
                argv, env = cfg.launcher.command(p, mca_settings(cfg.collective, method),
                                                 _bench_argv(cfg, todo))

                def on_point(fields, p=p, r=r, method=method):
                    key = (p, int(fields["msg_size"]), method.algorithm, method.segsize)
                    if not float(fields["median_us"]) > 0:
                        raise CollselError(f"benchmark reported a non-positive time: {fields}")
                    entry = dict(zip(("comm_size", "msg_size", "algorithm", "segsize"), key))
                    journal.append_row({"collective": cfg.collective, **entry, "launch": r,
                                        **{f: fields[f] for f in statistics.LAUNCH_FIELDS}})
                    combined = plan.add(key, r, fields)
                    if combined is not None:
                        table.append_row(_table_row(cfg.collective, key, combined))
                    progress.advance(1)

                result = run_launch(argv, env, todo, cfg.silence_timeout, on_point)
                if not have_library and result.meta.get("mpi_library"):
                    table.append_meta("mpi_library", result.meta["mpi_library"])
                    table.append_meta("runtime_type", result.meta.get("runtime_type", "?"))
                    table.append_meta("timer", result.meta.get("timer", "?"))
                    have_library = True
                todo = todo[result.rows:]
                if result.failure is None:
                    break
                # The point in flight failed; without even a header nothing of this launch
                # would work, so all its remaining points are given up together.
                lost = todo if not result.header_seen else todo[:1]
                todo = [] if not result.header_seen else todo[1:]
                sizes_text = (str(lost[0]) if len(lost) == 1
                              else f"{lost[0]}..{lost[-1]} ({len(lost)} sizes)")
                reason = (f"P={p} algorithm={method.algorithm} segsize={method.segsize} "
                          f"msg_size={sizes_text} launch={r}: {result.failure}; command: "
                          f"{launchers.render(argv, env)}")
                table.append_meta(f"failed.{fail_no}", reason)
                fail_no += 1
                failures += len(lost)
                progress.advance(len(lost))
                progress.message(f"collsel sweep: point failed, going on: {reason[:300]}")
    finally:
        table.append_meta(f"run.{run_no}.end", now_iso())
        table.append_meta(f"run.{run_no}.wall_s", f"{time.monotonic() - started:.1f}")
        table.append_meta(f"run.{run_no}.loadavg_end", loadavg())
        table.append_meta(f"run.{run_no}.failed_points", failures)
        table.close()
        journal.close()
        progress.finish()
        signal.signal(signal.SIGTERM, previous)
    if failures:
        raise CollselError(f"{failures} point launch(es) failed, so their points have no row; "
                           f"see the failed.* lines in {cfg.out} (rerun with --resume to retry "
                           "them)")
    return 0


def sbatch_script(cfg, inner_command, ntasks, time_limit, nodes=None, extra=""):
    lines = ["#!/bin/bash",
             f"#SBATCH --job-name=collsel-{cfg.collective}",
             f"#SBATCH --ntasks={ntasks}",
             f"#SBATCH --time={time_limit}",
             "#SBATCH --output=collsel-sweep-%j.log"]
    if nodes:
        lines.append(f"#SBATCH --nodes={nodes}")
    lines += [f"#SBATCH {x}" for x in shlex.split(extra or "")]
    lines += ["# Written by: " + cfg.command,
              "# Submitting it again continues the sweep (--resume).",
              "set -euo pipefail",
              f"cd {shlex.quote(os.getcwd())}",
              inner_command, ""]
    return "\n".join(lines)
