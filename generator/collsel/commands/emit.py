"""`collsel emit --target T TREE.json...`: one tree (or several) -> the files of one target.

The targets live in collsel.sinks.emit.targets (name -> function); this module owns their
command-line flags (named --<target>-... or shared) and turns them into EmitOptions; rendering
and writing are collsel.pipeline's. A target that renders one file writes it to --out; several
files go into the --out directory.
"""
import argparse

from collsel import pipeline
from collsel.core.io import values
from collsel.sinks.emit.targets import TARGETS
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


def options_of(args):
    """The typed options of the parsed flags (pipeline.emit_options)."""
    return pipeline.emit_options(
        args.target, args.trees, prefix=args.prefix, node_width=args.node_width,
        array_name=args.array_name, ompi_comm_sizes=args.ompi_comm_sizes,
        ompi_rules_version=args.ompi_rules_version, mpich_base_file=args.mpich_base,
        mpich_map=args.mpich_map)


def run_emit(args):
    values.not_an_input(args.out, args.trees)
    return emit_files(args.target, args.trees, args.out, options_of(args),
                      base_given=bool(args.mpich_base))


def emit_files(target, trees, out, options, base_given=False):
    """Render the tree.json files `trees` for `target` into `out` (collsel.pipeline), saying
    where MPICH's base came from, the target's notes and what was written."""
    rendered = pipeline.emit(target, trees, options=options)
    print_notes(out, rendered, options, base_given)
    pipeline.write_emitted(out, rendered.files)
    print_written(out, rendered)
    return 0


def print_emitted(out, rendered, options):
    """What emit_files says of `rendered` (pipeline.emit's result) written into `out`: tune's
    logs hold the same lines."""
    print_notes(out, rendered, options)
    print_written(out, rendered)


def print_notes(out, rendered, options, base_given=False):
    """Where MPICH's base came from (unless --mpich-base named it) and the target's notes."""
    if options.mpich_base is not None and not base_given:
        print(f"{out}: base: {options.mpich_base_name} (--mpich-base FILE for another)")
    for note in rendered.notes:
        print(f"{out}: {note}")


def print_written(out, rendered):
    """The file written and its size, or the directory and its files."""
    if len(rendered.files) == 1:
        (data,) = rendered.files.values()
        print(f"{out}: {len(data)} bytes")
    else:
        print(f"{out}/: " + ", ".join(sorted(rendered.files)))
