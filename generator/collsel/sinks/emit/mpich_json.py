"""Target `mpich-json`: a complete MPICH 4.x MPIR-level collective selection file.

MPICH reads it through MPIR_CVAR_COLL_SELECTION_TUNING_JSON_FILE, and a user file REPLACES the
whole built-in tree: every collective MPICH may call (barrier and allreduce inside MPI_Init,
...) must be present, or MPIR_Csel_search finds no algorithm and MPICH asserts. So the output
is the installed version's default `maint/tuning/coll/mpir/generic.json` (compiled into libmpich,
where `collsel emit` reads it: collsel.sources.measure.mpich_base; or `--mpich-base FILE`) with
the `collective=bcast` and/or `collective=reduce` subtree replaced by the one generated from
each tree.

Generated subtree (MPICH CSEL semantics: sibling keys are an ordered first-match chain):
  collective=C
    comm_type=intra
      comm_size<=P1                     communicator size first, so MPICH prunes it once per
        avg_msg_size<=M1   {leaf}       communicator; then the message size (type size * count,
        ...                             the metric Open MPI and the tree use)
        avg_msg_size=any   {leaf}       every numeric chain ends in =any
      ...
      comm_size=any        {...}
    comm_type=inter                     copied from the base file
Thresholds are the tree's integer cuts minus one (`<` becomes `<=`), merged where neighbouring
cells map to the same MPICH algorithm; each must fit in a 32-bit int (MPICH parses N with atoi).

A tree whose third axis is `ppn` (collsel build --z ppn) puts processes per node between the two:
      comm_size<=P1
        comm_avg_ppn<=Z1                also decided once per communicator (MPIR_Csel_prune)
          avg_msg_size<=M1 {leaf} ...
        comm_size=any                   the chain's end: MPICH 4.0 has no comm_avg_ppn=any, and
          avg_msg_size... {leaf} ...    comm_size=any is always true
A comm_size block whose message chain is the same at every ppn has no ppn level (so a 2-D tree,
or one ppn value, gives the 2-D file). MPICH 4.0.2 tests comm_avg_ppn<=N as P <= N x nodes, its
node count of the communicator (csel.c), so with unequal ranks per node it takes the ppn of
ceil(P / nodes) (a note says so). Not expressible, refused: any other third axis (MPICH tests
no node count, placement or category), and ppn cuts below 2 (ppn <= 0).
The base file's `comm_hierarchy=parent` (SMP-aware, multi-node) branches are not kept for a
replaced collective (the tree was measured without them), except inside a deferring leaf (below).

Algorithms: a tree built from an MPICH table (algorithm_family mpich) names MPICH's own
algorithms; each leaf is the MPIR_... function of that name (MPICH_ALGORITHMS), no translation.
A tree of Open MPI ids maps them to MPICH names through the explicit table MPICH_NAMES below;
segment size and fan-in/out have no MPICH 4.0 counterpart and are dropped. An Open MPI id that a
leaf uses and the table lacks is an error (listing the valid MPICH names) unless `--mpich-map
[COLL:]ID=NAME,...` says which MPICH algorithm to use (NAME: a short name from the table's
vocabulary, e.g. `binomial`, or a full `MPIR_<Coll>_...` name); `--mpich-map` entries also
override the table. Methods no leaf uses need no MPICH name.

Defer (algorithm 0 in either family: the MPI's own decision). A CSEL leaf must name an algorithm
(there is no `auto` container), so a deferring leaf holds MPICH's own decision itself: the base
file's `comm_type=intra` subtree of that collective, spliced under the leaf's conditions as
`"comm_type=intra": {...}` (always true there). MPIR_Csel_search evaluates every node type the
base subtree uses (comm_hierarchy, comm_size=pow2, ...); only `comm_size<N` means `<=` in the
search but `<` in the per-communicator prune that evaluates it in the base file, so the splice
writes it `comm_size<=N-1`, which both read as MPICH does at the top of its own file.
"""
import json
import re

import numpy as np

from collsel.core import algorithms, jsonfile
from collsel.errors import InputError
from collsel.sinks.emit import render, text
from collsel.sinks.emit.targets import Emitted

INT32_MAX = 2**31 - 1

# MPICH 4.0.x algorithm names (src/mpi/coll/src/csel_container.c of 4.0.2).
MPICH_ALGORITHMS = {
    "bcast": ("MPIR_Bcast_intra_binomial", "MPIR_Bcast_intra_scatter_recursive_doubling_allgather",
              "MPIR_Bcast_intra_scatter_ring_allgather", "MPIR_Bcast_intra_smp",
              "MPIR_Bcast_allcomm_nb"),
    "reduce": ("MPIR_Reduce_intra_binomial", "MPIR_Reduce_intra_reduce_scatter_gather",
               "MPIR_Reduce_intra_smp", "MPIR_Reduce_allcomm_nb"),
}

