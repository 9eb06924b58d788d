"""The steps under the commands, as typed functions: build one collective's tree from its tables
(read by sources/tables.py) and write `collsel build`'s files, render trees for an emit target
and write them; and the typed requests of a sweep and a report. `collsel build` and `collsel
emit` call these, and so does `collsel tune` for every collective, so what tune writes is what
the commands write.

The functions take keyword arguments, read and write files, and return records; the commands
parse the flags and print the records. A step's warnings that arise on the way (tables that
measure different statistics) go to stderr as every command prints them.

The sweep and the report are run by their commands (commands/sweep.py, commands/report.py),
which sit above this layer: SweepRequest and ReportRequest are what tune hands them, typed
and with the command line's defaults, instead of an argument list to parse.
"""
from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Sequence
from dataclasses import dataclass, replace

from collsel.core import (baseline_warning, build_config, decision_map, method_text,
                          out_of_sample, penalty, third_axis, tree, treefile, values)
from collsel.core.recommend import (DEFAULT_BUDGET, build_command, chosen_options, fold_builder,
                                    nested_builders)
from collsel.core.files import write_directory, write_file
from collsel.sinks.emit import c_ladder as emit_c, mpich_json, ompi_dec_fixed, ompi_rules, targets
from collsel.sources import launch_tables, tables as given_tables


# --- build -----------------------------------------------------------------------------------

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
        from collsel.core import parallel   # only here: multiprocessing costs a build ~10 ms
    with (parallel.pool() if recommend else contextlib.nullcontext()) as workers:
        built = build_config.build(measured, config, dmap, launch_runs, workers)
    t = built.tree
    rebuild = fold_builder(dmap, options, built.figures)
    extra = {}
    if built.figures is not None:       # --recommend
        extra["recommendation"] = replace(built.figures, command=build_command(
            tables, collective, chosen_options(options, built.figures), settings,
            journal if launches else None, out, criterion, beyond)).to_json()
    extra["out_of_sample"] = {**out_of_sample.tree_figures(
        folds, rebuild, nested_builders(built.figures)),
                              "launch_journal": journal}
    extra["leaf_methods"] = leaf_methods(dmap, t)
    extra["warnings"] = baseline_warning.worse_than_baselines(extra["out_of_sample"], dmap.family)
    if settings.z:
        extra["third_axis"] = third_axis_block(measured, dmap, launch_runs, settings, options)
    files, stats, no_c = render_files(dmap, t, built.options, prefix, extra,
                                      treefile.beyond_of(dmap, built.beyond))
    write_directory(out, files)
    if no_c:
        for stale in ("decision.c", "decision.h", f"ompi_{dmap.collective}_intra_dec_fixed.c"):
            with contextlib.suppress(FileNotFoundError):   # an earlier build's C would disagree
                os.remove(os.path.join(out, stale))
    return BuildResult(out, dmap, t, stats, built.beyond, no_c, recommend, beyond is not None,
                       settings.z)


def build_recommended(table_path: str, *, collective: str, out: str) -> BuildResult:
    """The recommended tree of one sweep's table (its journal beside it), as `collsel build
    TABLE --collective C --recommend --out DIR` writes it: what `collsel tune` deploys."""
    return build([table_path], out=out, collective=collective, recommend=True)


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
    (core.method_text) and how many leaves hold it."""
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


# --- emit ------------------------------------------------------------------------------------

def mpich_base(target: str, path: str | None = None) -> tuple[dict | None, str]:
    """(parsed base, where it came from) for --target mpich-json: the file `path`, else the
    selection compiled into the installed MPICH (collsel.sources.measure.mpich_base); (None,
    "") for the other targets."""
    if target != "mpich-json":
        return None, ""
    if path:
        return mpich_json.load_base(path), path
    from collsel.sources.measure import mpich_base as installed
    text, where = installed.installed_selection()
    return mpich_json.parse_base(text, where), where


def emit_options(target: str, trees: Sequence[str], *, prefix: str | None = None,
                 node_width: int | None = None, array_name: str | None = None,
                 ompi_comm_sizes: str | None = None, ompi_rules_version: int = 1,
                 mpich_base_file: str | None = None, mpich_map: str = "") -> targets.EmitOptions:
    """The typed options of `collsel emit`'s flags (as their text), checked; input files are
    read only for their target. The defaults are the command line's."""
    base, base_name = mpich_base(target, mpich_base_file)
    return targets.EmitOptions(
        prefix=None if prefix is None else values.identifier(prefix, "--prefix"),
        node_width=node_width,
        array_name=None if array_name is None else values.identifier(array_name, "--array-name"),
        ompi_comm_sizes=ompi_rules.parse_comm_sizes(ompi_comm_sizes),
        ompi_rules_version=ompi_rules_version,
        mpich_base=base, mpich_base_name=base_name,
        mpich_map=mpich_json.parse_map(mpich_map, sorted(mpich_json.MPICH_NAMES)),
        tree_names=tuple(trees))


