"""Options and helpers shared by the commands: their tables (read by sources/tables.py), trees
and journals, and the launch command of those that run a program (launch_words)."""
import argparse
import dataclasses

from collsel.core.evaluate import model_selection
from collsel.core.maps import decision_map
from collsel.core.trees import tree
from collsel.errors import InputError
from collsel.sources import launch_tables
from collsel.sources.tables import read_tables, the_collective


def percent(text):
    try:
        return float(text.strip().rstrip("%"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"'{text}' is not a percentage") from None


def add_tree_options(p):
    p.add_argument("--max-depth", type=int, metavar="D", help="leaves at depth <= D (root = 0)")
    p.add_argument("--threshold", type=percent, metavar="PCT",
                   help="a block becomes a leaf once PCT%% of its cells share one method "
                        "(the paper's accuracy threshold; 100 = exact)")
    p.add_argument("--split", choices=tree.SPLITS, default="balanced",
                   help="replicate: the paper's reshape to 2^k x 2^k by replication; balanced: "
                        "split every axis at its middle index (default)")
    p.add_argument("--leaf", choices=tree.LEAF_RULES, default="majority",
                   help="majority: most frequent method in the block (the paper); penalty: least "
                        "summed relative penalty over the block's measured cells; robust: least "
                        "mean penalty, under --max-penalty when given (all three score unmeasured "
                        "methods at imputed times)")
    p.add_argument("--ties", action="store_true",
                   help="tie-aware leaves: a block where one method is tied with the best on "
                        "every measured cell becomes a leaf (exact up to ties; greedy, not "
                        "guaranteed minimal). Ties come from the table's tied or "
                        "ci_halfwidth_us columns and --tolerance, which implies --ties")
    p.add_argument("--max-penalty", type=percent, metavar="PCT",
                   help="with --leaf robust: no measured cell of a leaf may pay more than PCT%% "
                        "penalty; a block where no method meets it splits further, and at "
                        "--max-depth takes the method with the least worst-cell penalty "
                        "(stats count the cells and leaves over the cap)")


def add_criterion_option(p, lead=""):
    """--criterion of `build --recommend` and `report` (core.evaluate.model_selection)."""
    p.add_argument("--criterion", choices=model_selection.CRITERIA, default="combined",
                   help=f"{lead}what out of sample means when the recommended tree is chosen: "
                        "launches (the held-out launch), P (unmeasured communicator sizes), m "
                        "(unmeasured message sizes), combined (default: the mean of those the "
                        "data allows)")


def add_table_options(p):
    p.add_argument("tables", nargs="+", metavar="TABLE", help="canonical performance table(s)")
    p.add_argument("--collective", help="bcast, reduce, ... (default: the one collective the "
                   "tables hold)")
    p.add_argument("--z", metavar="COLUMN", help="third axis column (octree), e.g. ppn")
    p.add_argument("--tolerance", type=percent, metavar="PCT",
                   help="a method within PCT%% of a cell's best is tied with it (added to the "
                        "ties from the table's tied or ci_halfwidth_us columns); for build, "
                        "implies --ties")
    p.add_argument("--no-defer", dest="defer", action="store_false",
                   help="do not offer 'defer to the MPI' (the algorithm-0 rows) as a leaf "
                        "(by default it is a candidate wherever it was measured)")


def add_interpolate_option(p):
    """--interpolate of `build` and `evaluate` (core.maps.interpolated)."""
    p.add_argument("--interpolate", action="store_true",
                   help="decide between measured P and m by each method's time interpolated "
                        "from its neighbours (log time linear in log P and log m), so a switch "
                        "falls where the times cross instead of at the midpoint")


def add_launches_option(p):
    p.add_argument("--launches", metavar="JOURNAL",
                   help="the sweep's per-launch journal, for penalties cross-validated across "
                        "launches (default: TABLE.launches beside a single TABLE, if it exists; "
                        "without one, only leave-one-P-out and leave-one-m-out are computed)")


def load_launches(args):
    """(journal path or None, {launch: PerfTable}) of the command's tables and --launches
    (sources.launch_tables), with the third axis (--z) when the command has one."""
    return launch_tables.load(args.tables, args.collective, args.launches,
                              getattr(args, "z", None))


def select_collective(args, tables):
    """The rows of the collective args.collective names, or of the one the tables hold; sets
    args.collective to it, so the rest of the command (journals, command lines) uses it."""
    args.collective = the_collective(tables, args.collective)
    return tables.select(args.collective)


def select_each(args):
    """Each of args.tables read on its own (they measure the same points: compare), restricted
    to one collective as select_collective does over all of them."""
    parts = [read_tables([path]) for path in args.tables]
    args.collective = the_collective(parts, args.collective)
    return [t.select(args.collective) for t in parts]


def map_settings(args):
    """How add_table_options' flags turn a table into a map (also for out-of-sample folds)."""
    return decision_map.MapSettings(args.z, args.tolerance, args.defer,
                                    getattr(args, "interpolate", False))


def load_table_and_map(args, parts=None):
    """The selected collective's table and its decision map (`parts`: args.tables, already
    read one by one)."""
    selected = select_collective(args, read_tables(args.tables, parts))
    return selected, map_settings(args).build(selected)


def load_map(args):
    return load_table_and_map(args)[1]


def build_options(args):
    """The tree options of add_tree_options' flags, checked."""
    return tree.BuildOptions(args.split, args.leaf, args.max_depth, args.threshold,
                             args.max_penalty,
                             args.ties or getattr(args, "tolerance", None) is not None).check()


def launch_words(args, example):
    """The launch command after `--` (a REMAINDER argument `launch`), or one line saying how to
    give it (`example`: the command's own use, e.g. "collsel verify --rules rules.conf")."""
    words = list(args.launch)
    if words and words[0] == "--":
        words = words[1:]
    if not words:
        raise InputError("no LAUNCH: give the command that starts your program after --, e.g. "
                         f"`{example} -- mpirun -n 4 ./app`")
    return words


class HelpFormatter(argparse.RawDescriptionHelpFormatter):
    """A long command's help (sweep, tune): the description as written, the options in 100
    columns (the description's width)."""

    def __init__(self, prog):
        super().__init__(prog, width=100, max_help_position=28)


def request_of(record, args):
    """The pipeline's request `record` (a dataclass whose every field is a flag) of the parsed
    flags `args`, each as given."""
    return record(**{f.name: getattr(args, f.name) for f in dataclasses.fields(record)})
