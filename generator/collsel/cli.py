"""The `collsel` command: one console script, subcommands registered by the modules that own them."""
import argparse
import importlib
import os
import sys

from collsel import __version__
from collsel.errors import CollselError, printable

# Each module has `register(subparsers)`, which adds its subcommands with `set_defaults(run=...)`.
COMMAND_MODULES = (
    "collsel.commands.build",        # build
    "collsel.commands.query",        # query
    "collsel.commands.stats",        # stats
    "collsel.commands.sweep",        # sweep
    "collsel.commands.baseline",     # baseline
    "collsel.commands.compare",      # compare
    "collsel.commands.ingest",       # ingest
    "collsel.commands.emit",         # emit
    "collsel.commands.check_rules",  # check-rules
    "collsel.commands.report",       # report
    "collsel.commands.model",        # model fit/predict/validate/paper
    "collsel.commands.cluster",      # cluster up/down/status
    "collsel.commands.hier",         # hier: hierarchical vs flat methods
    "collsel.commands.catalogue",    # catalogue: the algorithm table vs ompi_info
    "collsel.commands.tune",         # tune: every collective within a budget, resumable
)

DESCRIPTION = """\
Pick the algorithm (and segment size) an MPI collective should use for each communicator size
and message size on this machine.

Typical use:
  collsel sweep --collective bcast --out bcast.csv      measure every Open MPI algorithm
  collsel build bcast.csv --collective bcast --out out/ decision map -> quadtree -> C code
  collsel query out/tree.json --comm-size 8 --msg-size 65536
  collsel build bcast.csv --collective bcast --recommend --out out/   the size that holds out of sample

Exit status: 0 success, 1 failure, 2 bad input (the message names the file and line).
"""


class Parser(argparse.ArgumentParser):
    """argparse with bad flags reported like every other bad input: one line, exit status 2
    (argparse's own error prints the whole usage block first)."""

    def error(self, message):
        self.exit(2, f"collsel: error: {printable(self.prog)}: {printable(message)} "
                     f"(see {self.prog} --help)\n")


def parser():
    top = Parser(prog="collsel", description=DESCRIPTION,
                 formatter_class=argparse.RawDescriptionHelpFormatter)
    top.add_argument("--version", action="version", version=f"collsel {__version__}")
    sub = top.add_subparsers(title="commands", metavar="COMMAND")
    for name in COMMAND_MODULES:
        importlib.import_module(name).register(sub)
    return top


def main(argv=None):
    args = parser().parse_args(argv)
    if not hasattr(args, "run"):
        parser().print_help(sys.stderr)
        return 2
    try:
        return args.run(args) or 0
    except CollselError as e:
        print(f"collsel: error: {printable(e)}", file=sys.stderr)
        return e.exit_status
    except KeyboardInterrupt:
        print("collsel: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        # The reader went away (`collsel baseline t.csv | head`): stop quietly, as cat does.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141


if __name__ == "__main__":
    sys.exit(main())
