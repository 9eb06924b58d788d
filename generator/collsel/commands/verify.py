"""`collsel verify --rules FILE | --trees DIR -- LAUNCH...`: run the user's program under the
coll/base probe (sources/measure/coll_probe.py) and print, per call site, the algorithm Open MPI
ran beside the one the deployed selection says (a rules file read by the reader `collsel
check-rules` uses; trees deployed through libcollsel, decided as `collsel query` decides), then
why they differ when the launch can tell (core/mpi/verify.py judges)."""
import glob
import argparse
import os
import shutil
import subprocess
import sys
import tempfile

from collsel.core.mpi import verify
from collsel.core.trees import treefile
from collsel.core.mpi.algorithms import BASELINE_ALGORITHM, Method
from collsel.errors import InputError, printable
from collsel.sinks.emit.ompi_rules_reader import (COLLECTIVE_IDS, parse_version, read,
                                                  rule_size_of)
from collsel.sources.measure import coll_probe
from collsel.commands import add_command
from collsel.commands.options import launch_words

DEFAULT_OMPI = "4.1.4"


def register(sub):
    p = add_command(
        sub, "verify",
        description="Run LAUNCH (the command that starts your MPI program, e.g. `mpirun -n 4 "
        "./app` with the --mca flags you deploy the file with) with an LD_PRELOAD probe in "
        "every rank (C source shipped with collsel, compiled with the launcher's mpicc on "
        "first use into ~/.cache/collsel). The probe records, per call, the coll/base "
        "algorithm Open MPI ran, the communicator size P and the message size m its decision "
        "computes, and at MPI_Init / MPI_Finalize whether coll/tuned read the rules file and "
        "with which settings; it only forwards calls, so the algorithms that run are the "
        "ones that run without it. Prints one line per call site (collective, P, m, and the "
        "rule size Open MPI matches where it differs): what ran, what the file says, same / "
        "DIFFERS / not compared (the file leaves the point to Open MPI's fixed decision); then "
        "why "
        "the file was not in use when the reports tell (dynamic rules off, file not found, "
        "relative path, rejected by Open MPI, another file deployed). Exit 0 when every call "
        "site ran what the file says, 1 when any differs or the file was not in use (or the "
        "program failed), 2 for bad input. The program's own output passes through first. "
        "With --trees instead of --rules: the trees deployed through libcollsel "
        "(LD_PRELOAD=libcollsel.so COLLSEL_TREES=DIR, e.g. for an mpi4py program), each call "
        "site beside what the tree decides there, and why not (libcollsel not preloaded, "
        "COLLSEL_TREES unset, dynamic rules off).")
    what = p.add_mutually_exclusive_group(required=True)
    what.add_argument("--rules", metavar="FILE",
                      help="the Open MPI coll/tuned rules file the launch deploys "
                      "(collsel emit --target ompi-rules)")
    what.add_argument("--trees", metavar="DIR",
                      help="the trees the launch deploys through libcollsel "
                      "(LD_PRELOAD=.../libcollsel.so COLLSEL_TREES=DIR): a `collsel tune` "
                      "output directory or its trees/ folder, or a directory of `collsel "
                      "build` outputs (their tree.json decide, as `collsel query` does)")
    p.add_argument("--ompi-version", metavar="X.Y.Z",
                   help="the Open MPI release whose rules reader to emulate (default: the one "
                   "the ranks report, else 4.1.4)")
    p.add_argument("--mpicc", metavar="MPICC",
                   help="the compiler wrapper to build the probe with (default: the one of the "
                   "launcher: mpicc beside a launcher given by path, mpicc.openmpi for "
                   "mpirun.openmpi, else mpicc)")
    p.add_argument("--probe-dir", metavar="DIR",
                   help="where the ranks write their reports (default: a new directory under "
                   "the system's temporary directory, removed afterwards); on several nodes "
                   "it must be on a file system every node shares")
    p.add_argument("launch", nargs=argparse.REMAINDER, metavar="-- LAUNCH...",
                   help="the launch command, after --")
    p.set_defaults(run=run_verify)


def _read_rules_bytes(path):
    try:
        with open(path, "rb") as f:
            return f.read()
    except OSError as e:
        raise InputError(f"--rules {path}: cannot read: {e.strerror}") from None


