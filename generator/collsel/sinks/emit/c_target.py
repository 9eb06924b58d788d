"""Targets `c` and `ompi-dec-fixed` of `collsel emit` (the same files `collsel build` writes)."""
from collsel.errors import InputError
from collsel.sinks.emit import c_ladder as c


def add_arguments(p):
    p.add_argument("--prefix", help="C function prefix for --target c (default collsel_<coll>)")


def _one(trees, target):
    if len(trees) != 1:
        raise InputError(f"--target {target} takes exactly one tree, got {len(trees)}")
    return trees[0]


def emit(trees, args):
    if args.target == "c":
        return c.emit_decision(_one(trees, "c"), args.prefix)
    return c.emit_ompi_dec_fixed(_one(trees, args.target))