def emit(target: str, trees: Sequence[str], *,
         options: targets.EmitOptions | None = None) -> targets.Emitted:
    """The files of `target` for the tree.json files `trees`, in memory, and the target's notes
    (write_emitted() writes them); `options`: emit_options(), the command line's by default."""
    options = options or emit_options(target, trees)
    return targets.emit(target, [treefile.load(path) for path in trees], options)


def write_emitted(out: str, files: dict) -> None:
    """One file to the file `out`, several into the directory `out`."""
    if len(files) == 1:
        (data,) = files.values()
        values.output_file(out)
        write_file(out, data)
    else:
        values.output_directory(out)
        write_directory(out, files)


# --- what the sweep and the report commands are given ---------------------------------------

@dataclass(frozen=True)
class SweepRequest:
    """One `collsel sweep` of a collective into table `out`. `options` are flags recorded as
    text (a tune's plan keeps them so, and a resumed tune hands them on as they were);
    the rest are typed. The sweep's entry point (commands/sweep.run_sweep) takes its parsed
    flags, so argv() is what its parser is given."""
    collective: str
    out: str
    options: tuple[str, ...] = ()
    launches: int | None = None
    mode: str | None = None
    comm_sizes: tuple[int, ...] = ()
    msg_sizes: tuple[int, ...] = ()     # (0,): the collective has no message size
    algorithms: str | None = None
    strategy: str | None = None
    refine_s: float | None = None       # refine within this many seconds
    resume: bool = False
    dry_run: bool = False

    def argv(self) -> list[str]:
        words = ["sweep", f"--collective={self.collective}", f"--out={self.out}", *self.options]
        words += [] if self.launches is None else [f"--launches={self.launches}"]
        words += [] if self.mode is None else [f"--mode={self.mode}"]
        if self.comm_sizes:
            words.append(f"--comm-sizes={','.join(map(str, self.comm_sizes))}")
        if self.algorithms:
            words.append(f"--algorithms={self.algorithms}")
        if self.strategy:
            words.append(f"--strategy={self.strategy}")
        if self.msg_sizes and tuple(self.msg_sizes) != (0,):
            words.append(f"--msg-sizes={','.join(map(str, self.msg_sizes))}")
        if self.refine_s is not None:
            words.append(f"--refine={self.refine_s:.0f}s")
        return (words + (["--resume"] if self.resume else [])
                + (["--dry-run"] if self.dry_run else []))


@dataclass
class ReportRequest:
    """`collsel report`'s parsed flags, typed, with the command line's defaults
    (tests/unit/test_pipeline.py holds them equal): commands/report.run_report takes it as it takes
    its parsed arguments. Not frozen: the report names the collective once it has found it."""
    tables: list[str]
    out: str
    collective: str | None = None
    z: str | None = None
    tolerance: float | None = None
    defer: bool = True
    depths: int = 6
    thresholds: str = "60,80,90,95"
    budget: float = DEFAULT_BUDGET
    criterion: str = "combined"
    model_tables: list[str] | None = None
    split: str | None = None
    leaf: str | None = None
    launches: str | None = None
    tree_dir: str | None = None
    deployed: list[str] | None = None   # ["TARGET=PATH", ...]
    png: bool = False
    quiet: bool = False