# Open MPI coll/tuned algorithm id -> the MPICH 4.0 algorithm that implements the same method.
# Only exact counterparts are listed:
#   bcast  6 binomial               -> MPIR_Bcast_intra_binomial
#   bcast  8 scatter_allgather      -> MPIR_Bcast_intra_scatter_recursive_doubling_allgather
#            (binomial scatter + recursive-doubling allgather, van de Geijn, in both libraries)
#   bcast  9 scatter_allgather_ring -> MPIR_Bcast_intra_scatter_ring_allgather
#   reduce 5 binomial               -> MPIR_Reduce_intra_binomial
#   reduce 7 rabenseifner           -> MPIR_Reduce_intra_reduce_scatter_gather
#            (reduce-scatter + gather; guarded as in MPICH's generic.json, see REDUCE_SCATTER_GATHER)
# No counterpart in MPICH 4.0: bcast 1 basic_linear, 2 chain, 3 pipeline, 4 split_binary_tree,
# 5 binary_tree, 7 knomial (MPICH >= 4.1's MPIR_Bcast_intra_tree/pipelined_tree are not in 4.0);
# reduce 1 linear, 2 chain, 3 pipeline, 4 binary, 6 in-order_binary.
MPICH_NAMES = {
    "bcast": {6: "MPIR_Bcast_intra_binomial",
              8: "MPIR_Bcast_intra_scatter_recursive_doubling_allgather",
              9: "MPIR_Bcast_intra_scatter_ring_allgather"},
    "reduce": {5: "MPIR_Reduce_intra_binomial",
               7: "MPIR_Reduce_intra_reduce_scatter_gather"},
}

# MPIR_Reduce_intra_reduce_scatter_gather needs a built-in op and count >= the largest power of
# two <= comm size; MPICH's own generic.json guards it like this, and so does the generated tree.
REDUCE_SCATTER_GATHER = "MPIR_Reduce_intra_reduce_scatter_gather"

# The leaf of a method that defers to MPICH (algorithm 0); no MPIR_ name, so it cannot collide.
DEFER = "auto"

# The third axis MPICH can test, and the key ending its chain: MPICH 4.0 has no
# `comm_avg_ppn=any` and its validate_tree asserts on a comm_avg_ppn test without a following
# sibling; `comm_size=any` is always true, in the per-communicator prune and the per-call search.
PPN = "ppn"
PPN_ELSE = "comm_size=any"
PPN_CUTS = "MPICH tests comm_avg_ppn<=N, N >= 1 (ppn values are positive)"


def _short(full):
    """'binomial' of 'MPIR_Bcast_intra_binomial', 'nb' of 'MPIR_Bcast_allcomm_nb'."""
    return full.split("_", 3)[-1]


def valid_names(collective):
    """The MPICH algorithm names --mpich-map takes for a collective, as a message lists them."""
    return (", ".join(_short(full) for full in MPICH_ALGORITHMS[collective])
            + f", or a full MPIR_{collective.capitalize()}_... name")


def _full_name(collective, name, where):
    known = MPICH_ALGORITHMS[collective]
    if name in known or re.fullmatch(f"MPIR_{collective.capitalize()}_[A-Za-z0-9_]{{1,64}}",
                                     name):
        return name
    for full in known:
        if _short(full) == name:
            return full
    raise InputError(f"{where}: unknown MPICH {collective} algorithm '{name}' (one of: "
                     f"{valid_names(collective)})")


def parse_map(flag, collectives):
    """--mpich-map text -> {collective: {id: MPICH name}}."""
    out = {c: {} for c in collectives}
    for item in filter(None, (s.strip() for s in flag.split(","))):
        where = f"--mpich-map '{item}'"
        scope, _, rule = item.rpartition(":")
        ident, eq, name = rule.partition("=")
        if not eq or not ident.strip().isdigit() or not name.strip():
            raise InputError(f"{where}: expected [COLL:]ID=NAME, e.g. bcast:7=binomial")
        if scope and scope not in MPICH_NAMES:
            raise InputError(f"{where}: no MPICH mapping for collective '{scope}'")
        for c in ([scope] if scope else collectives):
            if c in out:
                out[c][int(ident)] = _full_name(c, name.strip(), where)
    return out


def _runs(items, cuts):
    """[(threshold, item)] of consecutive equal items merged, in first-match order: each run's
    threshold is the cut above its last cell minus one (`<` becomes `<=`), the last run's None
    (=any)."""
    return [(int(cuts[i]) - 1 if i + 1 < len(items) else None, item)
            for i, item in enumerate(items) if i + 1 == len(items) or items[i + 1] != item]


