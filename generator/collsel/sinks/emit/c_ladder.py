"""Targets `c` and `ompi-dec-fixed`: C decision functions as an if/else ladder (decision.h /
decision.c, <prefix>_decide()) and Open MPI's *_intra_dec_fixed body (what `collsel build`
writes too)."""
from collsel import __version__
from collsel.errors import InputError
from collsel.sinks.emit import render
from collsel.sinks.emit.branches import flatten
from collsel.sinks.emit.targets import Emitted, one_tree

AXIS_VARS = ("comm_size", "msg_size", "z")
# z is int64_t (long is 32 bits on LLP64 systems): its literals need the LL suffix.
AXIS_SUFFIX = ("", "u", "LL")

# Open MPI 4.1 / 5.0 reduce ladder for non-commutative ops (coll_tuned_decision_fixed.c):
# (comm_size below, [(msg_size below, algorithm)]); None = no bound.
REDUCE_NONCOMMUTATIVE = (
    (4, ((8, 6), (None, 1))),
    (8, ((None, 1),)),
    (16, ((1024, 6), (8192, 1), (16384, 6), (262144, 1), (None, 6))),
    (128, ((None, 6),)),
    (256, ((512, 6), (1024, 1), (None, 6))),
    (None, ((None, 6),)),
)


def region_text(axes):
    """Describe a box of cells by the values it covers, e.g. 'P 4..6, m >= 2049'."""
    short = {"comm_size": "P", "msg_size": "m"}

    def describe(box):
        parts = []
        for axis, (lo, hi) in zip(axes, box):
            name = short.get(axis.name, axis.name)
            n = len(axis.values)
            if axis.kind == "category":
                labels = axis.labels[lo:hi]
                parts.append(f"{name} in {{{','.join(labels)}}}" if hi - lo < n else "")
                continue
            low = axis.cuts[lo - 1] if lo > 0 else None
            high = axis.cuts[hi - 1] - 1 if hi < n else None
            if low is None and high is None:
                continue
            parts.append(f"{name} <= {high}" if low is None else f"{name} >= {low}"
                         if high is None else f"{name} {low}..{high}")
        return ", ".join(p for p in parts if p) or "everywhere"
    return describe


def decision_context(loaded, prefix):
    tree, axes = loaded.tree, loaded.axes
    methods = [{"algorithm": m.algorithm, "segsize": m.segsize, "faninout": m.faninout,
                "name": name} for m, name in zip(loaded.methods, loaded.method_names)]
    n_axes = len(axes)
    params = ["int comm_size", "size_t msg_size"] + (["int64_t z"] if n_axes == 3 else [])
    name = f"{prefix}_decide" + ("3" if n_axes == 3 else "")
    build = loaded.build
    limits = [f"max depth {build['max_depth']}" if build["max_depth"] is not None else "",
              f"threshold {build['threshold']}%" if build["threshold"] is not None else ""]
    return {
        "version": __version__, "collective": loaded.collective, "n_axes": n_axes,
        "z_name": axes[2].name if n_axes == 3 else "",
        "z_labels": axes[2].labels if n_axes == 3 and axes[2].kind == "category" else [],
        "signature": f"int {name}({', '.join(params)}, int *segsize, int *faninout)",
        "function": name,
        "axis_vars": AXIS_VARS[:n_axes], "axis_suffix": AXIS_SUFFIX[:n_axes],
        "steps": flatten(tree, axes, region_text(axes)), "methods": methods,
        "node_count": tree.node_count, "leaf_count": int(tree.is_leaf().sum()),
        "build_summary": ", ".join([f"{build['split']} split", f"{build['leaf']} leaves"]
                                   + [x for x in limits if x] or ["exact"]),
    }


def emit_decision(loaded, prefix=None):
    """{'decision.h': ..., 'decision.c': ...} for a loaded tree."""
    prefix = prefix or f"collsel_{loaded.collective}"
    ctx = decision_context(loaded, prefix)
    guard = prefix.upper() + "_DECISION_H"
    return {"decision.h": render("decision.h.j2", guard=guard, **ctx),
            "decision.c": render("decision.c.j2", header="decision.h", **ctx)}


def emit_ompi_dec_fixed(loaded):
    """{'ompi_<coll>_intra_dec_fixed.c': ...}; bcast and reduce only, 2-D trees only."""
    if loaded.collective not in ("bcast", "reduce"):
        raise InputError(f"no Open MPI dec_fixed target for {loaded.collective}")
    if len(loaded.axes) != 2:
        raise InputError("Open MPI's dec_fixed takes no third axis; build a 2-D tree for it")
    ctx = decision_context(loaded, "collsel_" + loaded.collective)
    text = render("ompi_dec_fixed.c.j2", noncommutative=REDUCE_NONCOMMUTATIVE, **ctx)
    return {f"ompi_{loaded.collective}_intra_dec_fixed.c": text}


def emit_decision_target(trees, options):
    return Emitted(emit_decision(one_tree(trees, "c"), options.prefix))


def emit_dec_fixed_target(trees, options):
    return Emitted(emit_ompi_dec_fixed(one_tree(trees, "ompi-dec-fixed")))
