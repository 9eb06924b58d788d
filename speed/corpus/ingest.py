"""make corpus: the public per-algorithm datasets of ../shared/corpus as canonical tables.

    python speed/corpus/ingest.py [--corpus ../shared/corpus] [--out build/corpus]

Each table is written by one `collsel ingest` command, run in this process through collsel.cli
(the code the command line runs, without a Python start per table). The recipe is RECIPES
below: per table, the files, the flags and what they do about the dataset's traps (the corpus
README lists them). The output directory holds one CSV per dataset x collective x partition or
mapping, COMMANDS.txt (every command, with why each flag is there, and the files left out with
why) and SUMMARY.txt (per table: P and message sizes, methods, cells, missing (method, cell)
pairs, whether Open MPI's default was measured), which is printed too.

Deterministic (files sorted by name, no clock, no host in any output) and all or nothing: the
tables are written into a fresh directory beside --out, which replaces --out only when every
command succeeded. A command that fails stops the run with its one-line error, exit status 2.
docs/guide/ingest-datasets.md explains the flags.
"""
import argparse
import contextlib
import fnmatch
import io
import os
import shlex
import shutil
import sys
import tempfile
from dataclasses import dataclass, field

import numpy as np

from collsel import cli
from collsel.core.maps import table as tables
from collsel.core.mpi import algorithms
from collsel.core.mpi.method_text import size_text

# Every Trieste dataset is OSU's average over the ranks of each rank's mean time (--kind mean)
# with the segment size left at coll/tuned's default, 0 = no segmentation (--segsize 0: none
# of their job scripts set coll_tuned_<coll>_algorithm_segmentsize).
OSU_AVG = ("--kind", "mean", "--segsize", "0")
ONE_PER_FILE = "comm_size=Processes,msg_size=Size,time_us=Latency"


@dataclass
class Recipe:
    table: str          # <dataset>-<collective>[-<partition or mapping>]: build/corpus/<table>.csv
    folder: str         # the dataset's folder in the corpus
    files: str          # glob of its files (sorted by name)
    flags: tuple        # collsel ingest's flags, --out aside
    why: str            # what the flags do about this dataset's traps, for COMMANDS.txt
    exclude: dict = field(default_factory=dict)   # file name: why it is not read


def _trieste(table, folder, files, coll, pattern, why, mapping=ONE_PER_FILE, more=(), **kw):
    """A dataset of one file per algorithm, `Processes,Size,Latency` (µs), ids in the file
    name."""
    return Recipe(table, folder, files, ("--collective", coll, "--pattern", pattern, "--map",
                                         mapping, "--time-unit", "us", *more, *OSU_AVG),
                  why, **kw)


ROBONOFF_BCAST1 = ("run without the dynamic rules that force an algorithm: a second run of Open "
                   "MPI's default, not basic_linear (algorithm 1)")
GABRYNHO = ("--where Type=Broadcast keeps the bcast rows; the rows labelled Reduce are "
            "osu_allreduce timed while a reduce algorithm was forced, so they are neither reduce "
            "nor an allreduce algorithm and are not read (counted as rows_not_selected)")
LUISPKY = ("each row is one OSU iteration (the job's -i 1e4 read as 1) and the whole sweep is "
           "repeated; --duplicates median keeps one point per (P, m, algorithm): the median "
           "of its repetitions, which the ms-long outliers of single iterations do not move")
VALENTINIS = ("one file for three mappings: --where Allocation={a} keeps the ranks mapped "
              "by {a} (one table per mapping)")
ALEMINUTOLO = "one file per algorithm and mapping; the file names' {a} suffix chooses the mapping"

