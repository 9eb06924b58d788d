"""Build one collective's tree from its tables (read by sources/tables.py) and write `collsel
build`'s files: tree.json, stats.json and the C files. `collsel build` calls build(), `collsel
tune` calls build_recommended() for every collective, so what tune writes is what build writes."""
from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Sequence
from dataclasses import dataclass, replace

from collsel.core.evaluate import baseline_warning, build_config, out_of_sample
from collsel.core.io import values
from collsel.core.maps import decision_map, third_axis
from collsel.core.mpi import method_text
from collsel.core.trees import penalty, tree, treefile
from collsel.core.evaluate.recommend import (build_command, chosen_options, fold_builder,
                                             nested_builders)
from collsel.core.io.files import write_directory
from collsel.sinks.emit import c_ladder as emit_c, ompi_dec_fixed, targets
from collsel.sources import launch_tables, tables as given_tables


@dataclass(frozen=True)
class BuildResult:
    """What build() wrote to `out`, and what `collsel build` prints of it."""
    out: str
    dmap: decision_map.DecisionMap
    tree: tree.TreeArrays
    stats: dict                 # stats.json
    beyond: str                 # "defer" or "keep" beyond the largest measured P
    no_c: str | None = None     # why the C files are left out, or None when written
    recommend: bool = False
    beyond_given: bool = False  # --beyond was given (else the edge folds decided)
    z: str | None = None        # the third axis


def build(tables: Sequence[str], *, out: str, collective: str | None = None,
          options: tree.BuildOptions | None = None,
          settings: decision_map.MapSettings = decision_map.MapSettings(),
          recommend: bool = False, criterion: str = "combined", beyond: str | None = None,
          prefix: str | None = None, launches: str | None = None) -> BuildResult:
    """Build the tree of `collective` in `tables` and write DIR/tree.json, stats.json and the C
    files (`collsel build`'s outputs) into `out`. `options`: the tree's limits (with
    `recommend`, where cross-validation starts); `launches`: the sweep's journal (default: the
    one beside a single table); `beyond`: "defer", "keep" or None (--recommend's edge folds
    decide). `prefix` is checked by the caller, before any table is read."""
    options = options or tree.BuildOptions().check()
    values.output_directory(out)
    loaded = given_tables.load(tables, collective=collective, settings=settings)
    measured, dmap, collective = loaded.table, loaded.dmap, loaded.collective
    journal, launch_runs = launch_tables.load(tables, collective, launches, settings.z)
    folds = out_of_sample.all_folds(measured, launch_runs, settings, dmap=dmap)
    config = build_config.Config(out, options, settings, recommend, criterion, beyond)
    if recommend:
        # only here: multiprocessing costs a build ~10 ms
        from collsel.core.evaluate import parallel
    with (parallel.pool() if recommend else contextlib.nullcontext()) as workers:
        built = build_config.build(measured, config, dmap, launch_runs, workers)
    t, tree_map = built.tree, built.dmap     # an interpolated candidate's tree: its own map
    rebuild = fold_builder(dmap, options, built.figures)
    extra = {}
    if built.figures is not None:       # --recommend
        extra["recommendation"] = replace(built.figures, command=build_command(
            tables, collective, chosen_options(options, built.figures), settings,
            journal if launches else None, out, criterion, beyond)).to_json()
    extra["out_of_sample"] = {**out_of_sample.tree_figures(
        folds, rebuild, nested_builders(built.figures)),
                              "launch_journal": journal}
    extra["leaf_methods"] = leaf_methods(tree_map, t)
    extra["warnings"] = baseline_warning.worse_than_baselines(extra["out_of_sample"], dmap.family)
    if settings.z:
        extra["third_axis"] = third_axis_block(measured, dmap, launch_runs, settings, options)
    files, stats, no_c = render_files(tree_map, t, built.options, prefix, extra,
                                      treefile.beyond_of(tree_map, built.beyond))
    write_directory(out, files)
    if no_c:
        for stale in ("decision.c", "decision.h", f"ompi_{dmap.collective}_intra_dec_fixed.c"):
            with contextlib.suppress(FileNotFoundError):   # an earlier build's C would disagree
                os.remove(os.path.join(out, stale))
    return BuildResult(out, tree_map, t, stats, built.beyond, no_c, recommend, beyond is not None,
                       settings.z)


def build_recommended(table_path: str, *, collective: str, out: str,
                      defer: bool = True) -> BuildResult:
    """The recommended tree of one sweep's table (its journal beside it), as `collsel build
    TABLE --collective C --recommend --out DIR` writes it (`defer` False: with --no-defer):
    what `collsel tune` deploys."""
    return build([table_path], out=out, collective=collective, recommend=True,
                 settings=decision_map.MapSettings(defer=defer))


def render_files(dmap, t, options, prefix=None, extra_stats=None,
                 beyond=None) -> tuple[dict[str, str], dict, str | None]:
    """Every output of `collsel build` for tree `t` (`beyond`: a treefile.Beyond or None),
    rendered in memory, and why the C files are left out (a hierarchical leaf, which C cannot
    run) or None."""
    stats = {**penalty.tree_stats(dmap, t), **(extra_stats or {})}
    document = treefile.tree_document(dmap, t, options, beyond)
    loaded = treefile.LoadedTree(document, "tree.json", schema=False)   # made just now
    files = {"tree.json": treefile.dumps(document),
             "stats.json": json.dumps(stats, indent=1, sort_keys=True, allow_nan=False) + "\n"}
    no_c = targets.hierarchical_leaf_error("c", "tree.json", loaded)
    if no_c:
        return files, stats, no_c
    files.update(emit_c.emit_decision(loaded, prefix))
    if dmap.collective in ompi_dec_fixed.SPECS and len(dmap.axes) == 2 \
            and dmap.family == "openmpi":          # Open MPI's file: coll/tuned ids only
        files.update(ompi_dec_fixed.emit(loaded))
    return files, stats, None


def leaf_methods(dmap, t) -> list:
    """stats.json's `leaf_methods`: every method the tree's leaves hold, with its ids, its name
    (core.mpi.method_text) and how many leaves hold it."""
    return [{"algorithm": m.algorithm, "segsize": m.segsize, "faninout": m.faninout,
             "name": method_text.method_text(dmap.collective, m, dmap.family), "leaves": n}
            for m, n in method_text.leaf_method_counts(t, dmap.methods)]


def third_axis_block(measured, dmap, launch_runs, settings, options) -> dict:
    """stats.json's `third_axis`: the (P, m) cells whose decision changes with z, and the
    z-oblivious tree (built with the same limits from the same runs, z pooled) out of sample on
    the same folds as the tree."""
    pooled = out_of_sample.all_folds(measured, launch_runs, settings, pool=True)
    return {**third_axis.changes(dmap),
            "oblivious_out_of_sample": out_of_sample.tree_figures(
                pooled, lambda m: tree.build_tree(m, options))}
