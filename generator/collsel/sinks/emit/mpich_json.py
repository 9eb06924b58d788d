"""Target `mpich-json`: a complete MPICH 4.x / 5.x MPIR-level collective selection file.

MPICH reads it through MPIR_CVAR_COLL_SELECTION_TUNING_JSON_FILE, and a user file REPLACES the
whole built-in tree: every collective MPICH may call (barrier and allreduce inside MPI_Init,
...) must be present, or MPIR_Csel_search finds no algorithm and MPICH asserts. So the output
is the installed version's default `maint/tuning/coll/mpir/generic.json` (compiled into libmpich,
where `collsel emit` reads it: collsel.sources.measure.mpich_base; or `--mpich-base FILE`) with
the `collective=C` subtree of each tree's collective (any of the 14) replaced by the one
generated from it; every other collective keeps MPICH's own subtree.

Generated subtree (MPICH CSEL semantics: sibling keys are an ordered first-match chain):
  collective=C
    comm_type=intra
      comm_size<=P1                     communicator size first, so MPICH prunes it once per
        avg_msg_size<=M1   {leaf}       communicator; then the message size csel compares for C
        ...                             (avg_msg_size or total_msg_size; none for barrier, scan,
        avg_msg_size=any   {leaf}       exscan: sinks.emit.mpich_csel); every chain ends in =any
      ...
      comm_size=any        {...}
    comm_type=inter                     copied from the base file (when it has one)
Thresholds are the tree's integer cuts minus one (`<` becomes `<=`; P x cut - 1 where csel's
size is P x m, in one comm_size block per P), merged where neighbouring cells map to the same
MPICH algorithm; each must fit in a 32-bit int (MPICH parses N with atoi). A leaf whose
algorithm MPICH restricts tests the condition first (mpich_csel.GUARDS).

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
algorithms; each leaf is the MPIR_... function of that name (MPICH_ALGORITHMS), no translation,
with the parameters MPICH 5.0 reads below it (mpich_csel.PARAMETERS). A leaf naming an algorithm
the base file's MPICH release lacks (a 5.0 name on 4.0.2's base) is refused in one line.
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
writes it `comm_size<=N-1`, which both read as MPICH does at the top of its own file. A tree
with `beyond` (tree.json) ends its blocks at `comm_size<=above`, then `comm_size=any` holds
MPICH's own decision the same way: every larger P goes to MPICH's subtree.
"""
import json
import re

import numpy as np

from collsel.core.io import jsonfile
from collsel.core.mpi import algorithms
from collsel.errors import InputError
from collsel.sinks.emit import mpich_csel, render, text
from collsel.sinks.emit.targets import Emitted

INT32_MAX = 2**31 - 1

# MPICH 4.0.x algorithm functions per collective (src/mpi/coll/src/csel_container.c of 4.0.2).
MPICH_ALGORITHMS = {c: mpich_csel.functions(c) for c in algorithms.MPICH_ALGORITHMS}

# Open MPI coll/tuned algorithm id -> the MPICH 4.0 algorithm that implements the same method.
# Only exact counterparts are listed:
#   bcast  6 binomial               -> MPIR_Bcast_intra_binomial
#   bcast  8 scatter_allgather      -> MPIR_Bcast_intra_scatter_recursive_doubling_allgather
#            (binomial scatter + recursive-doubling allgather, van de Geijn, in both libraries)
#   bcast  9 scatter_allgather_ring -> MPIR_Bcast_intra_scatter_ring_allgather
#   reduce 5 binomial               -> MPIR_Reduce_intra_binomial
#   reduce 7 rabenseifner           -> MPIR_Reduce_intra_reduce_scatter_gather
#            (reduce-scatter + gather; guarded as in MPICH's generic.json, see
#            REDUCE_SCATTER_GATHER)
#   allreduce 3 recursive_doubling, 6 rabenseifner (reduce-scatter + allgather);
#   allgather 2 bruck, 3 recursive_doubling, 4 ring; allgatherv 2 bruck, 3 ring;
#   barrier 4 bruck (dissemination); gather, scatter 2 binomial; scan, exscan 2 recursive_doubling;
#   reduce_scatter 2 recursive_halving; reduce_scatter_block 2 recursive_doubling,
#   3 recursive_halving.
# No counterpart in MPICH 4.0: bcast 1 basic_linear, 2 chain, 3 pipeline, 4 split_binary_tree,
# 5 binary_tree, 7 knomial (MPICH >= 4.1's MPIR_Bcast_intra_tree/pipelined_tree are not in 4.0);
# reduce 1 linear, 2 chain, 3 pipeline, 4 binary, 6 in-order_binary; the others' remaining ids.
_COUNTERPARTS = {
    "bcast": {6: "binomial", 8: "scatter_recursive_doubling_allgather",
              9: "scatter_ring_allgather"},
    "reduce": {5: "binomial", 7: "reduce_scatter_gather"},
    "allreduce": {3: "recursive_doubling", 6: "reduce_scatter_allgather"},
    "allgather": {2: "brucks", 3: "recursive_doubling", 4: "ring"},
    "allgatherv": {2: "brucks", 3: "ring"},
    "barrier": {4: "dissemination"},
    "gather": {2: "binomial"}, "scatter": {2: "binomial"},
    "scan": {2: "recursive_doubling"}, "exscan": {2: "recursive_doubling"},
    "reduce_scatter": {2: "recursive_halving"},
    "reduce_scatter_block": {2: "recursive_doubling", 3: "recursive_halving"},
}
MPICH_NAMES = {c: {a: mpich_csel.function(c, n) for a, n in _COUNTERPARTS.get(c, {}).items()}
               for c in algorithms.MPICH_ALGORITHMS}