def _reader_version(args, reports, notes):
    """The Open MPI release whose reader decides what the file says."""
    if args.ompi_version:
        return parse_version(args.ompi_version)
    running = coll_probe.library_version(reports)
    if running:
        try:
            return parse_version(running)
        except InputError:
            notes.append(f"the ranks run Open MPI {running}, whose rules reader collsel does not "
                         f"emulate: the file is read as Open MPI {DEFAULT_OMPI} reads it")
    return parse_version(DEFAULT_OMPI)


def expectation(rules):
    """expect(collective, P, m) -> core.mpi.verify.Expected: what the rules file makes Open MPI run
    (RulesFile.decide: the reader's own matching, at the rule size of the collective)."""
    def expect(collective, comm_size, m):
        coll_id = COLLECTIVE_IDS[collective]
        alg, seg, fan, _ = rules.decide(coll_id, comm_size, m)
        note = ""
        if rules.rejected:
            note = "Open MPI ignores the whole file"
        elif coll_id not in rules.collectives:
            note = f"no {collective} rules in it"
        return verify.Expected(Method(alg, seg, fan), rule_size_of(coll_id, comm_size, m), note)
    return expect


def tree_files(directory):
    """{collective: LoadedTree} under a deployed trees directory: a tune's DIR/<collective>/
    tree/tree.json, a folder of builds' <name>/tree.json, or, for a blob folder (tune's
    DIR/trees, what COLLSEL_TREES names), its parent's."""
    if not os.path.isdir(directory):
        raise InputError(f"--trees {directory}: not a directory")

    def under(top):
        return sorted(glob.glob(os.path.join(top, "*", "tree", "tree.json"))
                      + glob.glob(os.path.join(top, "*", "tree.json")))
    found = under(directory)
    if not found and glob.glob(os.path.join(directory, "*.bin")):
        found = under(os.path.dirname(os.path.abspath(directory)))
    if not found:
        raise InputError(f"--trees {directory}: no <collective>/tree.json in it (give the "
                         "`collsel tune --out` directory or its trees/ folder)")
    out = {}
    for path in found:
        loaded = treefile.load(path)
        out.setdefault(loaded.collective, loaded)
    return out


def tree_expectation(trees):
    """expect(collective, P, m) -> core.mpi.verify.Expected: what the trees make libcollsel run
    (LoadedTree.decide: the cuts, `beyond`, the refusals; "defer" and a collective without a
    tree leave the call to Open MPI's own decision)."""
    def expect(collective, comm_size, m):
        loaded = trees.get(collective)
        if loaded is None:
            return verify.Expected(Method(BASELINE_ALGORITHM, 0, 0), m,
                                   f"no {collective} tree: libcollsel passes it through")
        values = [[comm_size]] + ([[m]] if len(loaded.axes) > 1 else [])
        if len(loaded.axes) > 2:     # an octree's third axis: libcollsel's own answer differs
            return verify.Expected(Method(BASELINE_ALGORITHM, 0, 0), m,
                                   "a third-axis tree: not compared")
        method = loaded.methods[int(loaded.decide(values)[0])]
        return verify.Expected(Method(method.algorithm, method.segsize, method.faninout), m)
    return expect


def _preload_problems(words, trees_dir):
    """Why libcollsel cannot be deciding, as far as the launch words and environment show."""
    text = " ".join(words) + " " + os.environ.get("LD_PRELOAD", "")
    problems = []
    if "libcollsel" not in text:
        problems.append("libcollsel is not preloaded: add `-x LD_PRELOAD=/path/to/"
                        "libcollsel.so` to the launch (the tune's summary prints the line)")
    if "COLLSEL_TREES" not in text and "COLLSEL_TREES" not in os.environ:
        problems.append(f"COLLSEL_TREES is not set: add `-x COLLSEL_TREES={trees_dir}`")
    return problems


