"""Running the system tools the cluster is made of (ip, tc, munged, slurm), bounded in time;
a failure is one line naming the command and what it printed."""
import subprocess

from collsel.errors import CollselError

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
