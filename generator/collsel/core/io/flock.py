"""Waiting, bounded, for an exclusive `flock`: the one wait loop of every machine-wide lock
(cluster up/down, test sessions on the cluster, the measurement lock in tests)."""
import fcntl
import time


def wait_exclusive(fd, wait_s, step_s=0.1, on_first_wait=None):
    """Take an exclusive flock on `fd`, retrying every `step_s` for at most `wait_s` seconds.
    True when taken, False when the wait ran out. `on_first_wait()` is called once, when the lock
    is found held (to tell the user why nothing happens)."""
    deadline = time.monotonic() + wait_s
    told = False
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return True
        except BlockingIOError:
            if time.monotonic() > deadline:
                return False
            if on_first_wait is not None and not told:
                on_first_wait()
                told = True
            time.sleep(step_s)
