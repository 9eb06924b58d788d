"""Targets `ompi-rules` and `ompi-json` of `collsel emit`: Open MPI coll/tuned dynamic rules files.

`ompi-rules` is the classic file Open MPI 4.1 / 5.0 read through
`--mca coll_tuned_use_dynamic_rules 1 --mca coll_tuned_dynamic_rules_filename FILE`;
`ompi-json` is the JSON rules file of Open MPI 6 / main (explicit inclusive ranges, `seg_size`).
One or more trees (one per collective) go into one file, collectives in id order.

Mapping. A tree over (P, m) is resolved into communicator-size blocks, each a ladder of
message-size thresholds. By default there is one block per cell of the tree's P axis, and
neighbouring blocks with the same ladder are merged: every P split of the tree then falls on a
block boundary and every m split on a message threshold, so the file decides exactly what the
tree decides for every integer P >= 1 and m >= 0. `--ompi-comm-sizes LIST` sets the blocks
instead (e.g. powers of two); a block then spans P cells the tree may decide differently, and
it takes, per m cell, the method most of the tree's grid P values inside the block pick (ties:
the lowest P's). That is where a rules file loses precision against the tree: a classic block
covers [COMSIZE_j, COMSIZE_{j+1} - 1] and nothing finer. `collsel emit` prints, per collective,
the share of the tree's grid points (measured P x measured m) where the written file, read back
with Open MPI's own matching (`ompi_rules_check`), decides differently from the tree.

Message size. Thresholds are written in the size Open MPI's dynamic decision matches, which for
eight collectives is not the tree's m (core.mpi.rules_size): P · m (alltoall, allgather, gather,
scatter, reduce_scatter_block) gets one block per communicator size up to the largest measured
P, exact there (a chosen block converts at its median measured P); a size that ignores the count
(scan, exscan, alltoallv) gets one rule per block, the method the tree picks at the most
measured m, and a note saying where the tree's m split is lost.

Defer. A tree leaf holding algorithm 0 (the MPI's own decision) is written as a rule with ALG 0
(`MSGSIZE 0 0 0`, JSON `"alg": 0`). Open MPI 4.1 / 5.0's `*_intra_dec_dynamic` takes a rule only
`if (alg)`: with 0 it runs the algorithm forced by `coll_tuned_<coll>_algorithm` if one is set, else
`*_intra_dec_fixed`, its fixed decision (coll_tuned_decision_dynamic.c; shown on Debian's Open MPI
4.1.4 by tests/integration/test_ompi_rules_in_ompi.py, which traces the coll/base algorithm each
call ran). Open MPI main / 6 keeps the same `if (alg)` fall-through after its JSON reader, and 0 is
the "ignore" value of the algorithm enum, so `"alg": 0` means the same there (read from the
source, not run: no Open MPI 6 here). `collsel emit` notes the grid cells that defer. A tree
with `beyond` (tree.json) gets a last communicator-size block from above + 1 with one ALG 0
rule: every larger P takes Open MPI's own decision.

Refused methods. Open MPI 4.1.4's two_proc algorithms fail the call at any P but 2
(core.mpi.fallbacks.refused); a tree measured at P = 2, 4, 8 spans P = 3 with its P = 2 cell and may
pick one there. The blocks are split where such a method starts or stops running (at P = 2 and
3), and the rule is ALG 0 wherever the method fails: P = 2 keeps two_proc, P >= 3 defers, as
`collsel query` decides.

Third axis. A tree whose third axis is ppn (processes per node; any other third axis is
refused) is written as sinks.emit.ompi_ppn says: the classic file gets one method per (P, m),
the projection over the tree's ppn values; the JSON file has "single-node" and "one-per-node"
blocks (exact for ppn = P and ppn = 1) before the blocks every other communicator takes (the
projection over 2 <= ppn <= P/2). The share of the tree's (P, m, ppn) grid points (ppn <= P)
where the file decides otherwise is noted; what they cost in time, on a table:
`collsel check-rules FILE --table TABLE --z ppn`.

Other limits the format has, whatever the blocks: no operation axis: Open MPI 4.1 applies a
reduce rule to non-commutative operations too (its dynamic path does not look at
commutativity), so only linear (1) and in-order binary (6) are safe there.
"""
import json

