"""The anytime curve of a replayed tune (`collsel tune --replay TABLE`): after every checkpoint
of the tune's measuring, the cost spent so far against the penalty of the tree built from what
had been measured by then.

The tune's sweeps ran on the replay backend (sources/sweep/replay.py), so their journal holds
every launch in the order it ran with its simulated wall time. A checkpoint is a prefix of those
launches: the table the sweep would have had then (sources/sweep/refine.table_plan: the complete
cells, their launches combined) is built into a tree with the scoring configuration (default
the tune's own, `--recommend`; the command reads those build flags into it), and scored by
core.evaluate.held_out on the FULL recorded table:
- exact: the tree asked at every cell of the full table (its exact map);
- P, m: `collsel evaluate`'s interior leave-one-P-out / leave-one-m-out folds of the full table,
  the fold's value removed from what was measured (folds at a value the tune never measured
  share one tree: nothing is removed from its training rows).
"""
import contextlib
import os
import tempfile
import threading

import numpy as np

from collsel.core.evaluate import held_out, model_selection, parallel
from collsel.core.maps import table as table_io
from collsel.core.mpi import algorithms
from collsel.core.io.files import write_file
from collsel.sources.sweep import journal, refine
from collsel.pipeline.tune.planning import CHECKPOINTS

CURVE = "curve.csv"
PROTOCOLS = ("P", "m")
COLUMNS = ("collective", "launches", "cost_s", "cost_pct", "cells", "exact_mean", "exact_max",
           "P_mean", "m_mean")


def checkpoints(order, count=CHECKPOINTS):
    """The launch counts to score at: where the cumulative cost of the launches `order`
    ([journal.LaunchLine], as they ran) first reaches each 1/count of the total, and the end."""
    cost = np.cumsum([x.wall_s for x in order])
    if not len(cost):
        return []
    marks = {int(np.searchsorted(cost, cost[-1] * i / count)) + 1 for i in range(1, count + 1)}
    return sorted(min(n, len(order)) for n in marks)


def _table_of(plan, metadata, scratch):
    """The canonical table of a PairedPlan's complete cells (None when it has none)."""
    rows = [row for shape, m in plan.cells() for row in plan.cell_rows(shape, m)]
    if not rows:
        return None
    path = os.path.join(scratch, "checkpoint.csv")
    write_file(path, table_io.render_table(rows, metadata))
    return table_io.read_table(path)


def _penalties(train, test, config, has_default, builds=None):
    """The held-out penalties of the tree `config` builds from `train`, asked at `test`'s cells
    (core.evaluate.held_out.scores; `builds`: its trees of `train` already built), or None
    where nothing could be scored."""
    got = held_out.scores(train, test, [config], has_default, builds=builds)
    return got[0][0] if got else None


def score(part, full, config, workers=None):
    """{exact_mean, exact_max, P_mean, m_mean} of the tree `config` builds from `part`, on the
    full table (module docstring); None where nothing could be scored. The trees (a
    recommendation each, by default) are built by `workers` (core.evaluate.parallel.pool()) when
    given, one build a task; else here, the tree of `part` once and the folds' equal training
    sets once (core.evaluate.model_selection.shared_training)."""
    has_default = bool((full.algorithm == algorithms.BASELINE_ALGORITHM).any())
    tasks = [(None, part, full)]            # (protocol, training part, test cells)
    for protocol in PROTOCOLS:
        column = held_out.COLUMN[protocol]
        held = held_out.held_values(full, protocol)
        mine = set(getattr(part, column).tolist())
        unmeasured = [v for v in held if v not in mine]
        if unmeasured:
            tasks.append((protocol, part, full.take(np.isin(getattr(full, column), unmeasured))))
        tasks += [(protocol, part.take(getattr(part, column) != v),
                   full.take(getattr(full, column) == v)) for v in held if v in mine]
    args = [(train, test, config, has_default) for _, train, test in tasks]
    if workers is not None:
        done = workers.starmap(_penalties, args, chunksize=1)
    else:
        builds = {}             # the tree of `part` itself, scored on the exact and unmeasured
        with model_selection.shared_training():
            done = [_penalties(*a, builds if a[0] is part else None) for a in args]
    exact = held_out.summary(done[0] if done[0] is not None else [])
    out = {"exact_mean": exact["mean"], "exact_max": exact["max"]}
    for protocol in PROTOCOLS:
        penalties = [d for (p, _, _), d in zip(tasks, done) if p == protocol and d is not None]
        out[f"{protocol}_mean"] = held_out.summary(
            np.concatenate(penalties) if penalties else [])["mean"]
    return out


def _checkpoint(part, full, config):
    """(figures, cells) of one checkpoint's table (None: nothing complete yet)."""
    if part is None:
        return dict.fromkeys(COLUMNS[5:]), 0
    return score(part, full, config), len(set(zip(part.comm_size.tolist(),
                                                  part.msg_size.tolist())))


def curve(collective, table_path, full_path, config, full_cost, count=CHECKPOINTS,
          progress=None, meanwhile=None):
    """[row dict (COLUMNS)] of the anytime curve of one collective's replayed sweeps;
    `meanwhile`: a function run in a thread of this process while the workers score (started
    once they are forked: a fork copies a lock another thread holds, held for ever)."""
    full = table_io.read_table(full_path).select(collective)
    order = journal.read_launches(journal.journal_path(table_path))
    metadata = refine.csvfile.read(table_path, "a sweep table").metadata
    points = checkpoints(order, count)
    rows = []
    # a checkpoint a task of two processes (its folds share training sets: score builds them
    # in one process), while this one makes the next checkpoints' tables
    pool = parallel.pool()
    with tempfile.TemporaryDirectory(prefix="collsel-curve-") as scratch, pool as workers, \
            _in_thread(meanwhile):
        plans = refine.table_plans(table_path, points)
        tasks = ((_table_of(plan, metadata, scratch), full, config) for plan in plans)
        done = (workers.imap(_checkpoint_task, tasks) if workers is not None
                else map(_checkpoint_task, tasks))
        for n, (figures, cells) in zip(points, done):
            cost = float(sum(x.wall_s for x in order[:n]))
            rows.append({"collective": collective, "launches": n, "cost_s": cost,
                         "cost_pct": 100 * cost / full_cost, "cells": cells, **figures})
            if progress:
                progress(f"{collective}: curve point {len(rows)}: {n} launches, "
                         f"{cost:.0f} s ({100 * cost / full_cost:.1f} % of the full table)")
    return rows


@contextlib.contextmanager
def _in_thread(work):
    """`work` (None: nothing) run in a thread for the duration of the block, joined at its end."""
    thread = threading.Thread(target=work, daemon=True) if work is not None else None
    if thread is not None:
        thread.start()
    try:
        yield
    finally:
        if thread is not None:
            thread.join()


def _checkpoint_task(args):
    return _checkpoint(*args)


def text(rows):
    """The curve as printed and saved (CSV, figures in percent; empty where not scored)."""
    lines = [",".join(COLUMNS)]
    for r in rows:
        lines.append(",".join(
            str(r[c]) if c in ("collective", "launches", "cells") else
            ("" if r[c] is None else f"{r[c]:.4g}") for c in COLUMNS))
    return "\n".join(lines) + "\n"