REDUCE_SCATTER_GATHER = "MPIR_Reduce_intra_reduce_scatter_gather"

# The leaf of a method that defers to MPICH (algorithm 0); no MPIR_ name, so it cannot collide.
DEFER = "auto"

# The third axis MPICH can test, and the key ending its chain: MPICH 4.0 has no
# `comm_avg_ppn=any` and its validate_tree asserts on a comm_avg_ppn test without a following
# sibling; `comm_size=any` is always true, in the per-communicator prune and the per-call search.
PPN = "ppn"
PPN_ELSE = "comm_size=any"
PPN_CUTS = "MPICH tests comm_avg_ppn<=N, N >= 1 (ppn values are positive)"
# Exact per-P blocks up to this P for a size csel scales with P (as sinks.emit.ompi_rules).
EXACT_P_LIMIT = 1024


def valid_names(collective):
    """The MPICH algorithm names --mpich-map takes for a collective, as a message lists them."""
    return (", ".join(mpich_csel.short(full) for full in MPICH_ALGORITHMS[collective])
            + f", or a full MPIR_{collective.capitalize()}_... name")


def _full_name(collective, name, where):
    known = MPICH_ALGORITHMS[collective]
    if name in known or re.fullmatch(f"MPIR_{collective.capitalize()}_[A-Za-z0-9_]{{1,64}}",
                                     name):
        return name
    for full in known:
        if mpich_csel.short(full) == name:
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
        if scope:
            if scope in out:
                out[scope][int(ident)] = _full_name(scope, name.strip(), where)
            continue
        # unscoped: every collective that has an algorithm of that name (bcast's binomial is
        # no allgather algorithm); one that none has is refused with the first one's message
        refusals = []
        for c in collectives:
            try:
                out[c][int(ident)] = _full_name(c, name.strip(), where)
            except InputError as e:
                refusals.append(e)
        if len(refusals) == len(collectives) and refusals:
            raise refusals[0]
    return out


def _runs(items, thresholds):
    """[(threshold, item)] of consecutive equal items merged, in first-match order: each run's
    threshold is the one of its last item (inclusive, `<=`), the last run's None (=any)."""
    return [(thresholds[i] if i + 1 < len(items) else None, item)
            for i, item in enumerate(items) if i + 1 == len(items) or items[i + 1] != item]


def _chain(row, loaded, m_cuts, p):
    """[(size threshold or None, leaf)] of one row of m-cell leaves at communicator size p, in
    the quantity csel compares (mpich_csel.MESSAGE); one entry where csel tests no size."""
    message = mpich_csel.MESSAGE[loaded.collective]
    if message is None:
        return [(None, loaded.axes[1].most_measured(row))]
    scale = p if message[1] == mpich_csel.TIMES_P else 1
    return _runs(row, [scale * cut - 1 for cut in m_cuts])


def _p_rows(loaded):
    """[(largest P of the block, P the sizes are converted at, P cell)] in first-match order
    (the last block's largest P None): one per P cell, or, where csel's size scales with P, one
    per P up to the largest measured P (at most EXACT_P_LIMIT), the rest at that P."""
    p_axis = loaded.axes[0]
    p_cuts = text.cuts(p_axis, 2, INT32_MAX, "mpich-json")
    message = mpich_csel.MESSAGE[loaded.collective]
    if message is None or message[1] != mpich_csel.TIMES_P:
        return [(p_cuts[i] - 1 if i < len(p_cuts) else None, None, i)
                for i in range(len(p_cuts) + 1)]
    last = min(int(max(p_axis.values)), EXACT_P_LIMIT)
    rows = [(p, p, p_axis.cell_of(p)) for p in range(2, last)]
    return rows + [(None, last, p_axis.cell_of(last))]


