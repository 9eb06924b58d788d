"""`collsel query`: the decision of a tree.json for given points."""
import sys

from collsel.core import treefile
from collsel.errors import InputError

SIZE_MAX = 2**64 - 1
INT_MAX = 2**31 - 1


def register(sub):
    p = sub.add_parser("query", help="decision of a tree.json for given P and m",
                       description="Print 'algorithm segsize faninout' for each point.")
    p.add_argument("tree", metavar="TREE.json")
    p.add_argument("--comm-size", type=int, metavar="P")
    p.add_argument("--msg-size", type=int, metavar="M", help="bytes")
    p.add_argument("--z", help="third-axis value (octree)")
    p.add_argument("--points", metavar="FILE", help="one 'P M [Z]' per line ('-' = stdin)")
    p.set_defaults(run=run_query)


def _parse_int(text, what, low, high, where):
    try:
        value = int(text)
    except (TypeError, ValueError):
        raise InputError(f"{where}{what} '{text}' is not an integer") from None
    if not low <= value <= high:
        raise InputError(f"{where}{what} {value} out of range [{low}, {high}]")
    return value


def _z_value(axis, text, where):
    if axis.kind == "category":
        if text in axis.labels:
            return axis.labels.index(text)
        return _parse_int(text, "z", 0, len(axis.labels) - 1, where)
    return _parse_int(text, "z", -2**63, 2**63 - 1, where)


def _read_points(args, loaded):
    n_axes = len(loaded.axes)
    if args.points:
        try:
            if args.points == "-":
                lines = sys.stdin.read().splitlines()
            else:
                with open(args.points, encoding="utf-8") as f:
                    lines = f.read().splitlines()
        except (OSError, UnicodeDecodeError) as e:
            raise InputError(f"{args.points}: cannot read: {e}") from None
        rows = [(i, line.split()) for i, line in enumerate(lines, 1)
                if line.strip() and not line.lstrip().startswith("#")]
    else:
        if args.comm_size is None or args.msg_size is None:
            raise InputError("give --comm-size and --msg-size, or --points FILE")
        rows = [(0, [str(args.comm_size), str(args.msg_size)]
                 + ([args.z] if args.z is not None else []))]
    values = [[] for _ in range(n_axes)]
    for lineno, fields in rows:
        where = f"{args.points}:{lineno}: " if lineno else ""
        if len(fields) != n_axes:
            need = "P M Z (with --z for a 3-axis tree)" if n_axes == 3 else "P M"
            raise InputError(f"{where}expected {need}, got {len(fields)} value(s)")
        values[0].append(_parse_int(fields[0], "comm_size", 1, INT_MAX, where))
        values[1].append(_parse_int(fields[1], "msg_size", 0, SIZE_MAX, where))
        if n_axes == 3:
            values[2].append(_z_value(loaded.axes[2], fields[2], where))
    return values


def run_query(args):
    loaded = treefile.load(args.tree)
    values = _read_points(args, loaded)
    choice = loaded.decide(values)
    out = [f"{m.algorithm} {m.segsize} {m.faninout}"
           for m in (loaded.methods[i] for i in choice.tolist())]
    sys.stdout.write("\n".join(out) + ("\n" if out else ""))
    return 0
