"""Writing output files all-or-nothing: the one atomic writer every command uses.

`write_file` writes one file; `write_directory` writes a set of files into a directory. Both write
into a temporary sibling first (made with the umask's usual mode, fsynced), then rename into
place, so an interrupted or failed run leaves the previous outputs, never half-written ones.
"""
import os
import shutil
import tempfile

from collsel.errors import InputError


def _umask():
    umask = os.umask(0)
    os.umask(umask)
    return umask


def _write_temp(directory, name, data):
    """A temporary file in `directory` holding `data` (str or bytes), synced; its path."""
    fd, tmp = tempfile.mkstemp(dir=directory, prefix=".tmp-", suffix=name)
    try:
        os.fchmod(fd, 0o666 & ~_umask())        # mkstemp makes the file 0600
        with os.fdopen(fd, "wb") as f:
            f.write(data.encode("utf-8") if isinstance(data, str) else data)
            f.flush()
            os.fsync(f.fileno())
    except BaseException:
        os.unlink(tmp)
        raise
    return tmp


def _cannot_write(path, error):
    return InputError(f"{path}: cannot write: {error.strerror or error}")


def write_file(path, data) -> None:
    """Write a whole file (str or bytes) or nothing."""
    path = os.fspath(path)
    try:
        tmp = _write_temp(os.path.dirname(os.path.abspath(path)), os.path.basename(path), data)
    except OSError as e:
        raise _cannot_write(path, e) from None
    try:
        os.replace(tmp, path)
    except OSError as e:
        os.unlink(tmp)
        raise _cannot_write(path, e) from None
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def write_directory(out_dir, files, manifest=None):
    """All of `files` ({name: str or bytes}) in `out_dir`, or none of them.

    With `manifest` (a file name), the names written are listed in that file, and files an
    earlier run listed there but this run does not write are removed, so a rerun leaves no stale
    outputs while files the user put beside them stay."""
    bad = [n for n in files if os.path.basename(n) != n or n in ("", ".", "..")]
    if bad:
        raise InputError(f"{out_dir}: output name {bad[0]!r} is not a plain file name")
    if manifest:
        files = {**files, manifest: "".join(f"{name}\n" for name in sorted(files))}
    shown, out_dir = out_dir, os.path.abspath(out_dir)
    parent = os.path.dirname(out_dir)
    try:
        os.makedirs(parent, exist_ok=True)
        tmp = tempfile.mkdtemp(dir=parent, prefix=f".{os.path.basename(out_dir)}.tmp-")
    except OSError as e:
        raise _cannot_write(shown, e) from None
    try:
        os.chmod(tmp, 0o777 & ~_umask())        # mkdtemp makes the directory 0700
        for name, data in files.items():
            os.replace(_write_temp(tmp, name, data), os.path.join(tmp, name))
        if not os.path.exists(out_dir):
            os.rename(tmp, out_dir)
            return
        stale = set()
        if manifest and os.path.isfile(os.path.join(out_dir, manifest)):
            with open(os.path.join(out_dir, manifest), encoding="utf-8") as f:
                stale = {line.strip() for line in f if line.strip()} - set(files)
        for name in files:
            os.replace(os.path.join(tmp, name), os.path.join(out_dir, name))
        for name in stale:
            if os.path.basename(name) == name:     # only plain names this command wrote
                try:
                    os.remove(os.path.join(out_dir, name))
                except FileNotFoundError:
                    pass
    except OSError as e:
        raise _cannot_write(shown, e) from None
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
