"""`collsel check-rules FILE`: read an Open MPI classic rules file as Open MPI does (the reader is
collsel.sinks.emit.ompi_rules_reader), report every trap, and optionally evaluate it: at given
points (--query, --points), against trees (--tree: per collective, where it decides otherwise
than its tree, compared as `collsel emit` compares) or on measurements (--table: the penalty of
its decisions, scored by core.trees.penalty as every other chooser is)."""
import sys

import numpy as np

from collsel.commands.options import read_tables, the_collective
from collsel.core.io import csvfile, names, sizes
from collsel.core.maps import decision_map
from collsel.core.mpi import method_text
from collsel.core.trees import penalty, treefile
from collsel.core.mpi.algorithms import Method
from collsel.errors import InputError, printable
from collsel.sinks.emit import ompi_rules
from collsel.sinks.emit.ompi_rules_reader import (COLLCOUNT, COLLECTIVE_IDS, COLLECTIVE_NAMES,
                                                  JsonRulesFile, load_any, parse_version,
                                                  rule_size_of, summary)
from collsel.commands import add_command


def register(sub):
    p = add_command(
        sub, "check-rules",
        description="Read a classic Open MPI coll/tuned dynamic rules file "
        "(coll_tuned_dynamic_rules_filename) the way Open MPI 4.1 / 5.0 reads it, and report "
        "every error and every silent trap (leading zeros, wrong counts, unordered blocks, a "
        "version line Open MPI does not understand, ...) as one line FILE:LINE: message. "
        "Exit 0 when the file is clean, 2 otherwise. With --query or --points, print what "
        "Open MPI would run: 'algorithm segsize faninout' (the order `collsel query` uses; "
        "algorithm 0 = Open MPI's fixed decision). A file holding a JSON object is read as "
        "Open MPI 6 / main's JSON rules file (collsel emit --target ompi-json), whatever "
        "--ompi-version says; --query and --points then ask it for a communicator spread over "
        "several nodes with several ranks on some (neither single-node nor one-per-node). "
        "The answers name the method ('P=8 m=65536: binomial (alg 6, seg 0, fan 0)'); --ids "
        "prints only 'algorithm segsize faninout', as `collsel query --ids` does. M, and the "
        "table's m, are collsel's m (one rank's block for alltoall, allgather, gather, scatter, "
        "reduce_scatter_block): the file is matched at the size Open MPI's dynamic decision "
        "computes from it (P · m for those five; for scan and exscan P, for alltoallv 0, "
        "whatever the count), printed as '(rule size S)' where it differs.")
    p.add_argument("file", metavar="FILE")
    p.add_argument("--ompi-version", default="4.1.4", metavar="X.Y.Z",
                   help="the Open MPI release whose reader to emulate (default 4.1.4, Debian "
                   "12's; the version line needs >= 4.1.8 or >= 5.0.7)")
    p.add_argument("--collective", help="for --query/--points: bcast, reduce, ... (or an id)")
    p.add_argument("--query", nargs=2, metavar=("P", "M"),
                   help="communicator size (1..2^31-1) and message size in bytes (0..2^64-1; "
                   "64K, 1M, 2^20 as every size option takes them)")
    p.add_argument("--points", metavar="FILE", help="one 'P M' per line ('-' = stdin)")
    p.add_argument("--ids", action="store_true",
                   help="with --query/--points: print only 'algorithm segsize faninout' per "
                   "point, for scripts")
    p.add_argument("--tree", action="append", metavar="TREE.json",
                   help="compare the file with a tree (repeat, one per collective; e.g. the "
                   "trees it was emitted from): per collective, on how many of the tree's grid "
                   "points (measured P x measured m) the file decides what the tree decides, "
                   "and the first point where it does not; the file's collectives without a "
                   "tree are named")
    p.add_argument("--table", action="append", metavar="TABLE",
                   help="score the file on a performance table (repeat for several): for every "
                   "measured cell, penalty = time(the method the file picks) / time(the best "
                   "measured) - 1, beside Open MPI's default (algorithm 0 rows) on the same "
                   "cells; needs --collective when the table holds several")
    p.add_argument("--z", metavar="COLUMN",
                   help="with --table: the table's third axis (e.g. ppn): every (P, m, z) cell "
                   "is scored, with figures per z value; a classic file sees only P and m, a "
                   "JSON file also a numeric ppn (P ranks spread evenly at ppn per node: "
                   "single-node when ppn >= P, one-per-node when ppn = 1)")
    p.set_defaults(run=run_check)


