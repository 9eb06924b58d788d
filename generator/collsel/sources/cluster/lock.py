"""One `up` or `down` at a time on the machine (the cluster's names are fixed): an exclusive
`flock` on /run/lock/collsel-cluster.lock, dropped by the kernel however the holder ends. The
empty lock file stays in /run/lock (a tmpfs), as lock files do; removing it would let two
processes lock two different files."""
import contextlib
import fcntl
import os
import time

from collsel.errors import CollselError

PATH = "/run/lock/collsel-cluster.lock"
WAIT_S = 120.0


@contextlib.contextmanager
def held(progress, wait_s=WAIT_S):
    os.makedirs(os.path.dirname(PATH), exist_ok=True)
    fd = os.open(PATH, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
    try:
        deadline, told = time.monotonic() + wait_s, False
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() > deadline:
                    raise CollselError(f"another `collsel cluster up` or `down` has held {PATH} "
                                       f"for {wait_s:.0f} s") from None
                if not told:
                    progress("waiting for another `collsel cluster up` or `down` to finish")
                    told = True
                time.sleep(0.1)
        yield
    finally:
        os.close(fd)
