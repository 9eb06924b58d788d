"""collsel tune's summary: per collective what was measured (the sweep's table), what is still
undecided (the sweep's own rule, sources/sweep/refine.undecided_in_table; '-' for a per-method
sweep, which has no tie test), what the recommended tree decides (its methods by name, or
"defer: Open MPI's default") and its headline figure beside the MPI's default's
(core.evaluate.headline: the one definition build, the report and `make demo` print too), then the
lines that deploy the result (sinks.emit.deploy)."""
import json
import os

from collsel.core.evaluate import headline
from collsel.core.io import csvfile
from collsel.core.mpi import method_text
from collsel.sinks.emit import deploy
from collsel.sources.sweep import refine
from collsel.pipeline.tune import layout
from collsel.pipeline.tune.plan import TunePlan

# methods named per collective in the summary (the rest counted; stats.json lists them all)
METHODS_SHOWN = 4


def table(out: str, plan: TunePlan) -> str:
    """The summary as text: the table, the methods each tree decides, what the figures are,
    and how to deploy."""
    family = plan.mpi
    default = method_text.default_name(family)
    rows = [f"{'collective':<22} {'methods':>7} {'cells':>6} {'undecided':>9} {'leaves':>6} "
            f"{'this tree':>9} {default:>{max(len(default), 9)}}  figures"]
    chosen, bases, deferring = [], {}, []
    for grid in plan.grids:
        c = grid.collective
        cells, undecided = _measured(layout.table(out, c), grid.mode)
        stats = _stats(layout.stats_json(out, c))
        figure = headline.of_stats(stats)
        bases.setdefault(figure.basis(), []).append(c)
        rows.append(f"{c:<22} {grid.methods:>7} {cells:>6} {undecided:>9} "
                    f"{stats['leaves']:>6} {headline.percent(figure.tree):>9} "
                    f"{headline.percent(figure.default):>{max(len(default), 9)}}  "
                    f"{figure.short_basis()}")
        chosen.append(f"  {c}: " + method_text.chosen_text(
            c, method_text.stats_counts(stats["leaf_methods"]), family, METHODS_SHOWN))
        if figure.defers:
            deferring.append(c)
    notes = [f"figures: mean penalty against the fastest forced method, {default}'s on the "
             "same cells; a tree that defers everywhere is the default once deployed, so it "
             "is scored as the default"]
    notes += [f"  {basis}: {', '.join(names)}" for basis, names in bases.items()]
    return "\n".join(rows + notes + ["chosen methods:"] + chosen
                     + deploy_lines(out, plan, deferring)) + "\n"


def deploy_lines(out: str, plan: TunePlan, deferring: list[str]) -> list[str]:
    """How to run a program with the tune's result: the MPI's own file (Open MPI's rules file,
    MPICH's selection file, Intel MPI's tuning file) and libcollsel with the blob directory
    (not Intel's), absolute paths; nothing to deploy when every tree defers."""
    family = plan.mpi
    tuned = [c for c in plan.collectives if c not in deferring]
    if not tuned:
        return [f"deploy: nothing to deploy: every tree defers to "
                f"{method_text.default_name(family)} (running without collsel is the same)"]
    lines = [f"deploy ({', '.join(tuned)}"
             + (f"; {', '.join(deferring)} defer{'s' if len(deferring) == 1 else ''} to "
                f"{method_text.default_name(family)}"
                if deferring else "") + "):"]
    home = os.path.abspath(out)
    for name, target in ((layout.RULES, "ompi-rules"), (layout.MPICH, "mpich-json"),
                         (layout.INTEL, "intel-json")):
        if os.path.exists(os.path.join(home, name)):
            lines.append(f"  {deploy.deploy_line(target, os.path.join(home, name), family)} "
                         "./app")
    if layout.has_blobs(family) and os.path.isdir(layout.blobs(home)):
        lines.append(f"  or with libcollsel: "
                     f"{deploy.deploy_line('blob', layout.blobs(home), family)} ./app")
    return lines


def _stats(path):
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def _measured(path, mode):
    """(cells in the table, its undecided cells or '-' when measured per method). A cell is a
    (P, m) pair, or a (nodes, ppn, m) triple when the table has shapes, as the sweep counts
    undecided ones (so both columns count the same thing)."""
    doc = csvfile.read(path, "a sweep table")
    keys = [k for k in ("comm_size", "nodes", "ppn", "msg_size") if k in doc.header]
    at = [doc.header.index(k) for k in keys]
    cells = {tuple(fields[i] for i in at) for _, fields in doc.rows}
    if mode != "paired":
        return len(cells), "-"
    return len(cells), sum(map(len, refine.undecided_in_table(path).values()))
