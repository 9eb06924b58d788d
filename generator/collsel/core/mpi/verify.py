"""`collsel verify`'s judgement: what an Open MPI launch ran, call site by call site, beside what
the deployed selection says, and why they differ when the launch's own reports can tell.

The reports come from the LD_PRELOAD probe (sources/measure/collsel_coll_probe.c, read by
sources/measure/coll_probe.py), one per rank: the coll/base functions each call ran (outermost
only: a fallback inside an algorithm is the algorithm's business), the communicator size, the
quantity Open MPI's fixed decision computes (collsel's m, docs/guide/collectives.md), the segment
size the function was given, the rule lookup coll/tuned made for the call; coll/tuned's settings
as MPI_T reads them at MPI_Finalize; and whether and how coll/tuned read its rules file at
MPI_Init. What the selection says comes from the caller (`expect`), so the one reader of each
file format decides (sinks/emit/ompi_rules_reader.py for rules files, as `collsel check-rules`).

Nothing here runs anything: a unit test feeds it reports.
"""
import posixpath
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Callable, Optional

from collsel.core.mpi import algorithms, method_text
from collsel.core.mpi.algorithms import Method

# function suffix (after ompi_coll_base_) -> (collective, coll/tuned id)
_BY_FUNCTION = {fn: (coll, alg) for coll, table in algorithms.OMPI_BASE_FUNCTIONS.items()
                for alg, fn in table.items()}
DYNAMIC_RULES = "coll_tuned_use_dynamic_rules"
RULES_FILENAME = "coll_tuned_dynamic_rules_filename"
SAME, DEFER, DIFFERS = "same", "not compared", "DIFFERS"
# Open MPI's default when nothing sets coll_tuned_use_dynamic_rules (coll_tuned_component.c)
DYNAMIC_RULES_DEFAULT = "0"


@dataclass(frozen=True)
class Site:
    """One kind of call one rank made: the outermost coll/base function and what it was given."""
    comm_size: int
    function: str            # after "ompi_coll_base_"
    msg_size: int            # collsel's m (the fixed decision's quantity)
    segsize: int             # the function's segment size argument; -1: it takes none
    rule_size: int           # the size coll/tuned looked the rules up at; -1: no lookup
    rule_alg: int            # the algorithm that lookup gave (0: the file defers); -1: none
    calls: int


@dataclass(frozen=True)
class RulesRead:
    """coll/tuned reading its rules file at MPI_Init: the name as given, what Open MPI's reader
    returned (< 0: it ignores the file), and the probe opening the same name again."""
    name: str
    rc: int
    open_errno: int
    open_error: str
    content_hash: str        # FNV-1a 64 of the bytes (coll_probe.fnv1a), "" when not opened
    size: int


@dataclass
class RankReport:
    rank: int
    size: int                # ranks in MPI_COMM_WORLD; -1 unknown
    host: str = "?"
    cwd: str = ""
    library: str = ""
    settings_read: bool = False      # MPI_Finalize reached: `settings` holds the MPI_T values
    settings: dict = field(default_factory=dict)   # name -> value text (absent: no such cvar)
    rules_read: Optional[RulesRead] = None
    dropped: int = 0
    complete: bool = True
    sites: list = field(default_factory=list)
    source: str = ""         # the report file, for messages


@dataclass(frozen=True)
class Expected:
    """What the deployed selection says at a point: the method (algorithm 0: the MPI's own
    decision), the size its rules are matched at, and a note for the reader (e.g. that the file
    has no rules for the collective)."""
    method: Method
    rule_size: int
    note: str = ""


@dataclass
class Point:
    """One call site across ranks: (collective, P, m) and what ran there."""
    collective: str
    comm_size: int
    msg_size: int
    ran: dict = field(default_factory=lambda: defaultdict(int))     # Method -> calls
    ranks: set = field(default_factory=set)
    lookups: set = field(default_factory=set)       # (rule_size, rule_alg) Open MPI made

    @property
    def calls(self):
        return sum(self.ran.values())


@dataclass
class Verdict:
    lines: list                      # the report, one line each
    problems: list                   # why the launch did not use the selection (failures)
    notes: list                      # worth knowing, not failures
    differ: int
    same: int
    deferred: int

    @property
    def ok(self):
        return not self.problems and not self.differ and (self.same or self.deferred)


