"""The by-size sweep (--mode by-size): Intel MPI's every preset measured in one launch, each at
its own message size a few bytes from the grid's m.

Intel MPI reads its forcing (I_MPI_ADJUST_<COLL>, its MPI_T cvars too) in MPI_Init only, so it
cannot be paired per call as Open MPI and MPICH are. But its JSON tuning file (I_MPI_TUNING)
maps exact message sizes to presets: a bound of 1024 runs its preset at 1024 B and the next
entry's at 1028 B (traced, docs/guide/intel-mpi.md). So launch r of P measures method k of the
K forced ones at m + offset(k, r) bytes, every (m, method) of the grid in one launch, the file
giving each of those sizes its own entry. The offsets run 0..K-1 in odd launches and K-1..0 in
even ones, so over two launches every method's mean size is the same, m + (K-1)/2; a few bytes
against m's own size (8 B to MiBs), which decides the time. Grid sizes closer than K bytes
would share offsets: they go to separate launches (`parts`). Intel's own selection (the
baseline, algorithm 0) cannot be asked for in the file (preset 0 there runs its basic logic,
not its tuning file), so it keeps a launch of its own per P and round, without the file, as in
the per-method mode.

The table, the journal and --resume are the per-method mode's (run.py): a point's row is
written when its launches are all in; only what a launch measures and how it is forced differ.
Each launch's file is kept beside the table (TABLE.forcing/), the record of what it forced.
"""
import json
import os

from collsel.core.io.files import write_file
from collsel.core.mpi import algorithms, intel_algorithms
from collsel.core.mpi.algorithms import Method
from collsel.errors import InputError
from collsel.sources.measure import benchmark_program as bench, launchers
from collsel.sources.sweep import engine, estimate, run
from collsel.sources.sweep.journal import point_key
from collsel.sources.sweep.plan import Plan

FORCING_FILE = "I_MPI_TUNING"


def offset(k, methods, r):
    """The bytes method k (of `methods` forced ones) is measured above m in launch r."""
    return k if r % 2 else methods - 1 - k


def forced_methods_of(methods):
    """The methods the tuning file forces: all but the baseline, in the sweep's order."""
    return [x for x in methods if x.algorithm != algorithms.BASELINE_ALGORITHM]


def check_grid(msg_sizes, methods):
    """One line when the largest size plus its offsets passes what the benchmark measures."""
    top = max(msg_sizes) + len(methods) - 1
    if len(methods) > 1 and top > bench.MSG_SIZE[1]:
        raise InputError(f"--msg-sizes {max(msg_sizes)}: --mode by-size measures its "
                         f"{len(methods)} methods up to {top} B, beyond the benchmark's "
                         f"{bench.MSG_SIZE[1]} B: give a smaller largest size")


def parts(points, limit):
    """[[(size, m, method)], ...]: the points of one launch split where two would measure the same
    size (grid sizes closer than the methods' offsets) or one launch would pass `limit` sizes;
    each m's points stay together, in the first part they fit."""
    by_m = {}
    for point in points:
        by_m.setdefault(point[1], []).append(point)
    out, used = [], []
    for group in by_m.values():
        sizes = {size for size, _, _ in group}
        for i, taken in enumerate(used):
            if not sizes & taken and len(out[i]) + len(group) <= limit:
                out[i] += group
                taken |= sizes
                break
        else:
            out.append(list(group))
            used.append(set(sizes))
    return [sorted(part, key=lambda point: point[0]) for part in out]


def sized_points(msg_sizes, forced, r, wanted=lambda m, method: True):
    """[(size, m, method)] of launch r: each `wanted` (m, method) of the grid at m + its offset."""
    return [(m + offset(k, len(forced), r), m, method)
            for m in msg_sizes for k, method in enumerate(forced) if wanted(m, method)]


def parts_per_round(msg_sizes, methods):
    """How many launches one P's round takes for `methods` forced methods (`parts`)."""
    placeholders = [Method(i, 0) for i in range(methods)]
    return max(1, len(parts(sized_points(msg_sizes, placeholders, 1),
                            bench.capabilities().max_sizes)))