def _blocks(loaded, names):
    """[(P threshold, [(ppn threshold, [(size threshold, leaf name)])])] in first-match order;
    a 2-D tree, and a P block whose decision does not change with ppn, has the one ppn entry
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
    rows = [(p_max, _runs([_chain(leaves[i, :, k].tolist(), loaded, m_cuts, p)
                           for k in range(leaves.shape[2])], [c - 1 for c in ppn_cuts]))
            for p_max, p, i in _p_rows(loaded)]
    blocks = _with_beyond(loaded, _runs([block for _, block in rows],
                                        [p_max for p_max, _ in rows]))
    for p_max, ppn_blocks in blocks:
        for ppn_max, chain in ppn_blocks:
            for value in [p_max, ppn_max] + [m for m, _ in chain]:
                if value is not None and not 0 <= value <= INT32_MAX:
                    raise InputError(f"{loaded.collective} tree: threshold {value} does not fit "
                                     f"in a 32-bit int (MPICH reads thresholds with atoi)")
    return blocks


def _with_beyond(loaded, blocks):
    """`blocks` with tree.json's `beyond`: the last block ends at comm_size<=above and a
    comm_size=any block after it holds MPICH's own decision (DEFER) at every ppn and size."""
    if loaded.beyond is None:
        return blocks
    above = loaded.beyond.above
    kept = [b for b in blocks[:-1] if b[0] < above]
    return kept + [(above, blocks[-1][1]), (None, [(None, [(None, DEFER)])])]


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
        usual = (MPICH_NAMES[coll][min(MPICH_NAMES[coll])] if MPICH_NAMES[coll]
                 else MPICH_ALGORITHMS[coll][0])
        example = ",".join(f"{a}={mpich_csel.short(usual)}" for a in missing)
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


def _leaf(collective, name, own):
    """The JSON object of a leaf: {"algorithm=F": {}}; MPICH's own decision `own` (the base
    file's intra subtree, written {"comm_type=intra": own}: always true there) for DEFER; a
    guarded algorithm (mpich_csel.GUARDS) tests its conditions first, each failing one leading
    to the fallback. Built from the inside out, no recursion."""
    if name == DEFER:
        return {"comm_type=intra": own}
    conditions, fallback = mpich_csel.guard(collective, name)
    node = {f"algorithm={name}": {key: {} for key in mpich_csel.parameters(collective, name)}}
    for key, proceed in reversed(conditions):
        other = own if fallback == mpich_csel.OWN_DECISION else {f"algorithm={fallback}": {}}
        node = {key: node, "comm_type=intra": other} if proceed else \
            {key: other, "comm_type=intra": node}
    return node


def _own_decision(value, where):
    """(intra decision, inter branch or None) of a base collective: its comm_type=intra and
    comm_type=inter subtrees, or the whole value where it has no comm_type (exscan: intra only)."""
    if not isinstance(value, dict):
        raise InputError(f"{where}: not an object")
    if "comm_type=intra" not in value:
        if "comm_type=inter" in value:
            raise InputError(f"{where}: a comm_type=inter branch and no comm_type=intra")
        return value, None
    if "comm_type=inter" not in value:      # MPICH's own file has both wherever it splits
        raise InputError(f"{where}: has no comm_type=inter branch to keep (an "
                         "intercommunicator call would match nothing): not MPICH's file?")
    return value["comm_type=intra"], value["comm_type=inter"]


def _notes(loaded, blocks, release):
    """What the file cannot express of this tree, in words."""
    coll, notes = loaded.collective, []
    message = mpich_csel.MESSAGE[coll]
    if message is None:
        grid = loaded.tree.method_grid(tuple(len(a.values) for a in loaded.axes))
        rows = np.moveaxis(grid, 1, -1).reshape(-1, grid.shape[1])    # (P [x ppn], m)
        split = sum(len(set(row.tolist())) > 1 for row in rows)
        notes.append(f"{coll}: MPICH's selection tests no message size for {coll} (csel.c "
                     f"defines neither avg_msg_size nor total_msg_size for it): one algorithm "
                     f"per communicator size, the tree's choice at the most measured m"
                     + (f"; the tree's m split is lost in {split} P cell(s)" if split else ""))
    elif message[1] == mpich_csel.TIMES_P:
        last = min(int(max(loaded.axes[0].values)), EXACT_P_LIMIT)
        notes.append(f"{coll}: m as {message[0]} = P x m (csel.c), one comm_size block per P "
                     f"up to {last}, larger P converted at P = {last}")
        if coll in ("gather", "scatter"):
            notes.append(f"{coll}: csel.c's total_msg_size is count x P without the type size: "
                         "exact for 1-byte types, as measured; other types compare elements")
    guarded = sorted({mpich_csel.short(name) for _, ppn_blocks in blocks
                      for _, chain in ppn_blocks for _, name in chain
                      if mpich_csel.guard(coll, name)[0]})
    if guarded:
        notes.append(f"{coll}: {', '.join(guarded)} guarded by MPICH "
                     f"{algorithms.MPICH_READ_FROM[release]}'s conditions for it "
                     "(calls that break them run MPICH's fallback)")
    return notes


