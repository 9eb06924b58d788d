"""Errors the command line turns into one clear line and an exit status."""


class CollselError(Exception):
    """A failure the user can act on; `str()` is the whole message."""
    exit_status = 1


class InputError(CollselError):
    """Bad input: a malformed file, an out-of-range value, a missing column. Exit status 2."""
    exit_status = 2


def located(path, line, message):
    """An InputError naming the file and line, in the `file:line: message` form compilers use."""
    where = f"{path}:{line}" if line else f"{path}"
    return InputError(f"{where}: {message}")