def ran_method(collective, alg, segsize):
    """The Method a coll/base call is, as far as the call shows it: the segment size only for
    algorithms that use it (core.mpi.algorithms.SEGMENTING), no fan-in/out (not observed)."""
    seg = segsize if segsize >= 0 and alg in algorithms.SEGMENTING.get(collective, ()) else 0
    return Method(alg, seg, 0)


def points(reports):
    """[Point] of every outermost call of every rank, sorted by collective, P, m; and the
    functions the probe saw that no coll/tuned id names (none expected)."""
    found, unknown = {}, set()
    for report in reports:
        for site in report.sites:
            named = _BY_FUNCTION.get(site.function)
            if named is None:
                unknown.add(site.function)
                continue
            collective, alg = named
            key = (collective, site.comm_size, site.msg_size)
            point = found.setdefault(key, Point(*key))
            point.ran[ran_method(collective, alg, site.segsize)] += site.calls
            point.ranks.add(report.rank)
            if site.rule_alg >= 0:
                point.lookups.add((site.rule_size, site.rule_alg))
    return [found[k] for k in sorted(found)], sorted(unknown)


def agrees(collective, ran, want):
    """Whether a call that ran `ran` (ran_method) did what `want` says: the same algorithm and,
    where the algorithm uses one, the same segment size."""
    if ran.algorithm != want.algorithm:
        return False
    return (want.algorithm not in algorithms.SEGMENTING.get(collective, ())
            or ran.segsize == want.segsize)


def judge(point, expected):
    """SAME, DEFER (the selection leaves the point to the MPI's own decision: whatever ran is
    its) or DIFFERS."""
    if expected.method.algorithm == algorithms.BASELINE_ALGORITHM:
        return DEFER
    ok = all(agrees(point.collective, m, expected.method) for m in point.ran)
    return SAME if ok else DIFFERS


def _ran_text(point):
    parts = sorted(point.ran.items(), key=lambda mc: (-mc[1], mc[0]))
    if len(parts) == 1:
        return method_text.method_text(point.collective, parts[0][0])
    return " / ".join(f"{method_text.method_text(point.collective, m)} ({n} calls)"
                      for m, n in parts)


def point_line(point, expected, status):
    """'bcast P=4 m=1024: ran binomial; the file: binomial (alg 6, seg 0, fan 0): same (8 calls
    on 4 ranks)'."""
    at = f" (rule size {expected.rule_size})" if expected.rule_size != point.msg_size else ""
    want = method_text.method_text(point.collective, expected.method)
    if expected.method.algorithm != algorithms.BASELINE_ALGORITHM:
        want += f" ({method_text.method_ids(expected.method)})"
    note = f", {expected.note}" if expected.note else ""
    return (f"{point.collective} P={point.comm_size} m={point.msg_size}{at}: ran "
            f"{_ran_text(point)}; the file: {want}{note}: {status} ({point.calls} calls on "
            f"{len(point.ranks)} rank{'s' if len(point.ranks) != 1 else ''})")


def lookup_note(point, expected):
    """A line when Open MPI's own rule lookup for the point disagrees with collsel's reading of
    the file (another file, or a reader that differs from this Open MPI's), else None."""
    theirs = {(s, a) for s, a in point.lookups
              if (s, a) != (expected.rule_size, expected.method.algorithm)}
    if not theirs:
        return None
    said = ", ".join(f"algorithm {a} at rule size {s}" for s, a in sorted(theirs))
    return (f"{point.collective} P={point.comm_size} m={point.msg_size}: Open MPI's own lookup "
            f"in the file it read gave {said}; collsel reads algorithm "
            f"{expected.method.algorithm} at rule size {expected.rule_size} in the given file")


def _ranks_text(ranks):
    ranks = sorted(ranks)
    if len(ranks) > 4:
        return f"ranks {ranks[0]}-{ranks[-1]} ({len(ranks)})" if ranks == list(
            range(ranks[0], ranks[-1] + 1)) else f"{len(ranks)} ranks"
    return ("rank " if len(ranks) == 1 else "ranks ") + ", ".join(map(str, ranks))


