"""Predicted bcast times of a parameter set: per method over message sizes, the model's choice
per cell, and the canonical performance table `collsel model predict` writes."""
import math
from pathlib import Path

import numpy as np

from collsel import __version__
from collsel.core.io import statistic, values
from collsel.core.maps.table import render_table
from collsel.errors import InputError
from collsel.research.models import bcast

MODELS = ("tlop", "hockney")
PRESET_DIR = "generator/collsel/research/models/presets"   # as the repository spells it
STATISTIC_DETAIL = "time_us = model prediction (µs)"
# the collectives with tau-Lop models (research/models/bcast.py; reduce's Hockney models serve
# collsel hier only)
TAU_LOP_COLLECTIVES = ("bcast",)


def predict_times(par, P, msg_sizes, model="tlop", platform=None):
    """{(alg, seg): array of predicted µs over msg_sizes} for the bcast methods of `par`."""
    platform = platform or par.platform
    out = {}
    for (coll, alg, seg), theta in sorted(par.methods.items()):
        if coll not in TAU_LOP_COLLECTIVES:
            continue
        if model == "tlop":
            A = np.array([bcast.tlop_coefficients(alg, P, m, seg, platform) for m in msg_sizes])
            out[(alg, seg)] = A @ np.array(theta)
        else:
            h = par.hockney
            A = np.array([bcast.hockney_coefficients(alg, P, m, seg, platform.chain_fanout,
                                                      platform.knomial_radix)
                          for m in msg_sizes])
            out[(alg, seg)] = A @ np.array([h["alpha"], h["beta"]])
    return out


def model_choices(par, cells, model):
    """{cell: the method with the smallest predicted time} over the measured cells: (P, m) at
    the parameters' own mapping, or (P, m, ppn) at ppn ranks per node (rank r on node
    r // ppn), so each message of the algorithm takes the channel its placement gives it."""
    groups = {}
    for cell in cells:
        groups.setdefault((cell[0], cell[2] if len(cell) == 3 else None), set()).add(cell[1])
    choice = {}
    for (P, ppn), sizes in sorted(groups.items(), key=lambda g: (g[0][0], g[0][1] or 0)):
        msg_sizes = sorted(sizes)
        pred = predict_times(par, P, msg_sizes, model, par.platform.mapped(ppn))
        for i, m in enumerate(msg_sizes):
            choice[(P, m) if ppn is None else (P, m, ppn)] = min(
                pred, key=lambda k: (pred[k][i], k))
    return choice


# Bounds of one prediction, checked before any work (`grid_check`), from what it costs here:
# a row ~0.17 ms and ~50 bytes of output text, plus ~0.1 µs per rank of P (each row walks arrays
# of P ranks: at P = 2^20 a row takes ~0.15 s and ~200 MB).
MAX_ROWS = 250_000                   # default of --max-rows: ~45 s and ~30 MB at small P
MAX_ROWS_RANGE = (1, 100_000_000)
RANKS_PER_ROW = 2048                 # the ranks walked may be --max-rows x this (~50 s more)
MAX_COMM_SIZE = 2**20                # default of --max-comm-size: the memory of one row
COLUMNS = ("collective", "comm_size", "msg_size", "algorithm", "segsize", "faninout", "time_us")


def bcast_methods(par):
    return sorted((alg, seg) for coll, alg, seg in par.methods if coll == "bcast")


