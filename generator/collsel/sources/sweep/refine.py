"""--refine BUDGET: after the planned launches, spend more launches where decisions are uncertain
(ACCLAiM's idea). A cell is undecided when its best and runner-up candidates are tied or the
best's p_best is below --confidence (PairedPlan.decided). Each extra launch goes to the P (the
shape: nodes x ppn with --nodes/--ppn) with the most undecided cells (the smaller on equal
counts) and measures only those sizes; it stops when every cell is decided or the budget is
spent. A budget in seconds starts only a launch estimated (sweep/estimate.py, on the sweep's own
launches) to fit what it has left, cut to the sizes that fit, or at a P with fewer undecided
cells when none of the first's does (`fitting`). The budget counts the refinement launches the
journal already records (launch numbers above --launches, their `wall_s`), so a resumed sweep
continues the same budget, and starts the same launches.
"""
import re

from collsel.core.io import csvfile
from collsel.core.mpi.algorithms import BASELINE_ALGORITHM, Method
from collsel.errors import InputError
from collsel.sources.sweep import journal, racing, shapes
from collsel.sources.sweep.paired_plan import PairedPlan
from collsel.sources.sweep.plan import Config
from collsel.sources.sweep.resume import parse_options

_BUDGET = re.compile(r"(\d+(?:\.\d+)?)(s?)")


def parse_budget(text):
    """('seconds', float) for 'Ns', ('launches', int) for 'N'; None for None."""
    if text is None:
        return None
    match = _BUDGET.fullmatch(str(text).strip())
    if not match or (not match.group(2) and "." in match.group(1)):
        raise InputError(f"--refine {text!r}: expected seconds as 'Ns' (e.g. 600s) or a number "
                         "of launches (e.g. 10)")
    value = float(match.group(1))
    if value <= 0 or value > 7 * 86400:
        raise InputError(f"--refine {text!r}: out of range (0, a week]")
    return ("seconds", value) if match.group(2) else ("launches", int(value))


def spent(launches, planned_launches):
    """(launches, seconds) the refinement has spent, of the journal's launches
    ([journal.LaunchLine])."""
    walls = [x.wall_s for x in launches if x.k > planned_launches]
    return len(walls), sum(walls)


def planned_seconds(launches, planned_launches):
    """Seconds the planned launches took (collsel tune gives refinement what they left)."""
    return sum(x.wall_s for x in launches if x.k <= planned_launches)


def left(budget, used_launches, used_seconds):
    kind, amount = budget
    return (amount - used_launches if kind == "launches" else amount - used_seconds) > 0


def undecided(plan, shapes=None):
    """{P: [sizes]} of the complete cells not yet decided (--strategy adaptive: whose race is
    not over, sweep/racing.py); `shapes`: of those shapes only."""
    decided = racing.settled if plan.cfg.strategy == "adaptive" else PairedPlan.decided
    out = {}
    for p, m in plan.cells(shapes):
        if not decided(plan, p, m):
            out.setdefault(p, []).append(m)
    return out


def undecided_in_table(path):
    """{shape: [sizes]} of the complete cells of a paired sweep's table on disk that are not
    decided (`undecided`), judged from its journal with the --confidence and --equivalence its
    last '# options=' line records: what --refine would launch next. collsel tune counts them
    in its summary and shares its refinement by them."""
    return undecided(table_plan(path))


def table_plan(path, launches=None):
    """The PairedPlan of a paired sweep's table on disk (its journal read back, with the options
    its last '# options=' line records); `launches`: only the journal's first so many launches
    (what the sweep had measured at some point of its run: a replayed tune's anytime curve,
    pipeline/tune/curve.py)."""
    return next(table_plans(path, [launches]))


def table_plans(path, counts):
    """table_plan(path, n) of every n of `counts`, lazily, the table and its journal read
    once."""
    options = parse_options(csvfile.read(path, "a sweep table").metadata.get("options", ""))
    collective, family = options["--collective"], options.get("--mpi", "openmpi")
    if "--nodes" in options:
        groups = shapes.explicit(options["--nodes"], options["--ppn"])
    else:
        groups = shapes.plain(_ints(options["--comm-sizes"]))
    methods = [Method(*map(int, x.split(":"))) for x in options.get("--algorithms", "").split(",")
               if x]
    if not options.get("--no-baseline"):
        methods.append(Method(BASELINE_ALGORITHM, 0))
    levels = options["--load-levels"].split(",") if options.get("--load-levels") else None
    cfg = Config(collective=collective, out=path, comm_sizes=sorted({g.p for g in groups}),
                 msg_sizes=_ints(options["--msg-sizes"]), methods=sorted(methods),
                 launcher=None, bench_path="", bench_args=[], silence_timeout=0,
                 launches=int(options["--launches"]), mode="paired", family=family,
                 seed=int(options.get("--seed", 1)),
                 confidence=float(options.get("--confidence", 0.95)),
                 strategy=options.get("--strategy", racing.DEFAULT),
                 equivalence=float(options.get("--equivalence", 5)) / 100,
                 shapes=groups if "--nodes" in options else None, load_levels=levels)
    journal_file = journal.journal_path(path)
    header = csvfile.read(journal_file, "a sweep journal").header
    _, all_rows, _, log = journal.load_existing(journal_file, header, collective,
                                                family=family, launches=True)
    of_row = log.of_row.tolist()
    for n in counts:
        rows, launches = all_rows, log.lines
        if n is not None:
            rows = [r for r, i in zip(all_rows, of_row) if i < n]
            launches = log.lines[:n]
        yield PairedPlan(cfg, rows, set(), launches)


def _ints(text):
    return sorted({int(x) for x in text.split(",") if x})


def _by_need(undecided_cells):
    """The P of undecided cells, the most undecided first (the smaller on equal counts)."""
    return sorted(undecided_cells, key=lambda q: (-len(undecided_cells[q]), q))


def next_target(undecided_cells):
    """(P, sizes) to launch next, or None when everything is decided."""
    if not undecided_cells:
        return None
    p = _by_need(undecided_cells)[0]
    return p, undecided_cells[p]


def fitting(undecided_cells, seconds_left, prefix_costs):
    """next_target's launch cut to what a seconds budget has left: the P in its order, the
    first at which a launch at its first undecided size is estimated to fit `seconds_left`,
    with as many of its sizes (in order) as fit; None when no launch fits. The estimate,
    `prefix_costs(P, sizes)`: the seconds of a launch at sizes[:n] for each n. Without it the
    last launch began whatever it cost: live, a bcast refinement given 21 s ran 49 s (one
    oversubscribed P=16 launch of 34 methods), leaving the collectives after it nothing."""
    for p in _by_need(undecided_cells):
        sizes = undecided_cells[p]
        fit = sum(1 for cost in prefix_costs(p, sizes) if cost <= seconds_left)
        if fit:
            return p, sizes[:fit]
    return None
