"""`collsel ingest`: existing benchmark results -> the canonical performance table."""
import sys

from collsel.core.io import sizes, statistic, values
from collsel.core.maps import table
from collsel.core.mpi import algorithms
from collsel.core.io.files import write_file
from collsel.errors import InputError, printable
from collsel.sources.ingest import assemble, common, csvmap, given, output
from collsel.sources.ingest.common import read_lines
from collsel.sources.ingest.detect import PARSERS, detect
from collsel.sources.ingest.options import KIND_CHOICES, IngestOptions
from collsel.commands import add_command

HELP = """\
Read OSU, IMB-MPI1, SKaMPI, ReproMPI, ompi-collectives-tuning detail.out or any CSV (--map)
and write one canonical table. What a format does not record (the algorithm, P for OSU, the
collective, the segment size of segmenting algorithms) comes from flags, --pattern or
--manifest; a missing value is an error naming the flag.

examples:
  collsel ingest osu/*.txt --pattern 'osu-broadcast-{algorithm}.txt' --comm-size 8 \\
      --segsize 0 --out bcast.csv
  collsel ingest results.csv --collective bcast --segsize 0 \\
      --map comm_size=Processes,msg_size=Size,algorithm=Algorithm,time_us='Latency(us)' \\
      --out bcast.csv
  collsel ingest --check imb.txt
  collsel ingest nodes-ppn.csv --collective bcast --segsize 0 --duplicates mean \\
      --map comm_size=P,msg_size=bytes,algorithm=alg,time_us='t(us)',nodes=N,ppn=PPN \\
      --carry network=Fabric --out bcast.csv
  collsel ingest bcast_complete.csv --collective bcast --segsize 0 --where Allocation=core \
      --map comm_size=Processes,msg_size=MessageSize,algorithm=Algorithm,time_us='Avg Latency(us)' \
      --out bcast-core.csv

Where the ranks ran: ppn and nodes become integer columns of the table (ppn is the third axis
of `collsel build --z ppn`), from a CSV's columns (--map ppn=COLUMN,nodes=COLUMN) or per file
(--ppn/--nodes, a --pattern with {ppn}/{nodes}, a --manifest column). Any other CSV column is
kept as text with --carry. Every such column names the point like P and m do: --duplicates
never merges rows that differ in one, and every input must give the same ones.

Other people's datasets: --where keeps the rows of one mapping (or collective), --relabel
translates the dataset's algorithm labels, --columns/--whitespace read headerless blank-separated
text, --skip-malformed skips a stray line with a FILE:LINE warning, --duplicates median merges a
repeated sweep; a --map without msg_size reads barrier results (m = 0).
"""