def grid_check(par, comm_ranges, n_msg_sizes, max_rows=MAX_ROWS, max_comm_size=MAX_COMM_SIZE):
    """Refuse a grid over the limits, in one line naming the limit and the flag raising it.
    `comm_ranges`: the P values as sorted (low, high) ranges (core.io.sizes.comm_size_ranges), so
    the grid need not be built first. Returns the number of rows."""
    methods = len(bcast_methods(par))
    n_comm = sum(hi - lo + 1 for lo, hi in comm_ranges)
    per_p = n_msg_sizes * methods
    rows = n_comm * per_p
    if rows > max_rows:
        raise InputError(f"{n_comm} P x {n_msg_sizes} message sizes x {methods} methods = "
                         f"{rows} rows, more than --max-rows {max_rows} (a row takes ~0.2 ms, "
                         "more at large P): ask for fewer P or sizes, or raise --max-rows")
    largest = comm_ranges[-1][1]
    if largest > max_comm_size:
        raise InputError(f"--comm-sizes: P {largest} is above --max-comm-size {max_comm_size} "
                         "(a row at P walks arrays of P ranks: ~0.15 s and ~200 MB at "
                         "P = 2^20, growing with P); raise --max-comm-size to go further")
    ranks = sum((lo + hi) * (hi - lo + 1) // 2 for lo, hi in comm_ranges) * per_p
    if ranks > max_rows * RANKS_PER_ROW:
        raise InputError(f"the {rows} rows walk {ranks} ranks in all (the sum of P over the "
                         f"rows), more than --max-rows x {RANKS_PER_ROW} = "
                         f"{max_rows * RANKS_PER_ROW} (~0.1 µs a rank): ask for fewer or "
                         "smaller P, or raise --max-rows")
    return rows


def _platform(par, ranks_per_node):
    return par.platform.mapped(ranks_per_node)


def predict_rows(par, comm_sizes, msg_sizes, model="tlop", ranks_per_node=None):
    """Yields, for each P in order, the predicted table rows of P (sorted by message size,
    algorithm, segment size). A prediction no table can hold (not finite, beyond a day) is an
    InputError naming the cell."""
    if model == "hockney" and not par.hockney:
        raise InputError(f"{par.path}: no \"hockney\" parameters for --model hockney")
    platform = _platform(par, ranks_per_node)
    for P in comm_sizes:
        times = predict_times(par, P, msg_sizes, model, platform)
        rows = []
        for i, m in enumerate(msg_sizes):
            for (alg, seg) in sorted(times):
                t = float(times[(alg, seg)][i])
                if not (math.isfinite(t) and t <= values.MAX_TIME_US):
                    raise InputError(f"{par.path}: the model predicts {t:g} µs for P={P}, "
                                     f"m={m}, algorithm {alg} segsize {seg}: beyond the "
                                     f"{values.MAX_TIME_US:g} µs (a day) a table may hold; "
                                     "ask for smaller P or m")
                rows.append({"collective": "bcast", "comm_size": P, "msg_size": m,
                             "algorithm": alg, "segsize": seg, "faninout": 0,
                             "time_us": float(f"{max(t, 1e-9):.6g}")})
        # bcast caches every tree it builds (per kind, P, ranks per node) and never lets go;
        # over thousands of P that is hundreds of MB, so keep only the trees of the current P.
        # (A bounded cache in bcast.tree_nbfts would make this unnecessary.)
        bcast._tree_cache.clear()
        yield P, rows


def table_metadata(par, model="tlop", ranks_per_node=None, preset=False, comm_sizes_text="",
                   msg_sizes_text=""):
    """The metadata of a predicted table. `preset`: `par` is a shipped preset (recorded by its
    repository path); the *_text are the sizes as asked for."""
    platform = _platform(par, ranks_per_node)
    return {"source": f"collsel model predict ({'tau-Lop' if model == 'tlop' else 'Hockney'}"
                      " analytical model; predicted, not measured)",
            "collsel_version": __version__, "collective": "bcast", "predicted": "yes",
            "model": model, "params": par.name,
            "params_file": f"{PRESET_DIR}/{Path(par.path).name} (preset)" if preset else par.path,
            "params_source": par.doc.get("source", ""),
            "ranks_per_node": platform.ppn or "all (one node)",
            "chain_fanout": platform.chain_fanout, "knomial_radix": platform.knomial_radix,
            "statistic": statistic.MODEL,
            "statistic_detail": STATISTIC_DETAIL,
            "comm_sizes": comm_sizes_text, "msg_sizes": msg_sizes_text}


def predict_table(par, comm_sizes, msg_sizes, model="tlop", ranks_per_node=None,
                  preset=False, comm_sizes_text="", msg_sizes_text=""):
    """(rows, metadata) of the predicted bcast table over comm_sizes x msg_sizes."""
    rows = [r for _, chunk in predict_rows(par, comm_sizes, msg_sizes, model, ranks_per_node)
            for r in chunk]
    return rows, table_metadata(par, model, ranks_per_node, preset, comm_sizes_text,
                                msg_sizes_text)


def predict_csv(par, comm_sizes, msg_sizes, model="tlop", ranks_per_node=None, preset=False,
                comm_sizes_text="", msg_sizes_text="", progress=None):
    """(CSV text, number of rows) of the predicted table, rendered P by P so only the text is
    kept (~50 bytes a row), not a dict per row. `progress(done P, rows so far)` is called after
    each P."""
    meta = table_metadata(par, model, ranks_per_node, preset, comm_sizes_text, msg_sizes_text)
    parts = [render_table([], meta, columns=list(COLUMNS))]
    count = 0
    for i, (_, rows) in enumerate(predict_rows(par, comm_sizes, msg_sizes, model,
                                               ranks_per_node), 1):
        parts.append(render_table(rows, {}, columns=list(COLUMNS)).split("\n", 1)[1])
        count += len(rows)
        if progress:
            progress(i, count)
    return "".join(parts), count
