"""Target `c`: C decision functions as an if/else ladder (decision.h / decision.c,
<prefix>_decide(), what `collsel build` writes too), and the context every C ladder template
renders (ompi_dec_fixed.py's too)."""
from collsel import __version__
from collsel.core.io import values
from collsel.core.maps import zbins
from collsel.core.mpi import algorithms, fallbacks
from collsel.errors import InputError
from collsel.sinks.emit import render, text
from collsel.sinks.emit.branches import flatten
from collsel.sinks.emit.targets import Emitted, one_tree

AXIS_VARS = ("comm_size", "msg_size", "z")


def _summary(build):
    """'balanced split, majority leaves, max depth 3' from a tree's build options."""
    limits = []
    if build.get("max_depth") is not None:
        limits.append(f"max depth {int(build['max_depth'])}")
    if build.get("threshold") is not None:
        limits.append(f"threshold {float(build['threshold']):g}%")
    return ", ".join([f"{build['split']} split", f"{build['leaf']} leaves"] + limits)


def _refused_if(loaded, algorithm):
    """(C condition on comm_size, comment) under which Open MPI fails the forced call of this
    method (core.mpi.fallbacks: two_proc at P != 2), where the decision defers instead; (None, None)
    for a method it never refuses (or a tree of another MPI's ids)."""
    entry = fallbacks.refusable(loaded.collective, algorithm) if getattr(
        loaded, "family", algorithms.DEFAULT_FAMILY) == algorithms.DEFAULT_FAMILY else None
    if entry is None:
        return None, None
    lo, hi = entry.runs_only
    condition = (f"comm_size != {lo}" if hi == lo + 1
                 else f"comm_size < {lo} || comm_size >= {hi}")
    return condition, f"Open MPI fails it at {entry.condition}: defer to the MPI"


def decision_context(loaded, prefix, target="c"):
    """The template context of the C targets: every number a checked int or a literal made from
    one, identifiers checked, method names derived (sinks.emit.text)."""
    collective = text.collective(loaded, target)
    prefix = values.identifier(prefix or f"collsel_{collective}", "--prefix")
    tree, axes = loaded.tree, loaded.axes
    if len(axes) not in (2, 3):
        raise InputError(f"--target {target}: {len(axes)} axes (2 or 3)")
    literals = text.c_axis_cuts(axes, target)
    methods = text.methods(loaded, target)
    for m in methods:
        m["refused_if"], m["refusal"] = _refused_if(loaded, m["algorithm"])
    n_axes = len(axes)
    params = ["int comm_size", "size_t msg_size"] + (["int64_t z"] if n_axes == 3 else [])
    name = f"{prefix}_decide" + ("3" if n_axes == 3 else "")
    steps = flatten(tree, axes, text.region_text(axes))
    n_defer, n_cells = text.defer_cells(loaded)
    for step in steps:
        step.condition = [[(axis, op, literals[axis][value]) for axis, op, value in terms]
                          for terms in step.condition]
    return {
        "version": __version__, "collective": collective, "n_axes": n_axes, "prefix": prefix,
        "z_name": axes[2].name if n_axes == 3 else "",
        "z_labels": axes[2].labels if n_axes == 3 and axes[2].kind == "category" else [],
        # a measured time axis (build --z probe_us): a variant taking the probe's figure as is
        "probe_function": (f"{prefix}_decide_probe" if n_axes == 3 and zbins.binned(axes[2].name)
                           else ""),
        "signature": f"int {name}({', '.join(params)}, int *segsize, int *faninout)",
        "function": name, "axis_vars": AXIS_VARS[:n_axes],
        "steps": steps, "methods": methods,
        "node_count": tree.node_count, "leaf_count": int(tree.is_leaf().sum()),
        "build_summary": _summary(loaded.build),
        "measured_p": text.measured_p(loaded),
        "defer_cells": n_defer, "grid_cells": n_cells,
        "beyond_above": loaded.beyond.above if loaded.beyond is not None else None,
    }


# What algorithm 0 (a leaf deferring to the MPI) means in the C target.
C_DEFER = "the decision function returns algorithm 0 = no override, the caller keeps the MPI's own"


def emit_decision(loaded, prefix=None):
    """{'decision.h': ..., 'decision.c': ...} for a loaded tree."""
    ctx = decision_context(loaded, prefix)
    guard = ctx["prefix"].upper() + "_DECISION_H"
    return {"decision.h": render("decision.h.j2", guard=guard, **ctx),
            "decision.c": render("decision.c.j2", header="decision.h", **ctx)}


def emit_decision_target(trees, options):
    loaded = one_tree(trees, "c")
    return Emitted(emit_decision(loaded, options.prefix),
                   text.defer_notes(loaded, "the MPI", C_DEFER))