def run_verify(args):
    words = launch_words(args, "collsel verify --rules rules.conf")
    data = _read_rules_bytes(args.rules) if args.rules else None
    trees = tree_files(args.trees) if args.trees else None
    if args.ompi_version:
        parse_version(args.ompi_version)          # refused before anything runs
    at = coll_probe.launcher_index(words)
    family = coll_probe.launcher_family(words[at])
    if family != "openmpi":
        raise InputError(f"LAUNCH: '{words[at]}' is not Open MPI's launcher"
                         f"{' (it is ' + family + ')' if family else ''}: --rules files are "
                         "read by Open MPI's coll/tuned, and the probe reads Open MPI's "
                         "coll/base; start the program with Open MPI's mpirun")
    probe = coll_probe.library(args.mpicc or coll_probe.mpicc_for(words[at]))
    made = args.probe_dir is None
    directory = tempfile.mkdtemp(prefix="collsel-verify-") if made else args.probe_dir
    if not made:
        try:
            os.makedirs(directory, exist_ok=True)
        except OSError as e:
            raise InputError(f"--probe-dir {directory}: cannot create it: {e.strerror}") \
                from None
        directory = os.path.abspath(directory)
        stale = [n for n in os.listdir(directory) if n.startswith(("sites.", "probe."))]
        if stale:
            raise InputError(f"--probe-dir {directory}: holds reports of an earlier run "
                             f"({stale[0]}, ...): give an empty directory")
    try:
        argv = coll_probe.with_probe(words, probe, directory)
        sys.stdout.flush()
        try:
            status = subprocess.run(argv).returncode
        except OSError as e:
            raise InputError(f"LAUNCH: cannot run '{argv[0]}': {e.strerror}") from None
        reports = coll_probe.read_reports(directory)
    finally:
        if made:
            shutil.rmtree(directory, ignore_errors=True)
    if trees is not None:
        return report_trees(args, words, trees, reports, status)
    return report(args, words, data, reports, status)


def report_trees(args, words, trees, reports, status):
    """Print the verdict of one launch deploying trees through libcollsel; the exit status."""
    problems = [] if status == 0 else [f"the launch exited with status {status}"]
    off = [r.rank for r in reports if r.settings_read
           and r.settings.get(verify.DYNAMIC_RULES, "1") in ("0", "")]
    if off:      # libcollsel forces through coll/tuned's forced-algorithm settings
        problems.append(f"dynamic rules are off on {len(off)} rank(s): libcollsel's forced "
                        f"algorithms count only with {verify.DYNAMIC_RULES} 1: add `--mca "
                        f"{verify.DYNAMIC_RULES} 1` to the launch")
    verdict = verify.verify(reports, tree_expectation(trees), problems, [])
    if verdict.differ:
        verdict.problems.extend(_preload_problems(words, args.trees))
    return _print(verdict, reports, f"trees {args.trees} ({', '.join(sorted(trees))})")


def report(args, words, data, reports, status):
    """Print the verdict of one launch; the exit status."""
    notes = []
    rules = read(args.rules, data, _reader_version(args, reports, notes))
    origins = {name: coll_probe.mca_origin(words, name)
               for name in (verify.DYNAMIC_RULES, verify.RULES_FILENAME)}
    problems, found = verify.diagnose_rules(reports, args.rules, coll_probe.fnv1a(data),
                                            origins)
    notes += found
    if rules.rejected:
        line, message = next((e for e in rules.errors if "ignores the whole file" in e[1]),
                             rules.errors[0])
        problems.insert(0, f"{args.rules}:{line}: {message} (collsel check-rules "
                        f"{args.rules} lists every problem)")
    elif rules.errors:
        notes.append(f"{args.rules}: collsel check-rules finds {len(rules.errors)} problem(s) "
                     f"Open MPI passes silently, first line {rules.errors[0][0]}: "
                     f"{rules.errors[0][1]}")
    if status != 0:
        problems.insert(0, f"the launch exited with status {status}"
                        + (" (timeout's: the program ran too long)" if status == 124 else ""))
    verdict = verify.verify(reports, expectation(rules), problems, notes)
    return _print(verdict, reports, f"rules file {args.rules}")


def _print(verdict, reports, deployed):
    ranks = sorted({r.rank for r in reports})
    print(f"collsel verify: {len(reports)} rank report(s), "
          f"{reports[0].library.split(',')[0] if reports else 'no MPI seen'}; {deployed}")
    for line in verdict.lines:
        print(printable(line))
    for line in verdict.problems:
        print(printable(f"why: {line}"))
    for line in verdict.notes:
        print(printable(f"note: {line}"))
    print(verify.summary(verdict) + (f" ({len(ranks)} ranks)" if ranks else ""))
    return 0 if verdict.ok else 1
