"""JSON Schemas (draft 2020-12) of the files collsel reads back, and the check every load runs.

    tree.schema.json          tree.json (collsel.core.trees.treefile)
    model-params.schema.json  model parameter files (collsel.research.models.params)
    lmo-params.schema.json    LMO parameter files (collsel.research.models.lmo_params)
    census.schema.json        one rank's libcollsel census file (collsel.core.io.profile)
    profile.schema.json       a program's collective profile (collsel.core.io.profile)

The schema files are package data, read with importlib.resources, so an installed collsel finds
them as a checkout does. `check` validates a document with the `jsonschema` package and turns the
most relevant error (jsonschema.exceptions.best_match) into one located line:

    t.json: nodes.first_child[3]: -7 is less than the minimum of -1

collsel's validator reads JSON types strictly, beyond what a schema can say: an "integer" is a
JSON integer (3.0 is not one) and a "number" is finite (NaN and Infinity, which Python's json
module accepts, are no numbers). A "pattern" ending in `$` matches up to the end of the string,
as in ECMA-262 (Python's `re` would also let a final newline through).
"""
import json
import math
import re
import reprlib
from functools import lru_cache
from importlib import resources

from collsel.errors import InputError

FILES = {"tree": "tree.schema.json", "model-params": "model-params.schema.json",
         "lmo-params": "lmo-params.schema.json", "census": "census.schema.json",
         "profile": "profile.schema.json"}

_SHORT = reprlib.Repr()
_SHORT.maxlist = _SHORT.maxdict = 4
_SHORT.maxstring = _SHORT.maxother = 40
_SHORT.maxlong = 40
_SHORT.maxlevel = 2
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


@lru_cache(maxsize=None)
def schema(name):
    """The schema document `name` (a key of FILES), parsed."""
    return json.loads(resources.files(__package__).joinpath(FILES[name]).read_text("utf-8"))


def _is_integer(checker, instance):
    return isinstance(instance, int) and not isinstance(instance, bool)


def _is_number(checker, instance):
    return (isinstance(instance, (int, float)) and not isinstance(instance, bool)
            and math.isfinite(instance))


@lru_cache(maxsize=None)
def _ecma_regex(pattern):
    """`pattern` with a final unescaped `$` meaning the end of the string only (ECMA-262)."""
    return re.compile(re.sub(r"(?<!\\)\$$", r"\\Z", pattern))


def _pattern(validator, pattern, instance, schema):
    from jsonschema.exceptions import ValidationError
    if validator.is_type(instance, "string") and not _ecma_regex(pattern).search(instance):
        yield ValidationError(f"{instance!r} does not match {pattern!r}")


@lru_cache(maxsize=None)
def validator(name):
    # jsonschema costs ~0.1 s to import: only commands that read these files pay it.
    from jsonschema import Draft202012Validator, validators
    types = Draft202012Validator.TYPE_CHECKER.redefine_many(
        {"integer": _is_integer, "number": _is_number})
    strict = validators.extend(Draft202012Validator, {"pattern": _pattern}, type_checker=types)
    return strict(schema(name))


def location(parts):
    """`nodes.first_child[3]` for the path ('nodes', 'first_child', 3); '' for the top."""
    out = ""
    for part in parts:
        if isinstance(part, int):
            out += f"[{part}]"
        elif _NAME.fullmatch(part):
            out += f".{part}" if out else part
        else:
            out += f"[{json.dumps(part)}]"
    return out


def describe(error):
    """One line for a jsonschema ValidationError: location, then the message (long values cut)."""
    message = error.message
    full = repr(error.instance)
    if len(full) > 60 and full in message:
        message = message.replace(full, _SHORT.repr(error.instance), 1)
    where = location(error.absolute_path)
    return " ".join((f"{where}: {message}" if where else message).splitlines())


def check(document, name, path):
    """Raise InputError (`path: location: message`, exit 2) unless `document` fits schema `name`."""
    from jsonschema.exceptions import best_match
    error = best_match(validator(name).iter_errors(document))
    if error is not None:
        raise InputError(f"{path}: {describe(error)}")
