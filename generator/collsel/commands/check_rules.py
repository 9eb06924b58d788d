"""`collsel check-rules FILE`: read an Open MPI classic rules file as Open MPI does (the reader is
collsel.sinks.emit.ompi_rules_reader), report every trap, and optionally evaluate it."""
import sys

from collsel.core import csvfile, values
from collsel.errors import InputError, printable
from collsel.sinks.emit.ompi_rules_reader import (COLLCOUNT, COLLECTIVE_IDS, load, parse_version,
                                                  summary)


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
    p.add_argument("--query", nargs=2, metavar=("P", "M"),
                   help="communicator size (1..2^31-1) and message size in bytes (0..2^64-1)")
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


def _point(p, m, where):
    """(P, m) checked as `collsel query` checks them (core.values)."""
    return (values.integer(p, "comm_size", *values.COMM_SIZE, where),
            values.integer(m, "msg_size", *values.MSG_SIZE, where))


def _points(args):
    if args.query:
        return [_point(*args.query, "--query")]
    try:
        text = ("\n".join(csvfile.read_lines(args.points, "a points file"))
                if args.points != "-" else sys.stdin.read())
    except OSError as e:
        raise InputError(f"{args.points}: cannot read: {e.strerror}") from None
    except UnicodeDecodeError as e:
        raise InputError(f"{args.points}: cannot read: {e}") from None
    out = []
    for lineno, line in enumerate(text.splitlines(), 1):
        fields = line.split("#", 1)[0].split()
        if not fields:
            continue
        if len(fields) != 2:
            raise InputError(f"{args.points}:{lineno}: expected 'P M', got "
                             f"{len(fields)} value(s)")
        out.append(_point(*fields, f"{args.points}:{lineno}"))
    return out


def run_check(args):
    version = parse_version(args.ompi_version)
    evaluate = bool(args.query or args.points)
    if evaluate:    # the flags and every point checked before the file is read
        coll_id = _collective_id(args.collective)
        points = _points(args)
    rules = load(args.file, version)
    for line, message in rules.errors:
        print(printable(f"{args.file}:{line}: {message}"), file=sys.stderr)
    if evaluate:
        out = []
        for p, m in points:
            alg, seg, fan, _ = rules.lookup(coll_id, p, m)
            out.append(f"{alg} {seg} {fan}")
        sys.stdout.write("\n".join(out) + ("\n" if out else ""))
    elif not rules.errors:
        print(f"{args.file}: valid for Open MPI {'.'.join(map(str, version))} "
              f"(format version {rules.version}): {summary(rules)}")
    return 2 if rules.errors else 0
