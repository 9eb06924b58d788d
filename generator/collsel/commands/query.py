"""`collsel query`: the decision of a tree.json for given points."""
import sys

from collsel.core.io import csvfile, sizes, values
from collsel.core.mpi import fallbacks, method_text
from collsel.core.trees import extrapolation, treefile
from collsel.errors import InputError
from collsel.commands import add_command


def register(sub):
    p = add_command(sub, "query",
                    description="Print the method the tree decides at each point, by the "
                    "name of the tree's MPI (e.g. 'P=8 m=65536: binomial (alg 6, seg 0, fan "
                    "0)'); with --ids only 'algorithm segsize faninout', for scripts.")
    p.add_argument("tree", metavar="TREE.json")
    p.add_argument("--comm-size", metavar="P", help="communicator size, 1..2^31-1")
    p.add_argument("--msg-size", metavar="M", help="bytes, 0..2^64-1: 65536, 64K, 1M, 2^20 "
                   "(K, M, G = 2^10, 2^20, 2^30; also in a --points file)")
    p.add_argument("--z", help="third-axis value (octree)")
    p.add_argument("--points", metavar="FILE", help="one 'P M [Z]' per line ('-' = stdin)")
    p.add_argument("--ids", action="store_true",
                   help="print only the ids, 'algorithm segsize faninout' per point (one line "
                        "each, in order): the format scripts and the C runtime's tests compare")
    p.set_defaults(run=run_query)


def _z_value(axis, text, where):
    if axis.kind == "category":
        if text in axis.labels:
            return axis.labels.index(text)
        return values.integer(text, "z", 0, len(axis.labels) - 1, where)
    return values.integer(text, "z", *values.Z_VALUE, where)


def _read_points(args, loaded):
    n_axes = len(loaded.axes)
    if args.points:
        try:
            lines = (sys.stdin.read().splitlines() if args.points == "-"
                     else csvfile.read_lines(args.points, "a points file"))
        except (OSError, UnicodeDecodeError) as e:
            raise InputError(f"{args.points}: cannot read: {e}") from None
        rows = [(i, line.split()) for i, line in enumerate(lines, 1)
                if line.strip() and not line.lstrip().startswith("#")]
    else:
        if args.comm_size is None or args.msg_size is None:
            raise InputError("give --comm-size and --msg-size, or --points FILE")
        rows = [(0, [args.comm_size, args.msg_size] + ([args.z] if args.z is not None else []))]
    columns = [[] for _ in range(n_axes)]
    for lineno, fields in rows:
        where = [f"{args.points}:{lineno}"] * 3 if lineno else ["--comm-size", "--msg-size", "--z"]
        if len(fields) != n_axes:
            if lineno:
                need = "P M Z" if n_axes == 3 else "P M"
                raise InputError(f"{where[0]}: expected {need} for the {n_axes}-axis tree "
                                 f"{args.tree}, got {len(fields)} value(s)")
            raise InputError(f"{args.tree} is a {n_axes}-axis tree: "
                             + ("give its third axis with --z" if n_axes == 3
                                else "it takes no --z"))
        columns[0].append(sizes.comm_size(fields[0], where[0]))
        columns[1].append(sizes.msg_size(fields[1], where[1]))
        if n_axes == 3:
            columns[2].append(_z_value(loaded.axes[2], fields[2], where[2]))
    return columns


def _point_text(loaded, point):
    """'P=8 m=65536' or 'P=8 m=65536 ppn=2' (a category z by its label)."""
    text = f"P={point[0]} m={point[1]}"
    if len(point) == 3:
        z = loaded.axes[2]
        text += f" {z.name}={z.labels[point[2]] if z.kind == 'category' else point[2]}"
    return text


def _refusal_text(loaded, leaf, point):
    """' (two_proc fails at P = 3: P != 2 ...)': why the point defers where the tree's leaf names a
    method the MPI refuses there (core.mpi.fallbacks.refusal)."""
    method = loaded.methods[leaf]
    entry = fallbacks.refusal(loaded.collective, method.algorithm, point[0], point[1])
    return (f" ({method_text.method_text(loaded.collective, method, loaded.family)} fails at "
            f"P = {point[0]}: {entry.condition}, {entry.source.rsplit('/', 1)[-1]})")


def run_query(args):
    if args.points is not None and (args.comm_size, args.msg_size, args.z) != (None,) * 3:
        given = [f for f, v in (("--comm-size", args.comm_size), ("--msg-size", args.msg_size),
                                ("--z", args.z)) if v is not None]
        raise InputError(f"--points {args.points} and {', '.join(given)}: give the points one "
                         "way, a file of 'P M [Z]' lines or the flags of one point")
    loaded = treefile.load(args.tree)
    columns = _read_points(args, loaded)
    choice = loaded.decide(columns).tolist()
    if args.ids:
        out = [f"{m.algorithm} {m.segsize} {m.faninout}" for m in
               (loaded.methods[i] for i in choice)]
    else:
        names = [f"{method_text.method_text(loaded.collective, m, loaded.family)} "
                 f"({method_text.method_ids(m)})" for m in loaded.methods]
        leaves = loaded.decide(columns, refusals=False).tolist()
        out = [f"{_point_text(loaded, point)}: {names[i]}"
               + (_refusal_text(loaded, leaf, point) if leaf != i else "")
               for point, i, leaf in zip(zip(*columns), choice, leaves)]
    sys.stdout.write("\n".join(out) + ("\n" if out else ""))
    _extrapolated(loaded, columns[0])
    return 0


# extrapolated P values named one by one on stderr; beyond this many, counted
NOTES_SHOWN = 5


def _extrapolated(loaded, comm_sizes):
    """One stderr line per queried P outside the measured P (core.trees.extrapolation), so an answer
    the data does not back is never silent; stdout keeps its format."""
    p_values = list(loaded.axes[0].values)
    above = loaded.beyond.above if loaded.beyond is not None else None
    notes = [n for n in (extrapolation.query_note(p, p_values, above)
                         for p in sorted(set(comm_sizes))) if n]
    sys.stdout.flush()
    for note in notes[:NOTES_SHOWN]:
        print(f"collsel query: note: {note}", file=sys.stderr)
    if len(notes) > NOTES_SHOWN:
        print(f"collsel query: note: {len(notes) - NOTES_SHOWN} more P values outside the "
              f"measured {extrapolation.p_text(p_values)}, extrapolated", file=sys.stderr)