RECIPES = [
    Recipe(f"tanjaderin-{coll}", "tanjaderin_HPC", f"{coll}_*.csv",
           ("--collective", coll, "--map",
            "comm_size=Processes,msg_size=Size,algorithm=Algorithm,time_us=Latency(us)",
            *OSU_AVG),
           "one file per algorithm, the id in the Algorithm column ('default' is Open MPI's "
           "own decision, read as 0)"
           + ("; the 2 B rows are kept as printed although 2 B is below one element of OSU's "
              "reduction type" if coll == "reduce" else ""))
    for coll in ("bcast", "reduce")
] + [
    Recipe(f"valentinisalessio-bcast-{a}", "ValentinisAlessio_HPC_final_project",
           "bcast_complete.csv",
           ("--collective", "bcast", "--where", f"Allocation={a}", "--map",
            "comm_size=Processes,msg_size=MessageSize,algorithm=Algorithm,"
            "time_us=Avg Latency(us)", *OSU_AVG),
           VALENTINIS.format(a=a) + "; algorithm names (default, linear, chain, bin_tree) "
           "are read as Open MPI's")
    for a in ("core", "socket", "node")
] + [
    Recipe(f"valentinisalessio-barrier-{a}", "ValentinisAlessio_HPC_final_project",
           "barrier_complete.csv",
           ("--collective", "barrier", "--where", f"Allocation={a}", "--relabel",
            "ring=double_ring", "--map",
            "comm_size=Processes,algorithm=Algorithm,time_us=Avg Latency(us)", *OSU_AVG),
           VALENTINIS.format(a=a) + "; barrier has no size column (m = 0); --relabel: the "
           "dataset's 'ring' is Open MPI's double_ring (2)")
    for a in ("core", "socket", "node")
] + [
    _trieste("3sara-scatter-thin", "3sara_HPC_Final", "thin_s?_map_by_core.csv", "scatter",
             "thin_s{algorithm}_map_by_core.csv",
             "THIN nodes; one file per algorithm, the id in the file name (s0 = default)"),
    _trieste("3sara-bcast-epyc", "3sara_HPC_Final", "b?_epyc_map_by_core.csv", "bcast",
             "b{algorithm}_epyc_map_by_core.csv",
             "EPYC nodes; one file per algorithm, the id in the file name; no default run"),
] + [
    _trieste(f"aleminutolo-{coll}-{a}", "aleminutolo_HPC_Final_Exam", f"{coll}?_{a}.csv", coll,
             f"{coll}{{algorithm}}_{a}.csv",
             ALEMINUTOLO.format(a=f"_{a}") + "; no default run")
    for coll in ("bcast", "gather") for a in ("core", "socket", "node")
] + [
    _trieste("robonoff-bcast", "robonoff_HPC-project", "bcast?_core_mapping_genoa.csv", "bcast",
             "bcast{algorithm}_core_mapping_genoa.csv",
             "GENOA nodes, Open MPI 5.0.5 (its coll/tuned bcast ids are 4.1's); one file per "
             "algorithm, the id in the file name; bcast1 left out (below)",
             exclude={"bcast1_core_mapping_genoa.csv": ROBONOFF_BCAST1}),
    _trieste("robonoff-scatter", "robonoff_HPC-project", "scatter?_core_mapping.csv",
             "scatter", "scatter{algorithm}_core_mapping.csv",
             "GENOA nodes, Open MPI 5.0.5 (its coll/tuned scatter ids are 4.1's); one file per "
             "algorithm, the id in the file name"),
] + [
    Recipe(f"gabrynho-bcast-{part}", "Gabrynho_HPC_Final", f"{fname}_result.csv",
           ("--collective", "bcast", "--where", "Type=Broadcast", "--map",
            "comm_size=NP,msg_size=Size,algorithm=Algorithm,time_us=Avg_Latency",
            "--time-unit", "us", *OSU_AVG),
           f"{part.upper()} nodes, every algorithm in one file; " + GABRYNHO + "; no default run")
    for part, fname in (("epyc", "epyc_core"), ("thin", "thin"), ("fat", "fat"))
] + [
    Recipe(f"luispky-{coll}-{part}", "luispky_HPC_project", f"{coll}{part.upper()}.csv",
           ("--collective", coll, "--duplicates", "median", "--map",
            "comm_size=Processors," + ("msg_size=Size(bytes)," if coll == "bcast" else "")
            + "algorithm=Algorithm,time_us=Avg_Latency(us)", *OSU_AVG),
           f"{part.upper()} nodes; " + LUISPKY
           + ("; barrier has no size column (m = 0)" if coll == "barrier" else ""))
    for coll in ("bcast", "barrier") for part in ("epyc", "thin")
] + [
    _trieste(f"mmunini99-{coll}", "mmunini99_HighPerformanceComputing-Monitoring-and-"
             "Parallel-Coding", f"{word}_algo?_variable_core.csv", coll,
             f"{word}_algo{{algorithm}}_variable_core.csv",
             f"the files' algo1, algo2, algo3 ran Open MPI's {coll} algorithms "
             f"{relabel.replace(',', ', ')} (--relabel); no default run"
             + ("; --skip-malformed leaves out the one line with an empty Latency (a missing "
                "measurement), with a warning naming it" if skip else ""),
             mapping=ONE_PER_FILE.replace("Processes", "number_processes"),
             more=("--relabel", relabel) + (("--skip-malformed",) if skip else ()))
    for coll, word, relabel, skip in (("bcast", "broadcast", "1=1,2=3,3=5", False),
                                      ("reduce", "reduce", "1=4,2=5,3=7", True))
] + [
    Recipe(f"f1nbar-scatter-{part}",
           "f1nbar_Automatic-Runtime-Selection-of-Optimal-MPI-Collective-Algorithms", files,
           ("--collective", "scatter", "--segsize", "0", "--whitespace", "--columns",
            "P,bytes,algorithm,seconds", "--map",
            "comm_size=P,msg_size=bytes,algorithm=algorithm,time_us=seconds", "--time-unit",
            "s") + (("--skip-malformed",) if part == "sonic" else ()),
           f"UCD {machine}; one file per P, blank-separated lines without a header "
           "(--whitespace, --columns), times in seconds (--time-unit s); a home-made "
           "benchmark, so what the time is over the ranks is not given (no --kind); no default "
           "run" + ("; the files are sonic_long_P and sonig_long_12 (sic); --skip-malformed "
                    "leaves out the stray host-name line of sonig_long_12, with a warning "
                    "naming it" if part == "sonic" else ""))
    for part, files, machine in (("sonic", "son[ic]*_long_*", "Sonic, Open MPI 4.1"),
                                 ("csi", "csi_long_*", "CSI, Open MPI 2.1 (scatter ids 1 and 2 "
                                                        "as in 4.1)"))
]


