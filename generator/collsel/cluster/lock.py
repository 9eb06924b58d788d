"""One `up` or `down` at a time on the machine (the cluster's names are fixed): an exclusive
`flock` on /run/lock/collsel-cluster.lock, dropped by the kernel however the holder ends. The
empty lock file stays in /run/lock (a tmpfs), as lock files do; removing it would let two
processes lock two different files."""
import contextlib
import os

from collsel.core.io.flock import wait_exclusive
from collsel.errors import CollselError

PATH = "/run/lock/collsel-cluster.lock"
WAIT_S = 120.0


@contextlib.contextmanager
def held(progress, wait_s=WAIT_S):
    os.makedirs(os.path.dirname(PATH), exist_ok=True)
    fd = os.open(PATH, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
    try:
        if not wait_exclusive(fd, wait_s, on_first_wait=lambda: progress(
                "waiting for another `collsel cluster up` or `down` to finish")):
            raise CollselError(f"another `collsel cluster up` or `down` has held {PATH} "
                               f"for {wait_s:.0f} s")
        yield
    finally:
        os.close(fd)