def register(subparsers):
    p = add_command(subparsers, "ingest",
                    description=HELP, formatter_class=_raw())
    p.add_argument("files", nargs="+", metavar="FILE")
    p.add_argument("--out", metavar="TABLE", help="canonical CSV table to write")
    p.add_argument("--force", action="store_true",
                   help="accepted and not needed: --out is replaced whole, as build and emit "
                   "replace theirs (kept for scripts written when ingest refused it)")
    p.add_argument("--check", action="store_true",
                   help="report format, points, methods, P and m ranges; write nothing")
    p.add_argument("--format", choices=sorted(PARSERS), help="skip format detection")
    p.add_argument("--map", metavar="TARGET=COLUMN,...",
                   help="read a CSV: comm_size=..,msg_size=..,algorithm=..,time_us=.. "
                   "(also collective, segsize, faninout, mean_us, min_us, max_us, stdev_us, n, "
                   "and ppn, nodes: processes per node and node count, positive integers)")
    p.add_argument("--carry", metavar="COLUMN[,NAME=COLUMN...]",
                   help="with --map: keep these CSV columns in the table as text (named NAME, "
                   "else as in the CSV); rows differing in one are different points")
    p.add_argument("--where", metavar="COLUMN=VALUE[,...]",
                   help="with --map: keep only the rows whose columns hold these values (e.g. "
                   "Allocation=core: one table per mapping); the others are counted in the "
                   "metadata")
    p.add_argument("--relabel", metavar="LABEL=ALGORITHM[,...]",
                   help="what the dataset's own algorithm labels (a --map column's values, a "
                   "--pattern's {algorithm}) mean, e.g. 1=1,2=3,3=5 for files algo1..algo3 "
                   "that ran ids 1, 3, 5; labels not listed are read as they are")
    p.add_argument("--columns", metavar="NAME[,...]",
                   help="with --map: the column names of a file without a header line (every "
                   "line is then a row)")
    p.add_argument("--whitespace", action="store_true",
                   help="with --map: fields separated by blanks (spaces, tabs), not commas")
    p.add_argument("--skip-malformed", dest="skip_malformed", action="store_true",
                   help="with --map: skip a line with the wrong number of fields or an empty "
                   "mapped value (a stray host name, a missing measurement), warning with its "
                   "FILE:LINE, instead of refusing the file")
    p.add_argument("--collective", help="collective measured (or the one to keep)")
    p.add_argument("--comm-size", dest="comm_size", metavar="P", help="communicator size")
    p.add_argument("--algorithm", help="Open MPI algorithm id or name (0/ignore = default)")
    p.add_argument("--segsize", metavar="BYTES", help="segment size forced in the runs")
    p.add_argument("--faninout", metavar="N", help="fan-in/out forced in the runs")
    p.add_argument("--ppn", metavar="N", help="processes per node of the runs (a ppn column)")
    p.add_argument("--nodes", metavar="N", help="nodes the runs used (a nodes column)")
    p.add_argument("--pattern", help="file-name pattern with {algorithm} {comm_size} "
                   "{segsize} {faninout} {collective} {ppn} {nodes}, e.g. "
                   "'osu-broadcast-{algorithm}.txt'")
    p.add_argument("--manifest", metavar="CSV",
                   help="CSV with a 'file' column and any of " + ", ".join(given.KEYS))
    p.add_argument("--statistic", choices=("avg", "min", "max", "median", "mean"),
                   help="which number becomes time_us (OSU/IMB: avg over ranks; ReproMPI: "
                   "median over repetitions)")
    p.add_argument("--kind", choices=KIND_CHOICES,
                   help="what a CSV's time is over the ranks: the slowest rank (max), their "
                   "mean or the fastest (recorded as the ranks part of the statistic)")
    p.add_argument("--time-unit", dest="time_unit", metavar="UNIT",
                   help="unit of CSV or SKaMPI times when not printed: us, ms, s, ns")
    p.add_argument("--datatype-size", dest="datatype_size", metavar="BYTES",
                   help="ReproMPI element size when the file lacks #@datatype_size_bytes")
    p.add_argument("--partial", action="store_true",
                   help="read a SKaMPI result block cut off before its 'end result', or an IMB "
                   "block cut off before its closing blank line (a run killed at its time "
                   "limit, a manual excerpt)")
    p.add_argument("--duplicates", choices=output.DUPLICATE_POLICIES, default="error",
                   help="two measurements of one point: error (default) or how to merge")
    p.set_defaults(run=run)


def _raw():
    import argparse
    return argparse.RawDescriptionHelpFormatter


def options(args):
    """The flags the parsers and the per-file values read."""
    return IngestOptions(statistic=args.statistic, map=args.map, kind=args.kind,
                         time_unit=args.time_unit, datatype_size=args.datatype_size,
                         partial=args.partial, collective=args.collective,
                         comm_size=args.comm_size, algorithm=args.algorithm,
                         segsize=args.segsize, faninout=args.faninout, ppn=args.ppn,
                         nodes=args.nodes, pattern=args.pattern, carry=args.carry,
                         where=args.where, relabel=args.relabel, columns=args.columns,
                         whitespace=args.whitespace, skip_malformed=args.skip_malformed)


