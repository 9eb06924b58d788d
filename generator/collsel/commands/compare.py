"""`collsel compare`: do one sweep's decisions hold on another sweep of the same grid?"""
import json
import sys
from dataclasses import replace

import numpy as np

from collsel.commands.options import add_table_options, map_settings, read_tables, select_each
from collsel.core.evaluate import deployed, out_of_sample
from collsel.core.maps import third_axis
from collsel.core.trees import penalty, tree, treefile
from collsel.core.mpi.method_text import default_name
from collsel.errors import InputError
from collsel.commands import add_command


def register(sub):
    p = add_command(
        sub, "compare",
        description="The exact map of table A (its fastest method per cell) used on table B: "
        "penalty against B's best per cell (mean, median, max over the cells both "
        "measure), how many of A's choices are in B's tie set (the methods B cannot "
        "tell from its best: its tied or ci_halfwidth_us columns, --tolerance), and "
        "the MPI's default on the same cells of B; then the same from B to A. Two "
        "sweeps of one grid made one after the other show how much of a decision is "
        "measurement noise. Tables: A B (exactly two); with --tree, FRESH tables "
        "(one or more) a deployed tree is scored on.")
    add_table_options(p)
    p.add_argument("--format", choices=("text", "json"), default="text")
    p.add_argument("--fresh", action="store_true",
                   help="A FRESH [FRESH ...]: score on fresh runs, pooled over every FRESH table "
                        "(e.g. one-launch sweeps at load levels drawn at random), the exact tree "
                        "of A with its third axis (--z, e.g. probe_us: asked at each fresh "
                        "cell's own value), the z-oblivious tree of A (the same runs with z "
                        "pooled, core.maps.third_axis.pooled) and the MPI's default: penalty mean, "
                        "median, max of each (core.trees.penalty)")
    p.add_argument("--probe-cost-us", type=float, metavar="US",
                   help="with --fresh: what one probe costs (e.g. the median the example "
                        "program mpi_probe_query measures); adds the time the z-aware tree "
                        "saves per call against the z-oblivious one (mean over the fresh cells "
                        "both score, in µs, from the fresh tables' own times) and the number "
                        "of calls one probe must decide to pay for itself (cost / saving; "
                        "never when nothing is saved)")
    p.add_argument("--tree", metavar="TREE.json",
                   help="FRESH [FRESH ...]: score this deployed tree (collsel build's tree.json) "
                        "on fresh runs instead: its decision in each measured cell of the FRESH "
                        "tables (asked by value as collsel query asks it: its cuts, its "
                        "`beyond`; defer = the fresh algorithm-0 time) against the cell's best "
                        "measured method, pooled over the tables: penalty mean, median, max "
                        "and cells, beside the MPI's default on the same cells")
    p.add_argument("--peer", action="append", default=[], metavar="NAME=TABLE",
                   help="with --tree, repeatable: another selection scored on the same cells, "
                        "a table whose algorithm-0 rows are that selection's times on the "
                        "fresh grid (e.g. a sweep of algorithm 0 under Intel MPI's tuning "
                        "file); scored against the FRESH tables' best, so it can be negative")
    p.set_defaults(run=run_compare)


def compare(table_a, table_b, settings):
    """{"A->B": figures, "B->A": figures} (core.evaluate.out_of_sample.cross_table)."""
    maps = {"A": settings.build(table_a), "B": settings.build(table_b)}
    out = {}
    for src, dst in (("A", "B"), ("B", "A")):
        fold = out_of_sample.Fold(f"{src}->{dst}", maps[src], maps[dst])
        out[fold.name] = out_of_sample.cross_table(fold, tree.build_tree(maps[src]))
    return out


def fresh(train, tests, settings):
    """{"z_aware", "z_oblivious", "default"}: penalty figures pooled over the measured cells of
    every test table (each mapped on its own, so each fresh cell keeps its own z value)."""
    aware = settings.build(train)
    oblivious = replace(settings, z=None).build(third_axis.pooled(train, settings.z))
    trees = {"z_aware": (aware, tree.build_tree(aware)),
             "z_oblivious": (oblivious, tree.build_tree(oblivious))}
    chosen = {name: [] for name in trees}
    best, default = [], []
    for test in tests:
        test_map = settings.build(test)
        for name, (train_map, t) in trees.items():
            times, b, d, _ = out_of_sample.fold_times(
                out_of_sample.Fold(name, train_map, test_map), [t])
            chosen[name].append(times[0])
        best.append(b)
        default.append(d)
    best = np.concatenate(best)
    chosen = {name: np.concatenate(c) for name, c in chosen.items()}
    out = {name: penalty.score(c, best) for name, c in chosen.items()}
    out["default"] = penalty.score(np.concatenate(default), best)
    out = {k: {f: v[f] for f in ("cells", "mean", "median", "max")} for k, v in out.items()}
    out["saving"] = saving(chosen["z_oblivious"], chosen["z_aware"])
    return out


def saving(oblivious_us, aware_us):
    """{"cells", "saved_us"}: the mean time per call the z-aware tree's choices save against
    the z-oblivious tree's on the fresh cells both score (its penalty difference times the
    cells' best time, from the fresh runs' own times; negative when it loses)."""
    both = np.isfinite(oblivious_us) & np.isfinite(aware_us)
    diff = oblivious_us[both] - aware_us[both]
    return {"cells": int(both.sum()), "saved_us": float(diff.mean()) if diff.size else None}


def payback(saved_us, probe_cost_us):
    """Calls one probe must decide to pay for itself: cost / saving per call; None (never)
    when the probe saves nothing."""
    if saved_us is None or saved_us <= 0:
        return None
    return probe_cost_us / saved_us