def _by_value(reports, value):
    """{value(report): [ranks]} over the reports whose value is not None."""
    out = defaultdict(list)
    for r in reports:
        v = value(r)
        if v is not None:
            out[v].append(r.rank)
    return out


@dataclass(frozen=True)
class Origin:
    """Where the launch sets an MCA parameter, as far as its words, environment and parameter
    files show (sources/measure/coll_probe.mca_origin): `where` names it, `value` its text;
    None `value`: nothing sets it."""
    value: Optional[str]
    where: str


def diagnose_rules(reports, rules_path, rules_hash, origins, launched_ranks=None):
    """(problems, notes): why the ranks would not have used the rules file `rules_path` (whose
    content hashes to `rules_hash`), from their reports; `origins` {parameter: Origin} says
    where the launch sets each parameter. Problems mean the file was not in use (exit 1)."""
    problems, notes = [], []
    if not reports:
        return ["the probe wrote no report: the program did not run under it (LAUNCH must start "
                "the MPI program with Open MPI's mpirun or mpiexec), or its ranks could not write "
                "the report directory (on several nodes give --probe-dir on a file system every "
                "node shares)"], notes
    sizes = {r.size for r in reports if r.size > 0}
    expected = launched_ranks or (max(sizes) if sizes else None)
    if expected and len(reports) < expected:
        notes.append(f"only {len(reports)} of {expected} ranks reported (the others did not "
                     "reach exit, or wrote where this machine cannot read: give --probe-dir on a "
                     "file system every node shares)")
    unread = [r.rank for r in reports if not r.settings_read]
    if unread:
        notes.append(f"{_ranks_text(unread)}: did not reach MPI_Finalize under the probe, so "
                     "coll/tuned's settings were not read there")
    dropped = sum(r.dropped for r in reports)
    if dropped:
        notes.append(f"{dropped} calls were not recorded (more distinct calls than the probe's "
                     "table holds)")
    settled = [r for r in reports if r.settings_read]
    tuned_absent = [r.rank for r in settled if DYNAMIC_RULES not in r.settings]
    if tuned_absent:
        coll = _by_value([r for r in settled if r.rank in tuned_absent],
                         lambda r: r.settings.get("coll"))
        chosen = "; ".join(f"'coll' is '{v}'" for v in coll if v) or "'coll' is not set"
        problems.append(f"{_ranks_text(tuned_absent)}: coll/tuned is not loaded, so no rules file "
                        f"is read ({chosen}; it must not exclude tuned)")
    off = [r.rank for r in settled if r.settings.get(DYNAMIC_RULES, "1") in ("0", "")]
    if off:
        problems.append(f"dynamic rules are off on {_ranks_text(off)}: "
                        f"{DYNAMIC_RULES} is 0 there, so Open MPI never reads the rules file and "
                        f"runs its fixed decision; {_origin_text(origins, DYNAMIC_RULES, '1')}")
    unnamed = [r.rank for r in settled
               if r.settings.get(DYNAMIC_RULES) == "1" and not r.settings.get(RULES_FILENAME)]
    if unnamed:
        problems.append(f"{_ranks_text(unnamed)}: no rules file is named ({RULES_FILENAME} is "
                        f"empty); {_origin_text(origins, RULES_FILENAME, rules_path)}")
    read_problems, read_notes = _read_problems(reports, rules_path, rules_hash,
                                               off + unnamed + tuned_absent)
    problems += read_problems
    notes += read_notes
    forced = _by_value(settled, lambda r: tuple(sorted(
        (k, v) for k, v in r.settings.items()
        if k.startswith("coll_tuned_") and k.endswith("_algorithm") and v not in ("0", ""))))
    for pairs, ranks in forced.items():
        if pairs:
            notes.append(f"{_ranks_text(ranks)}: "
                         + ", ".join(f"{k} is {v}" for k, v in pairs)
                         + ": where the file defers (algorithm 0) or has no rule, that forced "
                         "algorithm runs instead of Open MPI's fixed decision")
    return problems, notes