def _blocks(loaded, names):
    """[(P threshold, [(ppn threshold, [(m threshold, leaf name)])])] in first-match order; a
    2-D tree, and a P block whose decision does not change with ppn, has the one ppn entry
    (None, chain)."""
    axes = loaded.axes
    methods = loaded.tree.method_grid(tuple(len(a.values) for a in axes))
    # a method no leaf holds may have no MPICH name (leaf_names asks only for the leaves')
    leaf_of_method = np.array([names.get(m["algorithm"])
                               for m in text.methods(loaded, "mpich-json")], dtype=object)
    leaves = leaf_of_method[methods]                     # P values x m values [x ppn values]
    if leaves.ndim == 2:
        leaves = leaves[:, :, None]
    m_cuts = text.cuts(axes[1], 1, 2**64 - 1, "mpich-json")
    ppn_cuts = text.cuts(axes[2], 2, INT32_MAX, "mpich-json", PPN_CUTS) if len(axes) == 3 else []
    p_cuts = text.cuts(axes[0], 2, 2**31 - 1, "mpich-json")
    blocks = _runs([_runs([_runs(leaves[i, :, k].tolist(), m_cuts)
                           for k in range(leaves.shape[2])], ppn_cuts)
                    for i in range(leaves.shape[0])], p_cuts)
    for p_max, ppn_blocks in blocks:
        for ppn_max, chain in ppn_blocks:
            for value in [p_max, ppn_max] + [m for m, _ in chain]:
                if value is not None and not 0 <= value <= INT32_MAX:
                    raise InputError(f"{loaded.collective} tree: threshold {value} does not fit "
                                     f"in a 32-bit int (MPICH reads thresholds with atoi)")
    return blocks


def _check_axes(loaded, path):
    """comm_size x msg_size, or with the third axis ppn (numeric): what CSEL can test."""
    names = [a.name for a in loaded.axes]
    if names[:2] != ["comm_size", "msg_size"] or len(names) not in (2, 3):
        raise InputError(f"{path}: MPICH JSON takes a comm_size x msg_size tree, or one with "
                         f"the third axis ppn")
    if len(names) == 3 and (names[2] != PPN or loaded.axes[2].kind != "linear"):
        what = "categories" if loaded.axes[2].kind == "category" else "numbers"
        raise InputError(f"{path}: third axis '{names[2]}' ({what}): MPICH's selection can test "
                         f"only processes per node (comm_avg_ppn), a numeric {PPN} axis "
                         f"(collsel build --z {PPN})")


def leaf_names(loaded, mapping, where):
    """{algorithm id of the tree's family: MPICH leaf name (or DEFER for id 0)}."""
    if loaded.family == "mpich":
        if mapping.get(loaded.collective):
            raise InputError(f"{where}: the tree names MPICH's own algorithms (algorithm_family "
                             f"mpich); --mpich-map translates Open MPI ids, leave it out")
        own = algorithms.registry("mpich")[loaded.collective]
        return {alg: DEFER if alg == algorithms.BASELINE_ALGORITHM
                else _full_name(loaded.collective, name, where) for alg, name in own.items()}
    coll = loaded.collective
    names = {algorithms.BASELINE_ALGORITHM: DEFER, **MPICH_NAMES[coll]}
    names.update(mapping.get(coll, {}))
    t = loaded.tree
    used = {loaded.methods[i].algorithm for i in set(t.method[t.is_leaf()].tolist())}
    missing = sorted(used - set(names))
    if missing:
        listed = ", ".join(f"{a} ({algorithms.algorithm_name(coll, a)})" for a in missing)
        example = ",".join(f"{a}={_short(MPICH_NAMES[coll][min(MPICH_NAMES[coll])])}"
                           for a in missing)
        raise InputError(f"{where}: the tree's leaves use Open MPI {coll} algorithm(s) {listed}, "
                         f"which have no MPICH counterpart; say which MPICH algorithm runs "
                         f"instead with --mpich-map {coll}:ID=NAME,... (e.g. --mpich-map "
                         f"{coll}:{example}); MPICH {coll} algorithms: {valid_names(coll)}")
    return names


def _strict(path):
    """json.load options that refuse what MPICH would: a key twice in one object, NaN."""
    def pairs(items):
        keys = [k for k, _ in items]
        dup = sorted({k for k in keys if keys.count(k) > 1})
        if dup:
            raise InputError(f"{path}: duplicate key {dup[0]!r} in one object")
        return dict(items)

    def no_constant(name):
        raise InputError(f"{path}: {name} is not JSON (MPICH would reject the file)")
    return {"object_pairs_hook": pairs, "parse_constant": no_constant}


def _selection(base, path):
    if not isinstance(base, dict) or not any(k.startswith("collective=") for k in base):
        raise InputError(f"{path}: not an MPICH selection file (no collective=... keys)")
    return base


