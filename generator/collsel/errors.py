"""Errors the command line turns into one clear line and an exit status."""


class CollselError(Exception):
    """A failure the user can act on; `str()` is the whole message."""
    exit_status = 1


class InputError(CollselError):
    """Bad input: a malformed file, an out-of-range value, a missing column. Exit status 2."""
    exit_status = 2


def printable(text):
    """`text` with every control character escaped (\\x1b, \\n, ...), so that what a hostile file
    or flag holds can neither move the terminal nor split a message into several lines."""
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in str(text))


def located(path, line, message):
    """An InputError naming the file and line, in the `file:line: message` form compilers use."""
    where = f"{path}:{line}" if line else f"{path}"
    return InputError(f"{where}: {message}")
