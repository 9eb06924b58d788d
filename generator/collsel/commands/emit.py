"""`collsel emit --target T TREE.json...`: one tree (or several) -> the files of one target.

The targets live in collsel.sinks.emit.targets (name -> function); this module owns their
command-line flags (named --<target>-... or shared) and turns them into EmitOptions. A target
that renders one file writes it to --out; several files go into the --out directory.
"""
import argparse

from collsel.core import treefile, values
from collsel.core.files import write_directory, write_file
from collsel.sinks.emit import mpich_json, ompi_rules
from collsel.sinks.emit.targets import TARGETS, EmitOptions, emit


def register(sub):
    lines = "\n".join(f"  {name:16} {text}" for name, (_, _, text) in TARGETS.items())
    p = sub.add_parser("emit", help="tree.json -> C, rules files, binary blob, ...",
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
                   "(maint/tuning/coll/mpir/generic.json of the installed version; "
                   "`make mpich-base` puts it in build/mpich/generic.json)")
    p.add_argument("--mpich-map", metavar="[COLL:]ID=NAME,...", default="",
                   help="--target mpich-json: MPICH algorithm for Open MPI algorithm ID "
                   "(all trees, or only collective COLL), e.g. 'bcast:7=binomial,1=binomial'; "
                   "overrides the built-in table")
    p.set_defaults(run=run_emit)


def options_of(args):
    """The typed options of the parsed flags; input files are read only for their target."""
    mpich = args.target == "mpich-json"
    return EmitOptions(
        prefix=None if args.prefix is None else values.identifier(args.prefix, "--prefix"),
        node_width=args.node_width,
        array_name=(None if args.array_name is None
                    else values.identifier(args.array_name, "--array-name")),
        ompi_comm_sizes=ompi_rules.parse_comm_sizes(args.ompi_comm_sizes),
        ompi_rules_version=args.ompi_rules_version,
        mpich_base=mpich_json.load_base(args.mpich_base) if mpich and args.mpich_base else None,
        mpich_base_name=args.mpich_base or "",
        mpich_map=mpich_json.parse_map(args.mpich_map, sorted(mpich_json.MPICH_NAMES)),
        tree_names=tuple(args.trees))


def run_emit(args):
    options = options_of(args)
    trees = [treefile.load(path) for path in args.trees]
    result = emit(args.target, trees, options)
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