def load_base(path):
    """MPICH's selection file (JSON object, keys in MPICH's first-match order), checked."""
    return _selection(jsonfile.read(path, "cannot read MPICH base selection file",
                                    "not valid JSON", **_strict(path)), path)


def parse_base(text, where):
    """The same from JSON text (e.g. the selection compiled into libmpich), `where` naming it."""
    try:
        return _selection(json.loads(text, **_strict(where)), where)
    except (ValueError, RecursionError) as e:
        raise InputError(f"{where}: not valid JSON: {str(e)[:80]}") from None


def _dump(value, indent):
    """JSON text of a subtree copied from MPICH's base file, indented to sit at `indent`.

    The copied subtrees are data read from MPICH's own file, re-serialised unchanged; their depth
    and keys are arbitrary, which a template could only walk by recursion. json.dumps keeps the
    insertion order (which is MPICH's first-match order, json.load preserves it) and is
    deterministic, so the bytes depend only on the base file. The generated part is rendered by
    the template.
    """
    dumped = json.dumps(value, indent=2, separators=(",", ": "))
    return dumped.replace("\n", "\n" + " " * indent)


def _defer_subtree(intra, where):
    """MPICH's own intra decision (the base file's comm_type=intra subtree) as it must be written
    below a message-size node: `comm_size<N` as `comm_size<=N-1` (see the module docstring).
    Copied with an explicit stack; key order (MPICH's first-match order) kept."""
    if not isinstance(intra, dict):
        raise InputError(f"{where}: comm_type=intra is not an object")
    out = {}
    stack = [(intra, out)]
    while stack:
        src, dst = stack.pop()
        for key, child in src.items():
            if not isinstance(child, dict):
                raise InputError(f"{where}: {key!r} holds no object (MPICH would reject it)")
            bound = re.fullmatch(r"comm_size<(\d{1,10})", key.replace(" ", ""))
            if bound:
                key = f"comm_size<={int(bound.group(1)) - 1}"
            if key in dst:
                raise InputError(f"{where}: {key!r} twice in one object after rewriting "
                                 "comm_size<N as comm_size<=N-1")
            dst[key] = {}
            stack.append((child, dst[key]))
    return out


def emit(trees, options):
    if options.mpich_base is None:
        raise InputError("--target mpich-json needs MPICH's default selection: give "
                         "--mpich-base FILE (collsel emit reads it from the installed MPICH)")
    names = options.tree_names or [f"tree {i + 1}" for i in range(len(trees))]
    by_collective = {}
    for path, loaded in zip(names, trees):
        text.collective(loaded, "mpich-json")
        if loaded.collective not in MPICH_NAMES:
            raise InputError(f"{path}: no MPICH JSON mapping for {loaded.collective} "
                             f"(bcast and reduce only)")
        _check_axes(loaded, path)
        if loaded.collective in by_collective:
            raise InputError(f"{path}: a second {loaded.collective} tree (one per collective)")
        by_collective[loaded.collective] = (path, loaded)
    mapping = {c: (options.mpich_map or {}).get(c, {}) for c in by_collective}
    base, base_name = options.mpich_base, options.mpich_base_name
    entries, notes = [], []
    for key, value in base.items():
        collective = key.split("=", 1)[1] if key.startswith("collective=") else None
        if collective not in by_collective:
            entries.append({"key": key, "copied": _dump(value, 2)})
            continue
        path, loaded = by_collective.pop(collective)
        inter = value.get("comm_type=inter") if isinstance(value, dict) else None
        if inter is None:
            raise InputError(f"{base_name}: {key} has no comm_type=inter branch to keep")
        blocks = _blocks(loaded, leaf_names(loaded, mapping, path))
        deferred = any(name == DEFER for _, ppn_blocks in blocks for _, chain in ppn_blocks
                       for _, name in chain)
        intra = _defer_subtree(value.get("comm_type=intra"), f"{base_name}: {key}") \
            if deferred else None
        entries.append({"key": key, "blocks": blocks, "inter": _dump(inter, 4),
                        "deferred": _dump(intra, 0) if deferred else None})
        if len(loaded.axes) == 3:
            notes.append(f"{collective}: {PPN} as comm_avg_ppn<=N, which MPICH tests as "
                         "P <= N x nodes (its node count of the communicator): with unequal "
                         "ranks per node it takes the ppn of ceil(P / nodes)")
    if by_collective:
        missing = ", ".join(f"collective={c}" for c in sorted(by_collective))
        raise InputError(f"{base_name}: no {missing} to replace")
    rendered = render("mpich_selection.json.j2", entries=entries, defer=DEFER,
                      guarded=REDUCE_SCATTER_GATHER, fallback="MPIR_Reduce_intra_binomial",
                      ppn_else=PPN_ELSE)
    json.loads(rendered)  # the template's output must be JSON; a failure here is a collsel bug
    return Emitted({"mpich_selection.json": rendered}, notes)
