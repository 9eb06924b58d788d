"""Running one benchmark launch under supervision, for the sweep and the model experiments.

The launch runs in its own session; its output lines are checked against the message sizes asked
for and handed over one by one as they arrive; a launch silent for too long is killed with
everything it started, and so is a launch whose supervisor dies (even by SIGKILL, on Linux).
A failure (non-zero exit, crash, hang, wrong output) is described in one line that ends with the
useful part of its stderr.
"""
import functools
import os
import selectors
import signal
import subprocess
import sys
import tempfile
import time

from collsel.errors import InputError
from collsel.sources.measure import benchmark_program as bench


class LaunchResult:
    """What a launch reported: its `#@` header items, the sizes it measured, how it ended."""

    def __init__(self):
        self.meta = {}
        self.rows = 0
        self.failure = None     # text, when the launch ended badly
        self.header_seen = False
        self.stderr_last = []   # a failed launch: the last lines of its stderr, as written


def die_with_parent():
    """The preexec_fn of a child that ends with this process (a sweep, a model fit), even when
    it is killed by SIGKILL, so a killed sweep leaves no mpirun behind (mpirun passes SIGTERM to
    its ranks); None where only Linux's death signal could do it."""
    return functools.partial(_die_with_parent, os.getpid()) if sys.platform == "linux" else None


def _die_with_parent(parent):
    """Runs in the child before exec: SIGTERM it when its supervisor `parent` dies. A supervisor
    killed between the fork and this call sends no death signal: the child, its parent
    already gone, ends here instead of starting a launch nobody supervises (which would run
    beside the resumed sweep's own)."""
    try:
        import ctypes
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, signal.SIGTERM)   # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass
    if os.getppid() != parent:
        os._exit(1)


def kill(proc):
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


def _check_line(fields, expected, names):
    """Why an output line is not the next one expected, or None. `expected` entries are the
    leading fields the next line must start with (the message size; paired mode: also the
    method), `names` the line's field names (the rest are statistics, checked as numbers)."""
    if len(fields) != len(names):
        return f"{len(fields)} fields, expected {len(names)}"
    if not expected:
        return "more lines than message sizes asked for"
    lead = expected[0]
    if tuple(fields[:len(lead)]) != lead:
        return (f"message size {fields[0][:30]}, expected {lead[0]}" if len(lead) == 1 else
                f"'{' '.join(fields[:len(lead)])[:60]}', expected '{' '.join(lead)}'")
    try:
        for key, text in zip(names[len(lead):], fields[len(lead):]):
            bench.check_field(key, text, "")
    except InputError as e:
        return str(e)
    return None


def run_launch(argv, env, sizes, silence_timeout, on_point, lines=None,
               names=bench.OUTPUT_FIELDS, on_header=None, on_meta=None):
    """Run one benchmark launch; call on_point(fields) for each output line as it arrives
    (one per message size; or, given `lines`, the leading fields of each line expected, in
    order, and `names` the line's fields), on_header(meta) before the first one, and
    on_meta(key, value) for every `#@` line. The lines a `#@skipped=` or `#@unusable.M=` line
    announces (bench.not_measured) are no longer expected. The launch is killed when it prints
    nothing for `silence_timeout` seconds."""
    result = LaunchResult()
    expected = list(lines) if lines is not None else [(str(m),) for m in sizes]
    asked = len(expected)
    with tempfile.TemporaryFile() as errf:
        proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=errf, stdin=subprocess.DEVNULL,
                                env={**os.environ, **env}, start_new_session=True,
                                preexec_fn=die_with_parent())
        sel = selectors.DefaultSelector()
        sel.register(proc.stdout, selectors.EVENT_READ)
        buf = b""
        deadline = time.monotonic() + silence_timeout
        try:
            while True:
                left = deadline - time.monotonic()
                if left <= 0:
                    kill(proc)
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
                        gone = bench.not_measured(key, value)
                        expected = [e for e in expected if not any(
                            e[0] == m and (not method or e[1:] == method)
                            for m, method in gone)]
                        if on_meta is not None:
                            on_meta(key, value)
                    elif text.startswith("#") or not text:
                        continue
                    else:
                        fields = text.split()
                        problem = _check_line(fields, expected, names)
                        if problem:
                            kill(proc)
                            result.failure = (f"unexpected benchmark output line "
                                              f"'{text[:120]}' ({problem})")
                            break
                        # only a line of the benchmark's: a launcher's message on stdout (a
                        # box of mpirun's when a node is gone) is a failed launch, not a header
                        if on_header is not None and result.rows == 0:
                            on_header(result.meta)
                        expected.pop(0)
                        on_point(dict(zip(names, fields)))
                        result.rows += 1
                if result.failure:
                    break
        except BaseException:
            kill(proc)
            raise
        finally:
            sel.close()
        rc = proc.wait()
        proc.stdout.close()
        if result.failure is None and rc != 0:
            how = (f"killed by signal {-rc}" if rc < 0 else
                   f"exited with status {rc} (a rank died of signal {rc - 128})"
                   if 128 < rc <= 128 + MAX_SIGNAL else f"exited with status {rc}")
            errf.flush()
            result.failure = f"benchmark {how}: " + stderr_tail(errf)
        elif result.failure is None and expected:
            result.failure = (f"benchmark exited 0 but reported {result.rows} of "
                              f"{asked} {'message sizes' if lines is None else 'lines'}")
        elif result.failure and "hang" not in result.failure:
            result.failure += ": " + stderr_tail(errf)
        if result.failure:
            said = [ln for ln in stderr_lines(errf) if ln.strip("-=*")]   # rules of boxes out
            # the benchmark's own message first (mpirun's box after it would push it out)
            mine = [ln for ln in said if "collsel_bench:" in ln][-2:]
            rest = [ln for ln in said if ln not in mine][len(mine) - STDERR_LAST:]
            result.stderr_last = [ln[:200] for ln in mine + rest]
    return result


MAX_SIGNAL = 64     # Linux's last real-time signal: 255 is mpirun's own failure, no signal
STDERR_LAST = 6     # lines of a failed launch's stderr kept whole (LaunchResult.stderr_last)


def stderr_lines(f):
    """The non-blank lines of a launch's stderr file, stripped."""
    f.seek(0)
    return [ln.strip() for ln in f.read().decode("utf-8", errors="replace").splitlines()
            if ln.strip()]


def stderr_tail(f):
    lines = stderr_lines(f)
    # Our own messages first, then mpirun's one-line verdict, then whatever came last
    # (backtraces are long and say little).
    mine = [ln for ln in lines if "collsel_bench:" in ln]
    verdict = [ln for ln in lines if "exited on signal" in ln or "noticed that" in ln]
    return (" | ".join((mine or verdict or lines)[-3:]) or "no error output")[:400]