import numpy as np

from collsel import __version__
from collsel.core.io import values
from collsel.core.mpi import fallbacks, rules_size
from collsel.core.io.sizes import parse_size
from collsel.errors import CollselError, InputError
from collsel.sinks.emit import ompi_ppn, render, text
from collsel.sinks.emit import ompi_rules_reader as check
from collsel.sinks.emit.deploy import deploy_line
from collsel.sinks.emit.targets import Emitted

MAX_INT = 2**31 - 1
MAX_LONG = 2**63 - 1


def parse_comm_sizes(text):
    """--ompi-comm-sizes text -> ascending block starts (None: exact blocks)."""
    if text is None:
        return None
    sizes = [parse_size(x, "--ompi-comm-sizes", *values.COMM_SIZE, "communicator size")
             for x in text.split(",") if x.strip()]
    if not sizes or any(b <= a for a, b in zip(sizes, sizes[1:])):
        raise InputError(f"--ompi-comm-sizes '{text}': sizes must be >= 1 and strictly ascending")
    return tuple(sizes)


def check_trees(trees, target, names=()):
    """The trees (one per collective, each one Open MPI can take) in collective id order."""
    seen = {}
    names = list(names) or [f"tree {i + 1}" for i in range(len(trees))]
    for name, t in zip(names, trees):
        text.collective(t, target)
        ompi_ppn.ppn_axis(t, target, name)
        if t.collective not in check.COLLECTIVE_IDS:
            raise InputError(f"{name}: '{t.collective}' is not an Open MPI collective (known: "
                             f"{', '.join(check.COLLECTIVE_IDS)})")
        if t.collective in seen:
            raise InputError(f"{name}: a second tree for {t.collective} (the first: "
                             f"{seen[t.collective][0]}): a rules file holds one per collective")
        try:    # Open MPI reads COMSIZE as an int and MSGSIZE as a long
            text.cuts(t.axes[0], 2, MAX_INT, target, "Open MPI takes communicator sizes as an "
                      "int")
            text.cuts(t.axes[1], 1, MAX_LONG, target, "Open MPI rules take message sizes up to "
                      "a long")
            text.methods(t, target)
        except InputError as e:
            raise InputError(f"{name}: {e}") from None
        seen[t.collective] = (name, t)
    return [seen[c][1] for c in sorted(seen, key=check.COLLECTIVE_IDS.get)]


def cell_decisions(loaded):
    """Method index per (P cell, m cell) of the tree's axes: a 3-axis (ppn) tree's projection."""
    if len(loaded.axes) == 3:
        return ompi_ppn.project(loaded)
    return loaded.tree.method_grid(tuple(len(a.values) for a in loaded.axes))


def _ladder(row, loaded, comm_size):
    """[(first rule message size of the run, method index)] for one row of m-cell decisions, in
    the size Open MPI's dynamic decision matches at `comm_size` (core.mpi.rules_size); one rule when
    that size ignores the count. Thresholds past a long are dropped: no call reaches them."""
    m_axis, collective = loaded.axes[1], loaded.collective
    if rules_size.relation(collective) == rules_size.IGNORED:
        return [(0, m_axis.most_measured(row))]
    starts = np.flatnonzero(np.r_[True, row[1:] != row[:-1]])
    ladder = [(0 if k == 0 else rules_size.rule_msg_size(collective, comm_size,
                                                          int(m_axis.cuts[k - 1])), int(row[k]))
              for k in starts]
    return [(m0, method) for m0, method in ladder if m0 <= MAX_LONG]


# Exact per-P blocks up to this P: beyond it (a tree measured at thousands of ranks) one block per
# P cell of the tree, converted at its first P, keeps the file (and the emitter's memory) bounded.
EXACT_P_LIMIT = 1024


