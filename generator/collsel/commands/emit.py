"""`collsel emit --target T TREE.json...`: one tree (or several) -> the files of one target.

The targets live in collsel.sinks.emit.targets (name -> function); this module owns their
command-line flags (named --<target>-... or shared) and turns them into EmitOptions. A target
that renders one file writes it to --out; several files go into the --out directory.
"""
import argparse

from collsel.core import treefile, values
from collsel.core.files import write_directory, write_file
from collsel.sinks.emit import mpich_json, ompi_rules
from collsel.sources.measure import mpich_base
from collsel.sinks.emit.targets import TARGETS, EmitOptions, emit
from collsel.commands import add_command


def register(sub):
    lines = "\n".join(f"  {name:16} {text}" for name, (_, _, text) in TARGETS.items())
    p = add_command(sub, "emit",
                    description="Render one or more tree.json files (from `collsel build`) "
                    "for a target.\n\ntargets:\n" + lines,
                    formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("trees", nargs="+", metavar="TREE.json")
    p.add_argument("--target", required=True, choices=sorted(TARGETS), metavar="TARGET",
                   help="one of: " + ", ".join(sorted(TARGETS)))
    p.add_argument("--out", required=True, metavar="PATH",
                   help="output file (one-file targets) or directory (several files)")
    p.add_argument("--prefix", help="C function prefix for --target c and c-fast "
                   "(default collsel_<coll>)")
    p.add_argument("--array-name", metavar="NAME",
                   help="C array name for --target c-array (default collsel_<coll>_tree)")
    p.add_argument("--node-width", type=int, choices=(2, 4),
                   help="bytes per node for --target blob/c-array (default: 2 when the tree "
                        "has at most 32768 nodes and methods, else 4)")
    p.add_argument("--ompi-comm-sizes", metavar="LIST",
                   help="ompi-rules/ompi-json: communicator sizes that start the blocks, e.g. "
                   "2,4,8,16 (default: one block per P cell of the tree, merged where equal: "
                   "exact)")
    p.add_argument("--ompi-rules-version", type=int, choices=(1, 2), default=1,
                   help="ompi-rules: 2 writes the rule-file-version-2 line and a MAXREQ field "
                   "(0), understood only by Open MPI >= 4.1.8 / >= 5.0.7; default 1")
    p.add_argument("--mpich-base", metavar="FILE",
                   help="--target mpich-json: MPICH's default MPIR selection file "
                   "(maint/tuning/coll/mpir/generic.json); default: the one compiled into the "
                   "installed libmpich, which is what MPICH runs without a selection file")
    p.add_argument("--mpich-map", metavar="[COLL:]ID=NAME,...", default="",
                   help="--target mpich-json, a tree of Open MPI algorithms: the MPICH algorithm "
                   "for Open MPI algorithm ID (all trees, or only collective COLL), e.g. "
                   "'bcast:7=binomial,1=binomial'; needed only for the algorithms the tree's "
                   "leaves use that have no exact MPICH counterpart; overrides the built-in table")
    p.set_defaults(run=run_emit)


def _mpich_base(args):
    """(parsed base, where it came from) for --target mpich-json: --mpich-base FILE, else the
    selection compiled into the installed MPICH (collsel.sources.measure.mpich_base)."""
    if args.target != "mpich-json":
        return None, ""
    if args.mpich_base:
        return mpich_json.load_base(args.mpich_base), args.mpich_base
    text, where = mpich_base.installed_selection()
    return mpich_json.parse_base(text, where), where


def options_of(args):
    """The typed options of the parsed flags; input files are read only for their target."""
    base, base_name = _mpich_base(args)
    return EmitOptions(
        prefix=None if args.prefix is None else values.identifier(args.prefix, "--prefix"),
        node_width=args.node_width,
        array_name=(None if args.array_name is None
                    else values.identifier(args.array_name, "--array-name")),
        ompi_comm_sizes=ompi_rules.parse_comm_sizes(args.ompi_comm_sizes),
        ompi_rules_version=args.ompi_rules_version,
        mpich_base=base, mpich_base_name=base_name,
        mpich_map=mpich_json.parse_map(args.mpich_map, sorted(mpich_json.MPICH_NAMES)),
        tree_names=tuple(args.trees))


def run_emit(args):
    values.not_an_input(args.out, args.trees)
    options = options_of(args)
    trees = [treefile.load(path) for path in args.trees]
    result = emit(args.target, trees, options)
    if options.mpich_base is not None and not args.mpich_base:
        print(f"{args.out}: base: {options.mpich_base_name} (--mpich-base FILE for another)")
    for note in result.notes:
        print(f"{args.out}: {note}")
    if len(result.files) == 1:
        (data,) = result.files.values()
        values.output_file(args.out)
        write_file(args.out, data)
        print(f"{args.out}: {len(data)} bytes")
    else:
        values.output_directory(args.out)
        write_directory(args.out, result.files)
        print(f"{args.out}/: " + ", ".join(sorted(result.files)))
    return 0