def _collective_id(text):
    if text is None:
        raise InputError("--query/--points need --collective")
    if text.isdigit() and int(text) < COLLCOUNT:
        return int(text)
    name = names.canonical(text, COLLECTIVE_IDS)        # 'MPI_Bcast' too (core.io.names)
    if name in COLLECTIVE_IDS:
        return COLLECTIVE_IDS[name]
    raise InputError(f"--collective '{text}' is not an Open MPI collective name or id"
                     f"{names.did_you_mean(text, COLLECTIVE_IDS)}")


def _point(p, m, where):
    """(P, m) checked as `collsel query` checks them (core.io.values)."""
    return sizes.comm_size(p, where), sizes.msg_size(m, where)


def _points(args):
    if args.query:
        return [_point(*args.query, "--query")]
    try:
        text = ("\n".join(csvfile.read_lines(args.points, "a points file"))
                if args.points != "-" else sys.stdin.read())
    except OSError as e:
        raise InputError(f"{args.points}: cannot read: {e.strerror}") from None
    except UnicodeDecodeError as e:
        raise InputError(f"{args.points}: cannot read: {e}") from None
    out = []
    for lineno, line in enumerate(text.splitlines(), 1):
        fields = line.split("#", 1)[0].split()
        if not fields:
            continue
        if len(fields) != 2:
            raise InputError(f"{args.points}:{lineno}: expected 'P M', got "
                             f"{len(fields)} value(s)")
        out.append(_point(*fields, f"{args.points}:{lineno}"))
    return out


def _scored_table(args):
    """(collective name, decision map) of --table, read before the rules file."""
    if args.z and not args.table:
        raise InputError("--z needs --table")
    tables = read_tables(args.table)
    coll_id = _collective_id(the_collective(tables, args.collective))
    name = next(n for n, i in COLLECTIVE_IDS.items() if i == coll_id)
    return name, coll_id, decision_map.build_map(tables.select(name), args.z)


def rules_choice(rules, coll_id, dmap):
    """Method index of dmap the file picks in every cell (-1: a method the table lacks). A
    classic file sees P and m only; a JSON file also sees a numeric ppn third axis (its
    comm_rank_distribution rules), taken as an even spread of P ranks at that ppn."""
    index = {m: i for i, m in enumerate(dmap.methods)}
    axes = dmap.axes
    z = axes[2] if len(axes) == 3 else None
    ppn = (z.values if z is not None and z.name == "ppn" and z.kind != decision_map.CATEGORY
           else [None] * (len(z.values) if z is not None else 1))
    cells = np.empty((len(axes[0].values), len(axes[1].values), len(ppn)), dtype=np.int64)
    for i, p in enumerate(axes[0].values):
        for j, m in enumerate(axes[1].values):
            for k, zv in enumerate(ppn):
                cells[i, j, k] = index.get(Method(*rules.decide(coll_id, p, m, zv)[:3]), -1)
    return cells if z is not None else cells[:, :, 0]


def _figures(name, chosen, best, extra=""):
    s = penalty.score(chosen, best)
    if not s["cells"]:
        return f"  {name}: no cell scored{extra}"
    return (f"  {name}: penalty mean {s['mean']:.2f}%, median {s['median']:.2f}%, max "
            f"{s['max']:.2f}% on {s['cells']} cells; the best on {s['picks_best']}, within "
            f"5 % on {s['within_5pct']}{extra}")


