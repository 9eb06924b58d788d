"""The emit targets: one registry of name -> function, the typed options they read, and what
they return.

A target is a function `(trees, EmitOptions) -> Emitted`: loaded tree.json files in, files out,
plus notes the caller may print (what a format could not express, how much precision it lost).
Targets know nothing about the command line: `collsel emit` builds the options from its flags.

The Open MPI targets (OPEN_MPI_ONLY) write coll/tuned algorithm ids into Open MPI's own files and
refuse a tree of another MPI's algorithms (algorithm_family mpich, intel); mpich-json takes Open
MPI's and MPICH's (FAMILIES_OF); the C, blob and array targets are family-neutral (they return
the tree's ids to the caller).
Only the blob formats (HIERARCHICAL) can hold a hierarchical method (hier:G:INNER:OUTER, one id
above every coll/tuned number): every other target refuses a tree whose leaves pick one, rather
than write that id as if it were an Open MPI algorithm.
"""
import importlib
from dataclasses import dataclass, field

import numpy as np

from collsel.core.mpi.algorithms import DEFAULT_FAMILY, describe, hier_parts
from collsel.errors import InputError
from collsel.sinks.emit import text


@dataclass(frozen=True)
class EmitOptions:
    """Options of every target; each target reads only its own fields."""
    prefix: str = None             # c, c-fast: C function prefix (default collsel_<collective>)
    node_width: int = None         # blob, c-array: 2 or 4 bytes per node (default: smallest)
    array_name: str = None         # c-array: C array name (default collsel_<collective>_tree)
    ompi_comm_sizes: tuple = None  # ompi-rules, ompi-json: block starts (default: exact)
    ompi_rules_version: int = 1    # ompi-rules: rules file format version (1 or 2)
    mpich_base: dict = None        # mpich-json: MPICH's default selection file, parsed
    mpich_base_name: str = ""      # ... and where it came from, for messages
    mpich_map: dict = None         # mpich-json: {collective: {Open MPI id: MPICH name}}
    tree_names: tuple = ()         # where each tree came from, for messages


@dataclass
class Emitted:
    files: dict                              # {file name: str or bytes}
    notes: list = field(default_factory=list)  # one line each, for the caller to show


# name -> (module, function, one-line help)
TARGETS = {
    "c": ("collsel.sinks.emit.c_ladder", "emit_decision_target",
          "decision.c and decision.h: <prefix>_decide()"),
    "c-fast": ("collsel.sinks.emit.c_lookup", "emit",
               "decision.c/.h: the same <prefix>_decide(), by O(1) cell lookup + cell table"),
    "ompi-dec-fixed": ("collsel.sinks.emit.ompi_dec_fixed", "emit_target",
                       "ompi_<coll>_intra_dec_fixed.c: drop-in Open MPI 4.1 dec_fixed body"),
    "blob": ("collsel.sinks.emit.blob", "emit_blob",
             "tree.bin: binary tree for the C runtime (collsel_tree.h)"),
    "c-array": ("collsel.sinks.emit.blob", "emit_c_array",
                "<name>.c: the blob as a static const unsigned char array"),
    "ompi-rules": ("collsel.sinks.emit.ompi_rules", "emit_classic",
                   "rules.conf: Open MPI 4.1/5.0 coll_tuned_dynamic_rules_filename (classic)"),
    "ompi-json": ("collsel.sinks.emit.ompi_rules", "emit_json",
                  "rules.json: Open MPI 6/main JSON rules file"),
    "mpich-json": ("collsel.sinks.emit.mpich_json", "emit",
                   "mpich_selection.json: MPICH 4.0 MPIR_CVAR_COLL_SELECTION_TUNING_JSON_FILE"),
    "intel-env": ("collsel.sinks.emit.intel_env", "emit",
                  "intel_env.sh: Intel MPI I_MPI_ADJUST_<COLL> settings (a tree of presets)"),
    "intel-json": ("collsel.sinks.emit.intel_json", "emit",
                   "intel_tuning.json: Intel MPI I_MPI_TUNING JSON file (presets on P x m)"),
}


