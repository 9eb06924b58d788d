"""The one bounded flock wait (collsel.core.io.flock)."""
import fcntl
import os

from collsel.core.io.flock import wait_exclusive


def test_wait_runs_out_while_held_then_takes_the_lock(tmp_path):
    path = tmp_path / "x.lock"
    holder = os.open(path, os.O_RDWR | os.O_CREAT)
    waiter = os.open(path, os.O_RDWR)
    try:
        fcntl.flock(holder, fcntl.LOCK_EX)
        told = []
        assert wait_exclusive(waiter, 0.2, step_s=0.05, on_first_wait=lambda: told.append(1)) \
            is False
        assert told == [1]                      # told once, not at every retry
        fcntl.flock(holder, fcntl.LOCK_UN)
        assert wait_exclusive(waiter, 0.2, step_s=0.05) is True
        # now the waiter holds it: the former holder cannot take it
        try:
            fcntl.flock(holder, fcntl.LOCK_EX | fcntl.LOCK_NB)
            raise AssertionError("lock taken twice")
        except BlockingIOError:
            pass
    finally:
        os.close(holder)
        os.close(waiter)