def run(args):
    # Flags first, so a bad one is reported before any file is read.
    if not args.check:
        if not args.out:
            raise InputError("give --out TABLE to write the table, or --check to only report")
        values.output_file(args.out)
    if args.map is not None:
        csvmap.parse_map(args.map)
    elif args.format == "csv":
        csvmap.parse(None, [], options(args))      # the error naming --map
    for flag, given_, does in (("--carry", args.carry, "keeps columns of"),
                               ("--where", args.where, "chooses rows of"),
                               ("--columns", args.columns, "names the columns of"),
                               ("--whitespace", args.whitespace, "splits the lines of"),
                               ("--skip-malformed", args.skip_malformed, "skips lines of")):
        if given_ not in (None, False) and args.map is None:
            raise InputError(f"{flag} {does} a CSV read with --map; give --map")
    if args.carry is not None:
        csvmap.parse_carry(args.carry)
    if args.where is not None:
        csvmap.parse_where(args.where)
    if args.columns is not None:
        csvmap.parse_columns(args.columns)
    if args.relabel is not None:
        common.parse_relabel(args.relabel)
    _check_flags(args)
    opts = options(args)
    pattern = given.compile_pattern(args.pattern) if args.pattern else None
    manifest = given.read_manifest(args.manifest) if args.manifest else None
    rows, sources, reports, skipped = [], [], [], []
    for path in args.files:
        lines = read_lines(path)
        fmt = detect(path, lines, args.format, bool(args.map))
        parsed = PARSERS[fmt].parse(path, lines, opts)
        # said once the run succeeded: a refused run's stderr is its one error line
        skipped += [f"collsel: warning: {printable(path)}:{lineno}: skipped: {printable(why)} "
                    "(--skip-malformed)" for lineno, why in parsed.malformed]
        supplied = given.for_file(path, opts, pattern, manifest)
        mine, needs = assemble.rows(path, parsed, supplied, lenient=args.check)
        source = {"file": path, "format": fmt, "statistic": parsed.statistic,
                  "statistic_detail": parsed.detail, "rows": len(mine)}
        source.update({f"given.{k}": "; ".join(f"{t} ({w})" for t, w in v)
                       for k, v in supplied.items() if v})
        source.update(parsed.info)
        sources.append(source)
        reports.append((path, fmt, parsed, mine, needs))
        rows += mine
    output.check_columns(rows)
    # In --check, rows still missing a value cannot be compared yet.
    complete = [r for r in rows if None not in (r[k] for k in output.KEY)]
    merged = output.merge_duplicates(complete, args.duplicates) + [
        r for r in rows if None in (r[k] for k in output.KEY)]
    merge_note = output.duplicates_note(len(complete), merged, args.duplicates)
    warning = statistic.mismatch_warning([(s["file"], s["statistic"]) for s in sources])
    if warning:
        print(f"collsel: warning: {printable(warning)}", file=sys.stderr)
    if args.check:
        _warn(skipped)
        for report in reports:
            print(_report(*report))
        if len(reports) > 1:
            print(_summary("total", merged))
        return 0
    final = output.finish(merged)
    write_file(args.out, table.render_table(final, output.metadata(sources, final, merge_note)))
    _warn(skipped)
    print(_summary(f"wrote {args.out}", final))
    return 0


def _warn(lines):
    for line in lines:
        print(line, file=sys.stderr)


def _check_flags(args):
    """Values of flags that do not depend on the files, each error naming its flag."""
    if args.collective is not None:
        try:
            args.collective = algorithms.given_collective(args.collective)
        except InputError as e:
            raise InputError(f"--collective: {common.printable(str(e))}") from None
    if args.time_unit is not None and common.unit_factor_or_none(args.time_unit) is None:
        raise InputError(f"--time-unit '{args.time_unit}': unknown time unit (known: us, ms, s, "
                         "ns)")
    if args.datatype_size is not None:
        args.datatype_size = sizes.parse_size(args.datatype_size, "--datatype-size", 1, 2**20,
                                              "datatype size")


def _summary(title, rows):
    def span(key, unit=""):
        values = [r[key] for r in rows if r[key] is not None]
        if not values:
            return "?"
        low, high = min(values), max(values)
        return (f"{low}{unit}" if low == high else f"{low}..{high}{unit}") + (
            f" ({len(set(values))} values)" if len(set(values)) > 2 else "")
    methods = output.describe_methods(rows)
    colls = sorted({str(r["collective"]) for r in rows})
    extra = "".join(f", {name} {span(name)}" for name, _ in output.carried(rows[0])) \
        if rows else ""
    return (f"{title}: {len(rows)} points, {'/'.join(colls)}, P {span('comm_size')}, "
            f"m {span('msg_size', ' B')}{extra}, {len(methods)} methods ({', '.join(methods)})")


def _report(path, fmt, parsed, rows, needs):
    text = _summary(f"{path}: format {fmt}", rows) + f"\n  statistic: {parsed.statistic} " \
        f"({parsed.detail})"
    if parsed.skipped:
        text += f"\n  not read (not a collective collsel knows, or not chosen): " \
            f"{', '.join(parsed.skipped)}"
    for key in sorted(needs):
        text += f"\n  missing: {key} ({given.how_to_supply(key)})"
    return text