OPEN_MPI_ONLY = frozenset({"ompi-dec-fixed", "ompi-rules", "ompi-json"})
# The algorithm families of the trees an MPI's own file can be written from (mpich-json
# translates Open MPI ids through its map); a target not named here takes any family.
FAMILIES_OF = {**{t: frozenset({DEFAULT_FAMILY}) for t in OPEN_MPI_ONLY},
               "mpich-json": frozenset({DEFAULT_FAMILY, "mpich"}),
               "intel-env": frozenset({"intel"}), "intel-json": frozenset({"intel"})}
WRITES = {**{t: "Open MPI coll/tuned ids" for t in OPEN_MPI_ONLY},
          "mpich-json": "MPICH algorithm names",
          "intel-env": "Intel MPI presets (I_MPI_ADJUST_<COLL>)",
          "intel-json": "Intel MPI presets (an I_MPI_TUNING file)"}
HIERARCHICAL = frozenset({"blob", "c-array"})   # blob format 2 records hier methods (libcollsel)


def hierarchical_leaf_error(target, name, loaded):
    """The refusal of a tree with a hierarchical leaf for a target that cannot hold one, or None.

    Names the first such leaf's method and the region it decides (its box of cells)."""
    if getattr(loaded, "family", DEFAULT_FAMILY) != DEFAULT_FAMILY:   # hier ids: Open MPI's
        return None
    tree = loaded.tree
    is_hier = np.array([hier_parts(m.algorithm) is not None for m in loaded.methods])
    if not is_hier.any():
        return None
    grid = tree.leaf_grid(tuple(len(axis.values) for axis in loaded.axes))
    hier = np.unique(grid[is_hier[tree.method[grid]]])   # leaves deciding some cell
    if not hier.size:
        return None
    cells = np.nonzero(grid == hier[0])
    box = [(int(c.min()), int(c.max()) + 1) for c in cells]
    method = loaded.methods[tree.method[hier[0]]]
    more = f" (and {len(hier) - 1} more leaves)" if len(hier) > 1 else ""
    return (f"{name}: --target {target} cannot express the hierarchical method "
            f"{describe(loaded.collective, method)} (algorithm {method.algorithm}) chosen at "
            f"{text.region_text(loaded.axes)(box)} (leaf {hier[0]}){more}; give this tree to "
            f"libcollsel with --target blob, or build the tree from a table without "
            f"hier:G:INNER:OUTER rows")


def family_error(target, name, family):
    """Refuses a tree of `family` for a target that writes another MPI's file, naming the
    targets that take it."""
    if family in FAMILIES_OF.get(target, (family,)):
        return
    own = [t for t, takes in FAMILIES_OF.items() if family in takes]
    neutral = [t for t in TARGETS if t not in FAMILIES_OF]
    raise InputError(f"{name}: --target {target} writes {WRITES[target]}, but this tree's "
                     f"algorithms are {family}'s (algorithm_family {family}); use --target "
                     f"{', '.join(own + neutral[:-1])} or {neutral[-1]}")


def emit(target, trees, options=None):
    """Render `trees` for `target`; the module is imported only when its target is used."""
    if target not in TARGETS:
        raise InputError(f"unknown target '{target}' (known: {', '.join(sorted(TARGETS))})")
    options = options or EmitOptions()
    names = list(options.tree_names) or [f"tree {i + 1}" for i in range(len(trees))]
    if target not in HIERARCHICAL:
        for name, loaded in zip(names, trees):
            error = hierarchical_leaf_error(target, name, loaded)
            if error:
                raise InputError(error)
    for name, loaded in zip(names, trees):
        family_error(target, name, getattr(loaded, "family", DEFAULT_FAMILY))
    module, function, _ = TARGETS[target]
    result = getattr(importlib.import_module(module), function)(trees, options)
    if not result.files:
        raise InputError(f"target {target} produced no files")
    return result


def one_tree(trees, target):
    """The single tree a one-tree target takes."""
    if len(trees) != 1:
        raise InputError(f"--target {target} takes exactly one tree, got {len(trees)}")
    return trees[0]