class RecipeError(Exception):
    """The corpus is not what the recipe expects (a folder or file gone, an ingest failed)."""


def inputs(corpus, recipe):
    """The recipe's files (paths as given under `corpus`, sorted) and the ones it leaves out."""
    folder = os.path.join(corpus, recipe.folder)
    if not os.path.isdir(folder):
        raise RecipeError(f"{folder}: no such folder (the corpus README lists the datasets)")
    names = sorted(n for n in os.listdir(folder) if fnmatch.fnmatchcase(n, recipe.files))
    missing = sorted(set(recipe.exclude) - set(names))
    if missing:
        raise RecipeError(f"{folder}: {', '.join(missing)} (left out by {recipe.table}) not found")
    kept = [os.path.join(folder, n) for n in names if n not in recipe.exclude]
    if not kept:
        raise RecipeError(f"{folder}: no file matches {recipe.files} ({recipe.table})")
    return kept, [(os.path.join(folder, n), why) for n, why in sorted(recipe.exclude.items())]


def command(files, recipe, out):
    """The `collsel ingest` arguments (without 'collsel')."""
    return ["ingest", *files, *recipe.flags, "--out", out]


def shell(argv, n_files):
    """One command as shell lines: each input file on a line of its own, then the flags."""
    words = [shlex.quote(a) for a in argv]
    lines = ["collsel " + words[0]] + [f"    {w}" for w in words[1:1 + n_files]]
    line = "   "
    for word in words[1 + n_files:]:
        if word.startswith("--") and len(line) > 70:
            lines.append(line)
            line = "   "
        line += f" {word}"
    return " \\\n".join(lines + [line])


def run_ingest(argv):
    """Run one command through collsel.cli. Its 'wrote ...' line is dropped (the summary says
    more); its warnings and its error line go to stderr. A failure raises RecipeError."""
    err = io.StringIO()
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(err):
        status = cli.main(argv)
    sys.stderr.write(err.getvalue())
    if status != 0:
        raise RecipeError(f"collsel {' '.join(argv[:2])} ... failed (status {status})")


# --- the summary ---------------------------------------------------------------------------

