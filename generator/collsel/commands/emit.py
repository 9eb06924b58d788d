"""`collsel emit --target T TREE.json...`: one tree (or several) -> the files of one target.

Targets are registered in TARGETS by the module that renders them. A target module provides
  emit(trees, args) -> {file name: str or bytes}
and, optionally, add_arguments(parser) for its own options (named --<target>-... or shared).
A target that renders one file writes it to --out; several files go into the --out directory.
"""
import argparse
import importlib

from collsel.core import treefile
from collsel.core.files import write_directory, write_file
from collsel.errors import InputError

# name -> (module, one-line help)
TARGETS = {
    "c": ("collsel.sinks.emit.c_target", "decision.c and decision.h: <prefix>_decide()"),
    "c-fast": ("collsel.sinks.emit.c_lookup",
               "decision.c/.h: the same <prefix>_decide(), by O(1) cell lookup + cell table"),
    "ompi-dec-fixed": ("collsel.sinks.emit.c_target",
                       "ompi_<coll>_intra_dec_fixed.c: drop-in Open MPI 4.1 dec_fixed body"),
    "blob": ("collsel.sinks.emit.blob", "tree.bin: binary tree for the C runtime (collsel_tree.h)"),
    "c-array": ("collsel.sinks.emit.blob", "<name>.c: the blob as a static const unsigned char array"),
    "ompi-rules": ("collsel.sinks.emit.ompi_rules",
                   "rules.conf: Open MPI 4.1/5.0 coll_tuned_dynamic_rules_filename (classic)"),
    "ompi-json": ("collsel.sinks.emit.ompi_rules", "rules.json: Open MPI 6/main JSON rules file"),
    "mpich-json": ("collsel.sinks.emit.mpich_json",
                   "mpich_selection.json: MPICH 4.0 MPIR_CVAR_COLL_SELECTION_TUNING_JSON_FILE"),
}


def _target_modules():
    """Target modules, each imported when the parser is built so it can add options."""
    return sorted({module for module, _ in TARGETS.values()})


def register(sub):
    lines = "\n".join(f"  {name:16} {text}" for name, (_, text) in TARGETS.items())
    p = sub.add_parser("emit", help="tree.json -> C, rules files, binary blob, ...",
                       description="Render one or more tree.json files (from `collsel build`) "
                       "for a target.\n\ntargets:\n" + lines,
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("trees", nargs="+", metavar="TREE.json")
    p.add_argument("--target", required=True, choices=sorted(TARGETS), metavar="TARGET",
                   help="one of: " + ", ".join(sorted(TARGETS)))
    p.add_argument("--out", required=True, metavar="PATH",
                   help="output file (one-file targets) or directory (several files)")
    for module in _target_modules():
        hook = getattr(importlib.import_module(module), "add_arguments", None)
        if hook:
            hook(p)
    p.set_defaults(run=run_emit)


def emit_files(trees, args):
    module = importlib.import_module(TARGETS[args.target][0])
    return module.emit(trees, args)


def run_emit(args):
    trees = [treefile.load(path) for path in args.trees]
    files = emit_files(trees, args)
    if not files:
        raise InputError(f"target {args.target} produced no files")
    if len(files) == 1:
        (data,) = files.values()
        write_file(args.out, data)
        print(f"{args.out}: {len(data)} bytes")
    else:
        write_directory(args.out, files)
        print(f"{args.out}/: " + ", ".join(sorted(files)))
    return 0