def table_report(path, collective, coll_id, rules, dmap, tables):
    """Lines: the file's penalty on the table's measured cells (overall, per z value), where it
    picks a method the table lacks, and Open MPI's default on the same cells."""
    choice = rules_choice(rules, coll_id, dmap)
    times = np.take_along_axis(dmap.scored_times(), np.maximum(choice, 0)[..., None],
                               axis=-1)[..., 0]
    chosen = np.where(choice >= 0, times, np.nan)
    best = np.where(dmap.measured, dmap.best_time, np.nan)
    lacking = int((dmap.measured & (choice < 0)).sum())
    lines = [f"{path} on {', '.join(tables)} ({collective}, {int(dmap.measured.sum())} measured "
             "cells):",
             _figures("this file", chosen, best,
                      f"; {lacking} cells unscored (a method the table lacks)" if lacking else "")]
    if len(dmap.axes) == 3:
        z = dmap.axes[2]
        for k, label in enumerate(z.labels):
            lines.append(_figures(f"this file at {z.name}={label}", chosen[:, :, k],
                                  best[:, :, k]))
    base = dmap.baseline_time
    if np.isfinite(base).any():
        lines.append(_figures("Open MPI's default (algorithm 0) on the same cells",
                              np.where(np.isfinite(chosen), base, np.nan), best))
    return lines


def _point_text(point):
    return " ".join(f"{axis}={int(v)}" for axis, v in zip(("P", "m", "ppn"), point))


def tree_report(path, rules, trees, name_of):
    """One line per tree (`name_of`: collective -> its file name): where the file decides as the
    tree does (the emitter's comparison, ompi_rules.differences), and one naming the file's
    collectives no tree was given for."""
    lines = []
    for t in trees:
        coll_id = COLLECTIVE_IDS[t.collective]
        differ, total = ompi_rules.differences(
            t, lambda p, m, z=None, i=coll_id: rules.decide(i, p, m, z)[:3])
        line = (f"{path}: {t.collective} ({name_of[t.collective]}): the file decides as the "
                f"tree on {total - len(differ)} of {total} grid points")
        if differ:
            point, want, got = differ[0]
            line += (f"; differs on {len(differ)} ({100.0 * len(differ) / total:.2f}%), first "
                     f"at {_point_text(point)}: the file "
                     f"{method_text.method_text(t.collective, Method(*got))} "
                     f"({method_text.method_ids(Method(*got))}), the tree "
                     f"{method_text.method_text(t.collective, want)} "
                     f"({method_text.method_ids(want)})")
        lines.append(line)
    held = getattr(rules, "collectives", {})
    untreed = [f"{COLLECTIVE_NAMES[i]} (id {i})" for i in sorted(held)
               if COLLECTIVE_NAMES.get(i) not in name_of]
    if untreed:
        lines.append(f"{path}: no --tree for {', '.join(untreed)}, which the file holds")
    return lines


def run_check(args):
    version = parse_version(args.ompi_version)
    evaluate = bool(args.query or args.points)
    if evaluate:    # the flags and every point checked before the file is read
        coll_id = _collective_id(args.collective)
        points = _points(args)
    if args.table or args.z:
        collective, table_id, dmap = _scored_table(args)
    if args.tree:
        loaded = [treefile.load(t) for t in args.tree]
        names = {t.collective: n for t, n in zip(loaded, args.tree)}
        trees = ompi_rules.check_trees(loaded, "ompi-rules", args.tree)
    rules = load_any(args.file, version)
    for line, message in rules.errors:
        print(printable(f"{args.file}:{line}: {message}"), file=sys.stderr)
    if args.table and not rules.errors:
        print("\n".join(table_report(args.file, collective, table_id, rules, dmap, args.table)))
    if evaluate:
        out = []
        name = COLLECTIVE_NAMES[coll_id]
        for p, m in points:
            method = Method(*rules.decide(coll_id, p, m)[:3])
            size = rule_size_of(coll_id, p, m)
            at = f" (rule size {size})" if size != m else ""
            out.append(f"{method.algorithm} {method.segsize} {method.faninout}" if args.ids
                       else f"P={p} m={m}{at}: {method_text.method_text(name, method)} "
                       f"({method_text.method_ids(method)})")
        sys.stdout.write("\n".join(out) + ("\n" if out else ""))
    elif isinstance(rules, JsonRulesFile) and not args.table:
        print(f"{args.file}: valid JSON rules file (Open MPI 6 / main; 4.1 and 5.0 read only "
              f"classic files): {rules.summary()}")
    elif not rules.errors and not args.table:
        print(f"{args.file}: valid for Open MPI {'.'.join(map(str, version))} "
              f"(format version {rules.version}): {summary(rules)}")
    if args.tree:
        print("\n".join(printable(line) for line in tree_report(args.file, rules, trees, names)))
    return 2 if rules.errors else 0
