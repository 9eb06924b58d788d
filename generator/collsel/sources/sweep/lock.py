"""One writer per sweep table: an exclusive lock held for the whole life of a sweep.

The lock is `fcntl.flock` on a lock file beside the table (TABLE.lock, the table's real path, so
two spellings of one table share it). The sweep takes it before it reads, creates, truncates or
repairs anything, and holds it until it exits; the kernel drops it when the process ends in any
way, SIGKILL included, because the lock belongs to the open file and nothing else holds that file
open (it is opened close-on-exec, and launches are started with close_fds). After the lock is
taken the holder writes its PID and command line into the file, so a refused sweep can say who
holds it. The holder removes the file when it ends, still holding the lock, so a finished or
refused sweep leaves nothing behind; after a SIGKILL the file stays, harmlessly (its content is
only informative, the lock is what counts, and the next sweep takes it over). A sweep that locks
a file another one removed meanwhile notices (the path no longer names the file it locked) and
starts again with the new one, so there is never more than one holder.
"""
import fcntl
import os
import time

from collsel.errors import InputError

# A holder is told apart from a sweep starting at the same instant: a refused sweep retries for
# this long (and waits as long for the holder to write its PID) before giving up.
RETRY_S = 0.5
_STEP_S = 0.05
_ATTEMPTS = 20          # lock files replaced under us before giving up (never in practice)


def lock_path(table):
    return os.path.realpath(table) + ".lock"


def _holder(fd):
    """(PID, command) the holder wrote into the lock file, or None before it has written them."""
    try:
        raw = os.pread(fd, 65536, 0)
    except OSError:
        return None
    pid, _, command = raw.decode("utf-8", "replace").partition("\n")
    if not raw.endswith(b"\n") or not pid.strip().isdigit():
        return None
    return pid.strip(), " ".join(command.split())


def _busy(table, fd):
    deadline = time.monotonic() + RETRY_S
    holder = _holder(fd)
    while holder is None and time.monotonic() < deadline:
        time.sleep(_STEP_S)
        holder = _holder(fd)
    who = (f"PID {holder[0]}: {holder[1] or '?'}" if holder
           else f"PID unknown: {lock_path(table)} names no holder yet")
    return InputError(f"{table} is being written by another collsel sweep ({who}); wait for "
                      "it or stop it")


def _open(table):
    path = lock_path(table)
    try:
        return os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o666)
    except OSError as e:
        raise InputError(f"{table}: cannot create its lock file {path}: "
                         f"{e.strerror or e}") from None


def _try(fd, mode):
    deadline = time.monotonic() + RETRY_S
    while True:
        try:
            fcntl.flock(fd, mode | fcntl.LOCK_NB)
            return True
        except BlockingIOError:
            if time.monotonic() >= deadline:
                return False
            time.sleep(_STEP_S)


def _names(path, fd):
    """Whether `path` still names the open file `fd`."""
    try:
        st, here = os.stat(path), os.fstat(fd)
    except OSError:
        return False
    return (st.st_dev, st.st_ino) == (here.st_dev, here.st_ino)


class TableLock:
    """The exclusive lock of one table, taken by `acquire`; `release` (or leaving the `with`
    block) removes the lock file and lets the lock go."""

    def __init__(self, fd, path):
        self.fd = fd
        self.path = path

    def release(self):
        if self.fd is not None:
            try:
                if _names(self.path, self.fd):
                    os.unlink(self.path)     # still locked: nobody can take it meanwhile
            except OSError:
                pass                         # left behind: harmless
            os.close(self.fd)                # closing the file drops the flock
            self.fd = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.release()


def acquire(table, command):
    """Take the table's lock for this process, or raise InputError naming the holder."""
    path = lock_path(table)
    for _ in range(_ATTEMPTS):
        fd = _open(table)
        try:
            if not _try(fd, fcntl.LOCK_EX):
                raise _busy(table, fd)
            if not _names(path, fd):         # the holder removed it as we waited: again
                os.close(fd)
                continue
            os.ftruncate(fd, 0)
            os.pwrite(fd, f"{os.getpid()}\n{' '.join(command.split())}\n".encode("utf-8"), 0)
        except InputError:
            os.close(fd)
            raise
        except OSError as e:
            os.close(fd)
            raise InputError(f"{table}: cannot lock {path}: {e.strerror or e}") from None
        return TableLock(fd, path)
    raise InputError(f"{table}: its lock file {path} keeps being replaced; is another collsel "
                     "sweep starting and stopping on it? try again")


def holder_note(table):
    """For a reader (the dry run): a line naming the sweep writing `table` right now, or None.
    Only probes the lock (a shared lock taken and dropped at once); creates no lock file."""
    path = lock_path(table)
    try:
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = _holder(fd)
            who = f"PID {holder[0]}: {holder[1] or '?'}" if holder else "PID unknown"
            return (f"{table} is being written by another collsel sweep ({who}); this plan is a "
                    "snapshot of a table still growing")
        except OSError:
            return None
        fcntl.flock(fd, fcntl.LOCK_UN)
        return None
    finally:
        os.close(fd)
