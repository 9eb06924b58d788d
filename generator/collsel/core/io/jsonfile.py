"""Reading a JSON input file: the one place that turns unreadable, non-UTF-8, malformed or
too-deeply-nested JSON into one located line (tree.json, model parameter files, MPICH's base)."""
import json

from collsel.errors import InputError


def read(path, unreadable="cannot read", malformed="not JSON", **json_options):
    """The parsed document; `json_options` go to json.load (hooks that may raise InputError)."""
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f, **json_options)
    except OSError as e:
        raise InputError(f"{path}: {unreadable}: {e.strerror}") from None
    except json.JSONDecodeError as e:
        raise InputError(f"{path}:{e.lineno}: {malformed}: {e.msg}") from None
    except (ValueError, RecursionError) as e:   # UnicodeDecodeError is a ValueError
        raise InputError(f"{path}: {malformed}: {str(e)[:80]}") from None