def run_fresh(args):
    if not args.z:
        raise InputError("--fresh scores a tree with a third axis: give --z (e.g. probe_us)")
    if len(args.tables) < 2:
        raise InputError("--fresh takes the build table A and at least one fresh table")
    cost = args.probe_cost_us
    if cost is not None and not (np.isfinite(cost) and cost >= 0):
        raise InputError(f"--probe-cost-us {cost:g} is not a time in µs >= 0")
    train, *tests = select_each(args)
    result = fresh(train, tests, map_settings(args))
    if cost is not None:
        result["saving"].update(probe_cost_us=cost,
                                payback_calls=payback(result["saving"]["saved_us"], cost))
    if args.format == "json":
        sys.stdout.write(json.dumps({"tables": list(args.tables), **result}, indent=1,
                                    allow_nan=False) + "\n")
        return 0
    sys.stdout.write(f"trees of {args.tables[0]} scored on {len(tests)} fresh table(s):\n")
    names = {"z_aware": f"{args.z}-aware octree", "z_oblivious": f"{args.z}-oblivious quadtree "
             "(same runs, z pooled)", "default": default_name(train.family)}
    for key, label in names.items():
        sys.stdout.write(_line(label, result[key]) + "\n")
    s = result["saving"]
    if s["saved_us"] is None:
        sys.stdout.write("  time saved per call: no fresh cell scored by both trees\n")
        return 0
    sys.stdout.write(f"  time saved per call by the {args.z}-aware octree against the oblivious "
                     f"quadtree: {s['saved_us']:.2f} µs (mean over {s['cells']} fresh cells)\n")
    if cost is not None:
        if s["payback_calls"] is None:
            sys.stdout.write(f"  a probe costing {cost:.2f} µs never pays for itself: the "
                             f"{args.z}-aware octree saves nothing on these runs\n")
        else:
            sys.stdout.write(f"  a probe costing {cost:.2f} µs pays for itself after "
                             f"{s['payback_calls']:.1f} calls it decides (worth taking when one "
                             "probe decides at least that many calls)\n")
    return 0


def _line(name, f):
    if f["mean"] is None:
        return f"  {name}: no cell scored"
    return (f"  {name}: penalty mean {f['mean']:.2f}%, median {f['median']:.2f}%, max "
            f"{f['max']:.2f}% on {f['cells']} cells")


def _peers(args):
    """{NAME: algorithm-0 rows} of the --peer NAME=TABLE options, each checked."""
    out = {}
    for text in args.peer:
        name, sep, path = text.partition("=")
        if not sep or not name or not path:
            raise InputError(f"--peer {text}: give NAME=TABLE (e.g. "
                             "mpitune=allreduce-intel-autotuned-fresh.csv)")
        if name in out:
            raise InputError(f"--peer {text}: the name {name} is given twice")
        out[name] = deployed.baseline_rows(read_tables([path]), args.collective, path)
    return out


def run_tree(args):
    if args.fresh or args.probe_cost_us is not None:
        raise InputError("--tree scores a deployed tree; --fresh and --probe-cost-us score the "
                         "trees compare builds itself: give one or the other")
    loaded = treefile.load(args.tree)
    tests = select_each(args)
    for test in tests:
        deployed.check_tree_fits(loaded, args.tree, test)
    peers = _peers(args)
    result = deployed.score_deployed(loaded, args.tree, tests, map_settings(args), peers)
    if args.format == "json":
        sys.stdout.write(json.dumps({"tree": args.tree, "tables": list(args.tables), **result},
                                    indent=1, allow_nan=False) + "\n")
        return 0
    sys.stdout.write(f"{args.tree} ({loaded.collective}) scored on {len(tests)} fresh "
                     "table(s), against each cell's best measured method:\n")
    sys.stdout.write(_line("the tree", result["tree"]) + "\n")
    if result["tree"]["unscored_choices"]:
        sys.stdout.write(f"  ({result['tree']['unscored_choices']} cell(s) unscored: the "
                         "tree's method was not measured there)\n")
    sys.stdout.write(_line(default_name(loaded.family), result["default"]) + "\n")
    for name, figures in result["peers"].items():
        sys.stdout.write(_line(f"peer {name}", figures) + "\n")
    return 0


def run_compare(args):
    if args.tree is not None:
        return run_tree(args)
    if args.peer:
        raise InputError("--peer needs --tree (a peer is scored beside a deployed tree)")
    if args.fresh:
        return run_fresh(args)
    if args.probe_cost_us is not None:
        raise InputError("--probe-cost-us needs --fresh (it weighs the probe against the time "
                         "the z-aware tree saves on fresh runs)")
    if len(args.tables) != 2:
        raise InputError(f"compare takes exactly two tables (A B), got {len(args.tables)}")
    a, b = select_each(args)
    result = compare(a, b, map_settings(args))
    if args.format == "json":
        sys.stdout.write(json.dumps({"tables": list(args.tables), **result}, indent=1,
                                    allow_nan=False) + "\n")
        return 0
    names = {"A": args.tables[0], "B": args.tables[1]}
    for key, f in result.items():
        src, dst = key.split("->")
        t = f["tree"]
        sys.stdout.write(f"best per cell of {names[src]} used on {names[dst]}:\n")
        sys.stdout.write(_line("exact map", t) + "\n")
        if t["cells"]:
            sys.stdout.write(f"  in {names[dst]}'s tie set: {t['in_tie_set']} of {t['cells']} "
                             f"cells ({100.0 * t['in_tie_set'] / t['cells']:.1f} %)\n")
        sys.stdout.write(_line("exact map on the default's cells", f["tree_on_default_cells"])
                         + "\n")
        sys.stdout.write(_line(default_name(b.family if dst == "B" else a.family),
                               f["default"]) + "\n")
    return 0
