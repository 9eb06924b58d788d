"""Target `intel-json`: Intel MPI's JSON tuning file (I_MPI_TUNING=<file>) of trees of presets.

The file, as Intel MPI 2021.18.1 reads it (traced on this machine, docs/guide/intel-mpi.md):

    {"coll=Bcast": {"ppn=-1": {"comm_size=3": {"comm_id=-1": {
        "msg_size=23170": {"BCAST=1": {}}, "msg_size=-1": {"BCAST=3": {}}}}, ...}}}

- `comm_size=N` and `msg_size=N` are inclusive upper bounds (msg_size in bytes, count x type
  size: bound 1024 runs its preset at 1024 B and the next entry's at 1028 B), written in
  increasing order, a value taking the first entry it does not exceed; -1 is open-ended,
  `ppn=-1` and `comm_id=-1` match anything. So a tree cut c (the smallest value of the cell
  above) is written as the bound c - 1, on both axes, and Intel MPI moves no cut. Unlike
  I_MPI_ADJUST_<COLL> (intel-env), the message ranges of every communicator-size range take
  effect: a tree of any shape on P x m is written.
- A collective left out of the file keeps Intel's own tuned selection (its tuning_*.dat), but no
  leaf spelling brings that back for one range: preset 0 or an empty leaf runs Intel's basic
  selection logic (MPIR_<Coll>_intra_auto), a range left out takes the last entry's preset. So a
  tree that defers everywhere is left out of the file (a note says so), and a tree that defers
  in some cells is refused, naming one (rebuild with --no-defer, or use --target intel-env,
  which writes preset 0 there). Past the measured P (tree.json `beyond`) the last
  communicator-size range stays open-ended, the nearest measured choice (a note says so).
"""
import json

import numpy as np

from collsel.core.mpi import algorithms, intel_algorithms
from collsel.errors import InputError
from collsel.sinks.emit.intel_env import preset_grid, runs
from collsel.sinks.emit.targets import Emitted

OPEN = intel_algorithms.OPEN
TRACED = ("bcast", "allreduce")   # where msg_size = the m axis (count x type size) was traced


def _p_ranges(path, loaded):
    """(the collective's part of the file (intel_algorithms.tuning_document) or None when the
    tree defers everywhere, notes) of one tree."""
    coll, presets, p_cuts, m_cuts = preset_grid(path, loaded, "intel-json")
    deferring = presets == algorithms.BASELINE_ALGORITHM
    if deferring.all():
        return None, [f"{coll}: the tree defers everywhere: left out of the file, so Intel "
                      "MPI's own tuned selection decides"]
    if deferring.any():
        row, col = (int(i[0]) for i in np.nonzero(deferring))
        more = int(deferring.sum()) - 1
        raise InputError(
            f"{path}: this {coll} tree defers to Intel MPI's default at P = "
            f"{loaded.axes[0].values[row]:g}, m = {int(loaded.axes[1].values[col])} B"
            f"{f' (and {more} more cells)' if more else ''}; Intel MPI's JSON tuning file "
            "cannot defer one range (preset 0 runs its basic selection logic, not its tuning), "
            "so --target intel-json cannot carry it (rebuild with --no-defer, or use --target "
            "intel-env, which writes preset 0 there)")
    doc = intel_algorithms.tuning_document(coll, [
        (p_high, [(hi, preset) for _, hi, preset in runs(list(row), m_cuts, OPEN)])
        for _, p_high, row in runs([tuple(r) for r in presets.tolist()], p_cuts, OPEN)])
    notes = []
    if loaded.beyond is not None:
        notes.append(f"{coll}: Intel MPI's JSON tuning file cannot defer past P = "
                     f"{loaded.beyond.above} (tree.json `beyond`): the last communicator-size "
                     "range is open-ended, the choice at the largest measured P")
    if coll not in TRACED:
        notes.append(f"{coll}: msg_size bounds are the tree's m cuts in bytes; that Intel MPI "
                     f"compares the same quantity for {coll} was traced for "
                     f"{' and '.join(TRACED)} only")
    return doc, notes


def emit(trees, options):
    names = options.tree_names or [f"tree {i + 1}" for i in range(len(trees))]
    doc, notes, seen = {}, [], set()
    for path, loaded in zip(names, trees):
        part, more = _p_ranges(path, loaded)
        if loaded.collective in seen:
            raise InputError(f"{path}: a second {loaded.collective} tree (one per collective)")
        seen.add(loaded.collective)
        notes += more
        doc.update(part or {})
    if not doc:
        raise InputError(f"{names[0]}: every tree defers everywhere: there is nothing to "
                         "override (run Intel MPI without I_MPI_TUNING)")
    return Emitted({"intel_tuning.json": json.dumps(doc, indent=2) + "\n"}, notes)