def _per_comm_size(starts, rows, loaded):
    """(starts, rows) with one block per integer P up to the largest measured P (at most
    EXACT_P_LIMIT) when the rule's size scales with P (a block applies its thresholds to every
    P it covers); unchanged else."""
    if rules_size.relation(loaded.collective) != rules_size.TIMES_P:
        return starts, rows
    last = min(int(max(loaded.axes[0].values)), EXACT_P_LIMIT)
    bounds = list(starts[1:]) + [last + 1]
    out_starts, out_rows = [], []
    for start, end, row in zip(starts, bounds, rows):
        exact_end = min(max(int(end), int(start) + 1), EXACT_P_LIMIT + 1)
        for p in range(int(start), exact_end):
            out_starts.append(p)
            out_rows.append(row)
        if int(start) > EXACT_P_LIMIT:        # a P cell wholly above the exact range
            out_starts.append(int(start))
            out_rows.append(row)
    return out_starts, out_rows


def _merged(starts, rows, loaded):
    """[(first P, ladder)] of exact blocks, neighbours with the same ladder merged."""
    blocks = []
    for start, row in zip(*_per_comm_size(starts, rows, loaded)):
        ladder = _ladder(np.asarray(row), loaded, start)
        if not blocks or blocks[-1][1] != ladder:
            blocks.append((start, ladder))
    return blocks


