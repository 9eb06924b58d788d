"""`collsel check-rules FILE`: read an Open MPI classic rules file as Open MPI does (the reader is
collsel.sinks.emit.ompi_rules_reader), report every trap, and optionally evaluate it."""
import sys

from collsel.errors import InputError
from collsel.sinks.emit.ompi_rules_reader import COLLCOUNT, COLLECTIVE_IDS, load, parse_version, summary

def register(sub):
    p = sub.add_parser(
        "check-rules", help="validate an Open MPI coll/tuned rules file; evaluate it",
        description="Read a classic Open MPI coll/tuned dynamic rules file "
        "(coll_tuned_dynamic_rules_filename) the way Open MPI 4.1 / 5.0 reads it, and report "
        "every error and every silent trap (leading zeros, wrong counts, unordered blocks, a "
        "version line Open MPI does not understand, ...) as one line FILE:LINE: message. "
        "Exit 0 when the file is clean, 2 otherwise. With --query or --points, print what "
        "Open MPI would run: 'algorithm segsize faninout' (the order `collsel query` uses; "
        "algorithm 0 = Open MPI's fixed decision).")
    p.add_argument("file", metavar="FILE")
    p.add_argument("--ompi-version", default="4.1.4", metavar="X.Y.Z",
                   help="the Open MPI release whose reader to emulate (default 4.1.4, Debian "
                   "12's; the version line needs >= 4.1.8 or >= 5.0.7)")
    p.add_argument("--collective", help="for --query/--points: bcast, reduce, ... (or an id)")
    p.add_argument("--query", nargs=2, type=int, metavar=("P", "M"),
                   help="communicator size and message size in bytes")
    p.add_argument("--points", metavar="FILE", help="one 'P M' per line ('-' = stdin)")
    p.set_defaults(run=run_check)


def _collective_id(text):
    if text is None:
        raise InputError("--query/--points need --collective")
    if text.isdigit() and int(text) < COLLCOUNT:
        return int(text)
    if text.lower() in COLLECTIVE_IDS:
        return COLLECTIVE_IDS[text.lower()]
    raise InputError(f"--collective '{text}' is not an Open MPI collective name or id")


def _points(args):
    if args.query:
        return [tuple(args.query)]
    try:
        text = sys.stdin.read() if args.points == "-" else open(args.points).read()
    except OSError as e:
        raise InputError(f"{args.points}: cannot read: {e.strerror}") from None
    out = []
    for lineno, line in enumerate(text.splitlines(), 1):
        fields = line.split("#", 1)[0].split()
        if not fields:
            continue
        try:
            p, m = (int(x) for x in fields)
        except ValueError:
            raise InputError(f"{args.points}:{lineno}: expected 'P M', got '{line.strip()}'") \
                from None
        if p < 1 or m < 0:
            raise InputError(f"{args.points}:{lineno}: P must be >= 1 and M >= 0")
        out.append((p, m))
    return out


def run_check(args):
    version = parse_version(args.ompi_version)
    rules = load(args.file, version)
    for line, message in rules.errors:
        print(f"{args.file}:{line}: {message}", file=sys.stderr)
    if args.query or args.points:
        coll_id = _collective_id(args.collective)
        out = []
        for p, m in _points(args):
            alg, seg, fan, _ = rules.lookup(coll_id, p, m)
            out.append(f"{alg} {seg} {fan}")
        sys.stdout.write("\n".join(out) + ("\n" if out else ""))
    elif not rules.errors:
        print(f"{args.file}: valid for Open MPI {'.'.join(map(str, version))} "
              f"(format version {rules.version}): {summary(rules)}")
    return 2 if rules.errors else 0