def summarize(path):
    """Per table: its collective, P and m values, methods, measured cells, the (method, cell)
    pairs not measured, whether Open MPI's default (algorithm 0) was measured, and the rows
    decisions leave out (core.mpi.fallbacks: where the forced method silently ran another)."""
    t = tables.read_table(path, measured=True)
    comm_sizes, msg_sizes = np.unique(t.comm_size), np.unique(t.msg_size)
    keys = np.stack([t.algorithm, t.segsize, t.faninout], axis=1)
    methods, method = np.unique(keys, axis=0, return_inverse=True)
    cells, cell = np.unique(np.stack([t.comm_size, t.msg_size], axis=1), axis=0,
                            return_inverse=True)
    pairs = len(np.unique(method.reshape(-1) * len(cells) + cell.reshape(-1)))
    return {"collective": "/".join(sorted(set(t.collective.tolist()))),
            "comm_sizes": comm_sizes, "msg_sizes": msg_sizes,
            "methods": [tuple(int(v) for v in m) for m in methods],
            "cells": len(cells), "grid": len(comm_sizes) * len(msg_sizes),
            "missing": len(methods) * len(cells) - pairs,
            "default": bool((t.algorithm == algorithms.BASELINE_ALGORITHM).any()),
            "fallback_rows": len(t) - len(tables.drop_fallbacks(t))}


def method_ids(methods):
    """'0 1 2 3 6' (a segment size or fan-in/out, where forced, after a slash)."""
    return " ".join(f"{a}" + (f"/{s}" if s else "") + (f"/f{f}" if f else "")
                    for a, s, f in methods)


def span(values, text=str):
    low, high = text(int(values[0])), text(int(values[-1]))
    return f"{len(values)}: {low}" + (f"..{high}" if len(values) > 1 else "")


HEADER = ("table", "collective", "P (count: range)", "message sizes (count: range)", "methods",
          "cells (of P x m)", "missing (method, cell)", "default", "fallback rows")


def summary_text(rows):
    """The summary as a fixed-width table, one line per table."""
    lines = [HEADER] + [(name, s["collective"], span(s["comm_sizes"]),
                         span(s["msg_sizes"], size_text), method_ids(s["methods"]),
                         f"{s['cells']} of {s['grid']}", str(s["missing"]),
                         "yes" if s["default"] else "no", str(s["fallback_rows"]))
                        for name, s in rows]
    widths = [max(len(line[i]) for line in lines) for i in range(len(HEADER))]
    return "\n".join("  ".join(v.ljust(w) for v, w in zip(line, widths)).rstrip()
                     for line in lines) + "\n"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--corpus", default=os.path.join("..", "shared", "corpus"),
                    help="the corpus folder (default ../shared/corpus: relative to the "
                    "repository, as CI has it)")
    ap.add_argument("--out", default=os.path.join("build", "corpus"))
    args = ap.parse_args(argv)
    if not os.path.isdir(args.corpus):
        print(f"corpus: error: {args.corpus}: no such folder (the public datasets; make corpus "
              "SHARED=DIR)", file=sys.stderr)
        return 2
    parent = os.path.dirname(os.path.abspath(args.out))
    os.makedirs(parent, exist_ok=True)
    work = tempfile.mkdtemp(prefix=".corpus-", dir=parent)
    try:
        commands, rows = [], []
        for recipe in RECIPES:
            files, left_out = inputs(args.corpus, recipe)
            name = f"{recipe.table}.csv"
            run_ingest(command(files, recipe, os.path.join(work, name)))
            commands.append(f"# {recipe.table}: {recipe.why}")
            commands += [f"# not read: {path}: {why}" for path, why in left_out]
            commands.append(shell(command(files, recipe, os.path.join(args.out, name)),
                                   len(files)))
            commands.append("")
            rows.append((recipe.table, summarize(os.path.join(work, name))))
        text = summary_text(rows)
        with open(os.path.join(work, "COMMANDS.txt"), "w") as f:
            f.write(f"# The collsel ingest commands behind the tables of {args.out} (made by "
                    "speed/corpus/ingest.py, `make corpus`), run from the repository; the "
                    f"corpus is {args.corpus}.\n\n" + "\n".join(commands))
        with open(os.path.join(work, "SUMMARY.txt"), "w") as f:
            f.write(text)
        if os.path.isdir(args.out):
            shutil.rmtree(args.out)
        os.rename(work, args.out)
    except RecipeError as e:
        print(f"corpus: error: {e}", file=sys.stderr)
        return 2
    finally:
        if os.path.isdir(work):
            shutil.rmtree(work)
    sys.stdout.write(text)
    print(f"{len(rows)} tables in {args.out}/ (commands: {args.out}/COMMANDS.txt)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