def _middle_p(values, lo, hi):
    """The P whose rule sizes a chosen block [lo, hi) converts thresholds at: the median measured
    P inside it (the lower of two), else its start."""
    inside = [int(v) for v in values if lo <= v < hi]
    return inside[(len(inside) - 1) // 2] if inside else max(lo, 1)


def blocks_of(loaded, comm_sizes=None, decisions=None):
    """[(first P of the block, ladder)], ascending, each ladder starting at m = 0, of the
    (P cell, m cell) `decisions` (default: the tree's, cell_decisions)."""
    p_axis = loaded.axes[0]
    decisions = cell_decisions(loaded) if decisions is None else decisions
    if comm_sizes is None:
        return _merged([1] + [int(c) for c in p_axis.cuts], decisions, loaded)
    else:
        starts = list(comm_sizes)
        values = np.asarray(p_axis.values, dtype=np.int64)
        bounds = starts[1:] + [np.iinfo(np.int64).max]
        rows = []
        for k, (lo, hi) in enumerate(zip(starts, bounds)):
            inside = (values < hi) & ((values >= lo) | (k == 0))
            if not inside.any():       # no grid P here: the cell holding the block's start
                cell = p_axis.cell_of(max(lo, 1))
                rows.append(decisions[cell])
                continue
            cells = np.unique(p_axis.cells_of(values[inside]))
            sub = decisions[cells]
            # majority per m column; ties go to the method the lowest P cell picks
            counts = (sub[:, None, :] == sub[None, :, :]).sum(axis=1)   # (cells, m)
            rows.append(sub[np.argmax(counts, axis=0), np.arange(sub.shape[1])])
    # a block's thresholds hold for one P only: its median measured P (the first block also
    # covers every P below its start)
    return [(start, _ladder(np.asarray(row), loaded,
                            _middle_p(p_axis.values, start if k else 0, hi)))
            for k, (start, row, hi) in enumerate(zip(starts, rows, bounds))]


def single_node_blocks(loaded, comm_sizes=None):
    """Blocks for communicators on one node (ppn = P) of a ppn tree: exact, from the P ranges
    on which P and ppn = P stay in one cell each; with `comm_sizes`, each measured P at its own
    ppn, through blocks_of."""
    grid = ompi_ppn.grid(loaded)
    if comm_sizes is None:
        ranges = ompi_ppn.single_node_ranges(loaded)
        return _merged([start for start, _, _ in ranges],
                       [grid[p, :, z] for _, p, z in ranges], loaded)
    z_cells = loaded.axes[2].cells_of(loaded.axes[0].values)
    return blocks_of(loaded, comm_sizes, grid[np.arange(len(z_cells)), :, z_cells])


def json_groups(loaded, comm_sizes=None):
    """[(comm_rank_distribution or None, blocks)] of a JSON rules file, first match first: one
    group for a 2-axis tree; for a ppn tree "single-node", "one-per-node", then the rest."""
    if len(loaded.axes) == 2:
        return [(None, blocks_of(loaded, comm_sizes))]
    grid = ompi_ppn.grid(loaded)
    rest = ompi_ppn.project(loaded, ompi_ppn.several_nodes_several_ranks(loaded))
    return [("single-node", single_node_blocks(loaded, comm_sizes)),
            ("one-per-node", blocks_of(loaded, comm_sizes,
                                       grid[:, :, loaded.axes[2].cell_of(1)])),
            (None, blocks_of(loaded, comm_sizes, rest))]


def _runs_merged(ladder):
    """`ladder` with neighbouring rules of the same method merged into the first."""
    return [(m0, i) for k, (m0, i) in enumerate(ladder) if k == 0 or ladder[k - 1][1] != i]


def with_refusals(loaded, blocks):
    """`blocks` split at the P where one of their methods starts or stops failing
    (core.mpi.fallbacks: two_proc runs at P = 2 only, a refusal reads P alone), each block's refused
    rules written as algorithm 0 (Open MPI's fixed decision, as a deferring leaf): a P cell 2..3
    choosing two_proc becomes a block P 2..2 keeping it and one from P = 3 deferring."""
    if not loaded.refusable:
        return blocks
    ids = [m.algorithm for m in loaded.methods]
    edges = fallbacks.refusal_edges(loaded.collective,
                                    {ids[i] for _, ladder in blocks for _, i in ladder})
    out = []
    for k, (start, ladder) in enumerate(blocks):
        end = blocks[k + 1][0] if k + 1 < len(blocks) else None
        for p in [start] + [e for e in edges if start < e and (end is None or e < end)]:
            refused = fallbacks.refused(loaded.collective, [ids[i] for _, i in ladder], p)
            guarded = _runs_merged([(m0, loaded.defer_index if r else i)
                                    for (m0, i), r in zip(ladder, refused.tolist())])
            if not out or out[-1][1] != guarded:
                out.append((p, guarded))
    return out


def with_beyond(loaded, blocks):
    """`blocks` with tree.json's `beyond`: a last block from above + 1 whose one rule is
    algorithm 0 (Open MPI's fixed decision, as a deferring leaf); blocks starting past above
    (--ompi-comm-sizes) are dropped."""
    if loaded.beyond is None:
        return blocks
    above = loaded.beyond.above
    return ([b for k, b in enumerate(blocks) if k == 0 or b[0] <= above]
            + [(above + 1, [(0, loaded.defer_index)])])


def _block_context(loaded, blocks, target, distribution=None):
    methods = text.methods(loaded, target)
    size = "m" if rules_size.relation(loaded.collective) == rules_size.IDENTITY else "size"
    out = []
    for j, (start, ladder) in enumerate(blocks):
        start = int(start)
        end = int(blocks[j + 1][0]) - 1 if j + 1 < len(blocks) else None
        rules = []
        for k, (m0, method) in enumerate(ladder):
            m0 = int(m0)
            m1 = int(ladder[k + 1][0]) - 1 if k + 1 < len(ladder) else None
            meth = methods[method]
            rules.append({"msg_min": m0, "msg_max": m1, "alg": meth["algorithm"],
                          "segsize": meth["segsize"], "faninout": meth["faninout"],
                          "name": meth["name"],
                          "range": f"{size} {m0}..{m1}" if m1 is not None
                          else f"{size} >= {m0}"})
        out.append({"comm_min": start if j else 0, "comm_start": start, "comm_max": end,
                    "distribution": distribution,
                    "range": ("every P" if j == 0 and end is None else f"P <= {end}" if j == 0
                              else f"P >= {start}" if end is None else f"P {start}..{end}"),
                    "rules": rules})
    return out


def differences(loaded, decide):
    """([(point, the tree's Method, decide's (alg, seg, fan))] where they differ, number of
    points) over the tree's grid (a ppn tree's where ppn <= P); `decide(P, m[, ppn])` -> (alg,
    seg, fan)."""
    points = ompi_ppn.grid_points(loaded)
    if not points[0]:
        return [], 0
    want = [loaded.methods[i] for i in loaded.decide(points).tolist()]
    got = [tuple(decide(*point)) for point in zip(*points)]
    differ = [(point, w, g) for point, w, g in zip(zip(*points), want, got)
              if (w.algorithm, w.segsize, w.faninout) != g]
    return differ, len(want)


def disagreement(loaded, decide):
    """(points that differ, points): differences() counted."""
    differ, total = differences(loaded, decide)
    return len(differ), total


# Algorithm 0 in a rule: coll/tuned's *_dec_dynamic skips the rule (`if (alg)`), then runs the
# algorithm forced by coll_tuned_<coll>_algorithm if one is, else *_dec_fixed (Open MPI 4.1.4,
# coll_tuned_decision_dynamic.c; the same on main for JSON rules); tests/integration proves it.
RULES_DEFER = ("rule algorithm 0: coll/tuned runs its fixed decision there "
               "(or coll_tuned_<coll>_algorithm if that forces one)")


# The template's line per collective: what its MSGSIZE is (core.mpi.rules_size).
SIZE_TEXT = {rules_size.IDENTITY: "",
             rules_size.TIMES_P: ": MSGSIZE is P * m, the size Open MPI's dynamic decision "
                                 "matches (m = one rank's block)",
             rules_size.IGNORED: ": Open MPI's dynamic decision ignores the count: one rule "
                                 "per block"}


# What each format makes of a ppn tree (sinks.emit.ompi_ppn), for the notes.
PROJECTION = ("one method per (P, m), the one the tree picks at the most of its ppn values "
              "<= P (ties: at the largest)")
PPN_CLASSIC = "a classic rules file cannot express ppn: " + PROJECTION
PPN_JSON = ('comm_rank_distribution expresses ppn = P ("single-node") and ppn = 1 '
            '("one-per-node", matched only on communicators Open MPI marks disjoint) exactly; '
            'it cannot tell apart the other communicators (several nodes with several ranks on '
            'some node: 2 <= ppn <= P/2, and every uneven mapping): one method per (P, m) for '
            'them, the one the tree picks at the most of its ppn values in 2..P/2 (ties: at '
            'the largest)')


def _notes(loaded, blocks, differ, total, ppn_rule):
    """What a rules file kept of one tree: its blocks and rules, where it decides otherwise, and
    where it defers to Open MPI's own decision."""
    rules = sum(len(ladder) for _, ladder in blocks)
    share = f" ({100.0 * differ / total:.2f}%)" if total else ""
    points = "(P, m, ppn) grid points with 1 <= ppn <= P" if len(loaded.axes) == 3 else \
        "grid points"
    notes = [f"{loaded.collective}: {len(blocks)} communicator-size block(s), {rules} message "
             f"rule(s); decides differently from the tree on {differ} of {total} {points}"
             f"{share}"]
    if len(loaded.axes) == 3:
        notes.append(f"{loaded.collective}: ppn: {ppn_rule}; the tree's decision changes with "
                     f"ppn in {ompi_ppn.varying_cells(loaded)} of "
                     f"{len(loaded.axes[0].values) * len(loaded.axes[1].values)} (P, m) cells; "
                     "the time this costs on measurements: collsel check-rules THIS_FILE "
                     "--table TABLE --z ppn")
    return notes + _size_notes(loaded, blocks) + text.defer_notes(loaded, "Open MPI",
                                                                    RULES_DEFER)


def _size_notes(loaded, blocks):
    """What the rule's message size (core.mpi.rules_size) made of the tree's m axis."""
    coll = loaded.collective
    kind, source = rules_size.relation(coll), rules_size.SOURCE.get(coll)
    if kind == rules_size.IDENTITY or source is None:
        return []
    where = (f"coll_tuned_decision_dynamic.c:{source.line_414} of Open MPI 4.1.4 "
             f"({source.line_5010} of 5.0.10), `{source.text}`")
    if kind == rules_size.TIMES_P:
        return [f"{coll}: Open MPI matches rules at P · m ({where}): thresholds written as P · "
                "the tree's m cut, one block per communicator size up to the largest measured "
                f"P ({int(max(loaded.axes[0].values))}, at most {EXACT_P_LIMIT}), exact there; "
                "a larger P takes that last block's thresholds, above "
                f"{EXACT_P_LIMIT} one block per P cell of the tree converted at its first P "
                "(and a block of --ompi-comm-sizes those of its median measured P)"]
    rows = cell_decisions(loaded)
    varying = sum(len(set(rows[loaded.axes[0].cell_of(v)].tolist())) > 1
                  for v in loaded.axes[0].values)
    return [f"{coll}: Open MPI's dynamic decision does not read the count ({where}): one "
            "rule per communicator-size block, the method the tree picks at the most measured "
            f"m; not expressible: the tree's decision changes with m at {varying} of "
            f"{len(loaded.axes[0].values)} measured P"]


def _header(loaded_list, comm_sizes):
    summary = []
    for t in loaded_list:
        b = t.build
        limits = [f"max depth {int(b['max_depth'])}" if b.get("max_depth") is not None else "",
                  f"threshold {float(b['threshold']):g}%" if b.get("threshold") is not None
                  else ""]
        summary.append(f"{t.collective} (id {check.COLLECTIVE_IDS[t.collective]}): "
                       f"{', '.join(x for x in limits if x) or 'exact'} tree, "
                       f"{t.tree.node_count} nodes"
                       + ("; third axis ppn projected: " + PROJECTION if len(t.axes) == 3
                          else "") + "; " + text.measured_p(t))
    return {"version": __version__, "trees": summary,
            "deploy": deploy_line("ompi-rules", "THIS_FILE"),
            "blocks_from": ("--ompi-comm-sizes " + ",".join(map(str, comm_sizes))
                            if comm_sizes else "one block per P cell of the tree (exact)")}


def _collectives(trees, comm_sizes, target, names=()):
    loaded_list = check_trees(trees, target, names)
    collectives = []
    for t in loaded_list:
        groups = [(dist, with_beyond(t, with_refusals(t, blocks))) for dist, blocks in (
            json_groups(t, comm_sizes) if target == "ompi-json"
            else [(None, blocks_of(t, comm_sizes))])]
        collectives.append({"name": t.collective, "id": check.COLLECTIVE_IDS[t.collective],
                            "size_text": SIZE_TEXT[rules_size.relation(t.collective)],
                            "blocks": [b for dist, blocks in groups
                                       for b in _block_context(t, blocks, target, dist)],
                            "_blocks": [b for _, blocks in groups for b in blocks],
                            "_tree": t})
    return collectives, _header(loaded_list, comm_sizes)


def emit_json(trees, options):
    """Target `ompi-json`: the rules file of Open MPI 6 / main."""
    collectives, header = _collectives(trees, options.ompi_comm_sizes, "ompi-json",
                                      options.tree_names)
    rendered = render("ompi_rules.json.j2", collectives=collectives, **header)
    document = json.loads(rendered)      # the template must give valid JSON
    notes = [line for c in collectives for line in _notes(
        c["_tree"], c["_blocks"], *disagreement(c["_tree"], _json_decider(document, c["name"])),
        PPN_JSON)]
    return Emitted({"rules.json": rendered}, notes)


def emit_classic(trees, options):
    """Target `ompi-rules`: the classic rules file of Open MPI 4.1 / 5.0."""
    collectives, header = _collectives(trees, options.ompi_comm_sizes, "ompi-rules",
                                      options.tree_names)
    version = options.ompi_rules_version
    if version not in (1, 2):
        raise InputError(f"--ompi-rules-version {version}: 1 or 2")
    rendered = render("ompi_rules.conf.j2", collectives=collectives, file_version=version,
                      **header)
    # read the file back as Open MPI would: it must be clean, and it is what we score. Every
    # value was checked against what Open MPI reads, so an error here is a collsel bug.
    ompi = (4, 1, 8) if version > 1 else (4, 1, 4)
    rules = check.read("<emitted>", rendered.encode("ascii"), ompi)
    if rules.errors:
        line, message = rules.errors[0]
        raise CollselError(f"internal error: the emitted rules file fails check-rules, line "
                           f"{line}: {message}")
    notes = [line for c in collectives for line in _notes(c["_tree"], c["_blocks"], *disagreement(
        c["_tree"], lambda p, m, z=None, i=c["id"]: rules.decide(i, p, m)[:3]), PPN_CLASSIC)]
    return Emitted({"rules.conf": rendered}, notes)


json_lookup = check.json_lookup     # one matcher: the reader's (Open MPI main's first match)


def _json_decider(document, collective):
    rules = check.JsonRulesFile("<emitted>", document)
    return lambda p, m, z=None: rules.decide(check.COLLECTIVE_IDS[collective], p, m, z)[:3]
