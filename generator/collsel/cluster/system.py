"""Running the system tools the cluster is made of (ip, tc, munged, slurm), bounded in time;
a failure is one line naming the command and what it printed."""
import subprocess
import time

from collsel.errors import CollselError
from collsel.cluster import processes

TIMEOUT_S = 20


def run(cmd, *, timeout=TIMEOUT_S, check=True, env=None):
    """Run `cmd` (a list); its CompletedProcess (text). With `check`, a non-zero exit or a
    timeout raises CollselError naming the command and its first line of output."""
    try:
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env,
                              stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        if check:
            raise CollselError(f"`{' '.join(cmd)}` did not finish in {timeout} s") from None
        return subprocess.CompletedProcess(cmd, 124, "", "timeout")
    except FileNotFoundError:
        if check:
            raise CollselError(f"{cmd[0]} not found: install it (make setup)") from None
        return subprocess.CompletedProcess(cmd, 127, "", "not found")
    if check and done.returncode != 0:
        said = (done.stderr or done.stdout).strip().splitlines()
        raise CollselError(f"`{' '.join(cmd)}` failed (exit {done.returncode})"
                           + (f": {said[0]}" if said else ""))
    return done


class DaemonFailed(CollselError):
    """A daemon did not start or the cluster did not come up; `log` holds why."""

    def __init__(self, what, log):
        super().__init__(f"{what}: see {log}")
        self.what, self.log = what, log


def start_daemon(cmd, what, pid_file, log, timeout_s=10.0):
    """Run `cmd`, which starts a daemon writing `pid_file`, and wait until that PID runs; else
    DaemonFailed naming `log`, to which what `cmd` printed is added (a daemon that fails before
    it opens its log, on a bad option or configuration, says why only there)."""
    done = run(cmd, check=False)
    deadline = time.monotonic() + timeout_s
    # A daemon's starter exits 0 once it has forked the daemon, non-zero when it could not.
    while done.returncode == 0 and time.monotonic() < deadline:
        if processes.alive(processes.read_pid(pid_file)):
            return
        time.sleep(0.05)
    with open(log, "a") as f:
        f.write(f"collsel cluster: `{' '.join(cmd)}` exited {done.returncode}\n"
                f"{done.stdout}{done.stderr}")
    raise DaemonFailed(f"{what} did not start", log)
