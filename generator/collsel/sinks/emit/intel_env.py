"""Target `intel-env`: Intel MPI's I_MPI_ADJUST_<COLL> settings of trees of Intel presets.

Intel MPI reads `I_MPI_ADJUST_<COLL>="<preset>:<l>-<m>[@<p>-<q>];..."` in MPI_Init (message
sizes in bytes, both bounds inclusive). What Intel MPI 2021.18.1 makes of a list, traced on
this machine (docs/guide/intel-mpi.md):
- message-size ranges alone (`1:0-1023;3:1024-2147483647`) select by message size, first match;
- with `@<p>-<q>` it keeps ONE preset per communicator-size range, the last one written: the
  message-size ranges under it are dropped (`1:0-1023@2-2;3:1024-1048576@2-2` runs 3 at every
  size).
So a tree whose choice depends on the message size only is written as message ranges, one whose
choice depends on P only as `0-MAX@p-q` ranges; a tree whose choice changes with both is refused
(one line naming a P where the message ranges would be lost). The last range of each axis is
open-ended (up to MAX_BYTES / MAX_RANKS), so a size or P beyond the measured grid takes the
choice of the largest one measured; a tree with `beyond` (tree.json) has its last P range end at
`above` (`@p-above`), so a larger P matches no range and Intel MPI decides itself (a tree whose
choice changes with the size cannot be written so, and is refused).

A deferring leaf (algorithm 0) is written as preset 0, which is Intel's basic selection logic,
not its tuning file (a note says where).
"""
import numpy as np

from collsel.core.mpi import algorithms, intel_algorithms
from collsel.errors import InputError
from collsel.sinks.emit import render, text
from collsel.sinks.emit.targets import Emitted

MAX_BYTES = 2**31 - 1     # Intel parses the bounds as C ints
MAX_RANKS = 2**31 - 1


def runs(row, cuts, top):
    """[(low, high, preset)] of a row of presets (or of any comparable items) along an axis:
    equal neighbours merged, each range from its first cell's lower cut to its last cell's upper
    cut - 1, the last open."""
    bounds = [0, *cuts]
    out = []
    for i, preset in enumerate(row):
        if out and out[-1][2] == preset:
            out[-1][1] = i
        else:
            out.append([i, i, preset])
    return [(bounds[a], cuts[b] - 1 if b < len(cuts) else top, p)
            for a, b, p in out]


def preset_grid(path, loaded, target):
    """(collective, presets[P row, m column], P cuts, m cuts) of a comm_size x msg_size tree
    of Intel presets, every id and cut checked for what Intel MPI parses."""
    coll = text.collective(loaded, target)
    if coll not in intel_algorithms.INTEL_ALGORITHMS:
        raise InputError(f"{path}: Intel MPI has no I_MPI_ADJUST_ variable for {coll}")
    names = [a.name for a in loaded.axes]
    if names != ["comm_size", "msg_size"]:
        raise InputError(f"{path}: --target {target} takes a comm_size x msg_size tree "
                         f"(this one's axes: {', '.join(names)})")
    grid = loaded.tree.method_grid(tuple(len(a.values) for a in loaded.axes))
    presets = np.array([m["algorithm"] for m in text.methods(loaded, target)])[grid]
    for preset in np.unique(presets).tolist():
        algorithms.algorithm_name(coll, preset, "intel")   # refuses an id Intel does not have
    p_cuts = text.cuts(loaded.axes[0], 1, MAX_RANKS, target)
    m_cuts = text.cuts(loaded.axes[1], 1, MAX_BYTES, target,
                       "Intel MPI parses message sizes as C ints")
    return coll, presets, p_cuts, m_cuts


def _setting(path, loaded):
    """(variable, value text, notes) of one tree."""
    coll, presets, p_cuts, m_cuts = preset_grid(path, loaded, "intel-env")
    by_size = (presets == presets[:1, :]).all()
    by_ranks = (presets == presets[:, :1]).all()
    beyond = loaded.beyond is not None
    top = loaded.beyond.above if beyond else MAX_RANKS
    if by_size and not beyond:
        ranges = [f"{p}:{lo}-{hi}" for lo, hi, p in runs(presets[0].tolist(), m_cuts,
                                                          MAX_BYTES)]
    elif by_ranks:     # with `beyond`, no range past above: Intel's own selection there
        ranges = [f"{p}:0-{MAX_BYTES}@{max(lo, 1)}-{hi}"
                  for lo, hi, p in runs(presets[:, 0].tolist(), p_cuts, top)]
    elif by_size:
        raise InputError(f"{path}: this {coll} tree's choice changes with the message size "
                         "and it defers beyond the measured P (tree.json `beyond`): Intel MPI "
                         "drops the message ranges under a communicator-size range, so "
                         "--target intel-env cannot carry both (build it with --beyond keep)")
    else:
        row = int(np.nonzero((presets != presets[:, :1]).any(axis=1))[0][0])
        p = loaded.axes[0].values[row]
        raise InputError(f"{path}: this {coll} tree's choice changes with both P and the "
                         f"message size (at P = {p:g} it changes with the size); Intel MPI "
                         f"keeps one preset per communicator-size range of "
                         f"{intel_algorithms.forcing_variable(coll)} and drops the message "
                         "ranges under it, so --target intel-env cannot carry it (use "
                         "--target intel-json, or build a tree for one P, or one that depends "
                         "on P only)")
    notes = []
    if (presets == algorithms.BASELINE_ALGORITHM).any():
        notes.append(f"{coll}: the tree defers somewhere; written as preset 0, Intel's basic "
                     f"selection logic (not its tuning file, which an unset "
                     f"{intel_algorithms.forcing_variable(coll)} would use)")
    if beyond:
        notes.append(f"{coll}: no range past P = {loaded.beyond.above} (tree.json `beyond`): "
                     "Intel MPI's own selection decides at a larger P")
    if not by_size or beyond:
        notes.append(f"{coll}: one preset per communicator-size range (Intel MPI drops message "
                     "ranges under @P)")
    return intel_algorithms.forcing_variable(coll), ";".join(ranges), notes


def emit(trees, options):
    names = options.tree_names or [f"tree {i + 1}" for i in range(len(trees))]
    settings, notes, seen = [], [], set()
    for path, loaded in zip(names, trees):
        variable, value, more = _setting(path, loaded)
        if variable in seen:
            raise InputError(f"{path}: a second {loaded.collective} tree (one per collective)")
        seen.add(variable)
        settings.append((variable, value))
        notes += more
    return Emitted({"intel_env.sh": render("intel_env.sh.j2", settings=settings,
                                           sources=names)},
                   notes)