def tuning_file(collective, points):
    """The JSON tuning file that forces each point's method at its size, as text."""
    entries = [(size, method.algorithm) for size, _, method in points]
    doc = intel_algorithms.tuning_document(collective, [(intel_algorithms.OPEN, entries)])
    return json.dumps(doc, indent=1) + "\n"


def forcing_path(cfg, p, r, part):
    return os.path.join(f"{cfg.out}.forcing", f"P{p}-launch{r}-part{part}.json")


class BySize(run.PerMethod):
    """The by-size protocol (module docstring): the per-method mode's table, journal and
    bookkeeping (run.Plan), its launches one per P, round and part, and the baseline's own."""

    def load(self, found):
        self.plan = Plan(self.cfg, {point_key(r) for r in found.rows}, found.journal_rows)
        self.planned = self._planned()

    def _planned(self):
        """The launches still to run, rounds outermost: ("sized", P, round, part, [(size, m,
        method)]) and ("baseline", P, round, the baseline method, [m])."""
        cfg, plan = self.cfg, self.plan
        forced = forced_methods_of(cfg.methods)
        baseline = [x for x in cfg.methods if x not in forced]
        limit = bench.capabilities().max_sizes
        out = []
        for r in range(1, cfg.launches + 1):
            for p in cfg.comm_sizes:
                points = sized_points(cfg.msg_sizes, forced, r,
                                      lambda m, method: plan.needs(p, m, method, r))
                out += [("sized", p, r, i, part)
                        for i, part in enumerate(parts(points, limit), 1)]
                for method in baseline:
                    sizes = [m for m in cfg.msg_sizes if plan.needs(p, m, method, r)]
                    if sizes:
                        out.append(("baseline", p, r, method, sizes))
        return out

    def dry_run_lines(self, found):
        cfg, lines, planned = self.cfg, [], []
        for launch in self.launches(None):
            argv, env = launch.command(launch.sizes)
            lines.append(launchers.render(argv, env))
            planned.append((str(launch.p), len(launch.sizes)))
        lines.append(f"# {len(self.planned)} launches, {self.plan.left} of {self.plan.total} "
                     f"point launches to measure ({cfg.launches} per point), every forced "
                     "method of a P in one launch")
        lines.append("# " + estimate.estimate(planned, cfg.launcher.name, cfg.time_cap))
        return lines

    def launches(self, sweep):
        return [(_SizedLaunch if kind == "sized" else run.MethodLaunch)(self, sweep, *planned)
                for kind, *planned in self.planned]


class _SizedLaunch(run.MethodLaunch):
    """Launch r of P (part `part`): every point's method forced at its own size by a tuning
    file, written when the launch begins; run, checked and settled as a per-method launch."""

    def __init__(self, protocol, sweep, p, r, part, points):
        self.protocol, self.sweep, self.cfg = protocol, sweep, protocol.cfg
        self.p, self.r, self.part = p, r, part
        self.at = {size: (m, method) for size, m, method in points}
        self.sizes = [size for size, _, _ in points]
        self.path = forcing_path(self.cfg, p, r, part)
        self.text = tuning_file(self.cfg.collective, points)
        self.label = self.name = (f"P={p} by size launch {r}/{self.cfg.launches}"
                                  + (f" part {part}" if part > 1 else ""))

    def begin(self):
        os.makedirs(os.path.dirname(self.path), exist_ok=True)
        if not os.path.exists(self.path):
            self.protocol.made.append(self.path)
        write_file(self.path, self.text)

    def command(self, todo):
        return self.cfg.launcher.command(self.p, {FORCING_FILE: os.path.abspath(self.path)},
                                         run.bench_argv(self.cfg, todo))

    def on_point(self, fields):
        m, method = self.at[int(fields["msg_size"])]
        run.record(self.protocol, self.sweep, (self.p, m, method.algorithm, method.segsize),
                   self.r, fields)

    def failure_text(self, lost, failure, command):
        named = sorted({f"{self.at[s][0]}:{self.at[s][1].algorithm}" for s in lost})
        return (f"P={self.p} by size, m:algorithm {' '.join(named)} (sizes "
                f"{engine.sizes_text(lost)}, forced by {self.path}) launch={self.r}: {failure}; "
                f"command: {command}")