def _origin_text(origins, name, wanted):
    origin = origins.get(name)
    fix = f"add --mca {name} {wanted} to the launch (or export OMPI_MCA_{name}={wanted})"
    if origin is None or origin.value is None:
        checked = f" ({origin.where})" if origin and origin.where else ""
        default = (f", and Open MPI's default is {DYNAMIC_RULES_DEFAULT}"
                   if name == DYNAMIC_RULES else "")
        return f"nothing in the launch sets it{checked}{default}: {fix}"
    return f"{origin.where} sets it to '{origin.value}': {fix}"


def _read_problems(reports, rules_path, rules_hash, excused):
    """(problems, notes) of the file coll/tuned read (or failed to), per group of ranks alike;
    `excused`: ranks whose settings already explain why no file was read."""
    problems, notes = [], []
    on = [r for r in reports if r.settings_read and r.rank not in excused
          and r.settings.get(DYNAMIC_RULES) == "1" and r.settings.get(RULES_FILENAME)]
    not_read = [r.rank for r in on if r.rules_read is None]
    if not_read:
        problems.append(f"{_ranks_text(not_read)}: dynamic rules are on and a file is named, but "
                        "coll/tuned did not read it (is this Open MPI's coll/tuned?)")
    groups = _by_value([r for r in reports if r.rules_read is not None],
                       lambda r: (r.rules_read, r.cwd, r.host))
    for (read, cwd, host), ranks in sorted(groups.items(), key=lambda g: g[1]):
        who = f"{_ranks_text(ranks)} on {host}"
        relative = not posixpath.isabs(read.name)
        where = (f"; '{read.name}' is a relative path, opened from each rank's working "
                 f"directory ({cwd}): give an absolute path" if relative else "")
        if read.open_errno:
            hint = where or f"; is the path right? (verify was given {rules_path})"
            problems.append(f"{who}: the rules file '{read.name}' cannot be opened "
                            f"({read.open_error}): Open MPI ignored it silently and runs its "
                            f"fixed decision{hint}")
        elif read.rc < 0:
            problems.append(f"{who}: Open MPI rejected the rules file '{read.name}' (its reader "
                            "returned -1; a release build says nothing) and runs its fixed "
                            f"decision: `collsel check-rules {read.name}` names the line")
        elif rules_hash and read.content_hash != rules_hash:
            problems.append(f"{who}: the launch deploys '{read.name}' ({read.size} bytes), "
                            f"which is not the content of {rules_path}: the calls are checked "
                            f"against {rules_path}")
        elif relative:
            notes.append(f"{who}: the rules file '{read.name}' is a relative path: it was "
                         f"found from {cwd} here, but a rank started elsewhere (another node, "
                         "-wdir) would not find it: give an absolute path")
    return problems, notes


def verify(reports, expect: Callable, problems=(), notes=()):
    """The Verdict of a launch: a line per call site (expect(collective, P, m) -> Expected), then
    the problems and notes found about the launch (diagnose_rules)."""
    found, unknown = points(reports)
    lines, extra = [], []
    counts = {SAME: 0, DEFER: 0, DIFFERS: 0}
    for point in found:
        want = expect(point.collective, point.comm_size, point.msg_size)
        status = judge(point, want)
        counts[status] += 1
        lines.append(point_line(point, want, status))
        note = lookup_note(point, want)
        if note:
            extra.append(note)
    notes = list(notes) + extra
    if unknown:
        notes.append(f"functions no coll/tuned algorithm names: {', '.join(unknown)}")
    problems = list(problems)
    if not found and not problems:
        problems.append("no call reached an Open MPI coll/base algorithm (no collective on a "
                        "communicator of 2 or more ranks, or coll/tuned not in use): nothing "
                        "to compare")
    return Verdict(lines, problems, notes, counts[DIFFERS], counts[SAME], counts[DEFER])


def summary(verdict):
    """The last line: how many call sites agree, and the verdict."""
    total = verdict.same + verdict.differ + verdict.deferred
    parts = [f"{verdict.same} as the file says", f"{verdict.differ} differ"]
    if verdict.deferred:
        parts.append(f"{verdict.deferred} left to Open MPI's own decision by the file")
    head = f"{total} call site{'s' if total != 1 else ''}: " + ", ".join(parts)
    if verdict.ok:
        return head + ": Open MPI ran what the file says"
    return head + ": Open MPI did NOT run what the file says" + (
        "" if verdict.problems else " (no reason found in the launch's settings)")