def _check_release(collective, blocks, release, path, base_name):
    """Refuse (one line) a leaf naming an MPICH algorithm the base file's release lacks: MPICH
    would reject the file, or, for a name a later release dropped, run what it no longer lists."""
    has = algorithms.MPICH_VERSIONS[release][collective]
    known = set(algorithms.MPICH_ALGORITHMS[collective].values())
    lacking = sorted({mpich_csel.short(name) for _, ppn_blocks in blocks
                      for _, chain in ppn_blocks for _, name in chain
                      if name != DEFER and mpich_csel.short(name) in known - set(has)})
    if lacking:
        owner = [v for v, names in algorithms.MPICH_VERSIONS.items()
                 if lacking[0] in names[collective]]
        hint = (" pass --mpich-base build/mpich5/generic.json (make mpich5-base: MPICH 5.0's "
                "selection)" if "5.0" in owner else f" give the base file of MPICH {owner[0]}")
        raise InputError(f"{path}: the tree's {collective} leaves use {', '.join(lacking)}, "
                         f"which MPICH {algorithms.MPICH_READ_FROM[release]} (the base file "
                         f"{base_name}) lacks;{hint}")


def _generated(key, value, path, loaded, mapping, base_name, release):
    """The template entry of a collective the tree decides, and its notes."""
    intra, inter = _own_decision(value, f"{base_name}: {key}")
    blocks = _blocks(loaded, leaf_names(loaded, mapping, path))
    _check_release(loaded.collective, blocks, release, path, base_name)
    needs_own = any(name == DEFER or mpich_csel.guard(loaded.collective, name)[1]
                    == mpich_csel.OWN_DECISION for _, ppn_blocks in blocks
                    for _, chain in ppn_blocks for _, name in chain)
    own = _defer_subtree(intra, f"{base_name}: {key}") if needs_own else None
    leaves = {}
    for _, ppn_blocks in blocks:
        for _, chain in ppn_blocks:
            for _, name in chain:
                if name not in leaves:
                    leaves[name] = _leaf(loaded.collective, name, own)
    def dump(name, indent):
        return _dump(leaves[name], indent)
    notes = _notes(loaded, blocks, release)
    if len(loaded.axes) == 3:
        notes.append(f"{loaded.collective}: {PPN} as comm_avg_ppn<=N, which MPICH tests as "
                     "P <= N x nodes (its node count of the communicator): with unequal "
                     "ranks per node it takes the ppn of ceil(P / nodes)")
    return {"key": key, "blocks": blocks, "dump": dump,
            "message": (mpich_csel.MESSAGE[loaded.collective] or (None,))[0],
            "inter": _dump(inter, 4) if inter is not None else None}, notes


def emit(trees, options):
    if options.mpich_base is None:
        raise InputError("--target mpich-json needs MPICH's default selection: give "
                         "--mpich-base FILE (collsel emit reads it from the installed MPICH)")
    names = options.tree_names or [f"tree {i + 1}" for i in range(len(trees))]
    by_collective = {}
    for path, loaded in zip(names, trees):
        text.collective(loaded, "mpich-json")
        if loaded.collective not in MPICH_NAMES:
            raise InputError(f"{path}: no MPICH JSON mapping for {loaded.collective} (MPICH's "
                             f"selection collectives collsel measures: "
                             f"{', '.join(sorted(MPICH_NAMES))})")
        _check_axes(loaded, path)
        if loaded.collective in by_collective:
            raise InputError(f"{path}: a second {loaded.collective} tree (one per collective)")
        by_collective[loaded.collective] = (path, loaded)
    mapping = {c: (options.mpich_map or {}).get(c, {}) for c in by_collective}
    base, base_name = options.mpich_base, options.mpich_base_name
    release = mpich_csel.base_release(json.dumps(base))
    entries, notes = [], []
    for key, value in base.items():
        collective = key.split("=", 1)[1] if key.startswith("collective=") else None
        if collective not in by_collective:
            entries.append({"key": key, "copied": _dump(value, 2)})
            continue
        path, loaded = by_collective.pop(collective)
        entry, entry_notes = _generated(key, value, path, loaded, mapping, base_name, release)
        entries.append(entry)
        notes += entry_notes
    if by_collective:
        missing = ", ".join(f"collective={c}" for c in sorted(by_collective))
        raise InputError(f"{base_name}: no {missing} to replace")
    rendered = render("mpich_selection.json.j2", entries=entries, ppn_else=PPN_ELSE)
    json.loads(rendered)  # the template's output must be JSON; a failure here is a collsel bug
    return Emitted({"mpich_selection.json": rendered}, notes)
