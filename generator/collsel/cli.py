"""The `collsel` command: one console script, subcommands registered by the modules that own them."""
import argparse
import importlib
import os
import sys

from collsel import __version__
from collsel.errors import CollselError, printable

# Each module has `register(subparsers)`, which adds its subcommand (the key) with
# `set_defaults(run=...)`.
COMMAND_MODULES = {
    "build": "collsel.commands.build",
    "query": "collsel.commands.query",
    "stats": "collsel.commands.stats",
    "sweep": "collsel.commands.sweep",
    "baseline": "collsel.commands.baseline",
    "compare": "collsel.commands.compare",
    "ingest": "collsel.commands.ingest",
    "emit": "collsel.commands.emit",
    "check-rules": "collsel.commands.check_rules",
    "verify": "collsel.commands.verify",        # did the MPI run what the file says
    "report": "collsel.commands.report",
    "model": "collsel.commands.model",          # model fit/predict/validate/paper
    "cluster": "collsel.commands.cluster",      # cluster up/down/status
    "hier": "collsel.commands.hier",            # hierarchical vs flat methods
    "catalogue": "collsel.commands.catalogue",  # the algorithm table vs ompi_info
    "tune": "collsel.commands.tune",            # every collective within a budget, resumable
    "evaluate": "collsel.commands.evaluate",    # held-out evaluation of build configurations
}

DESCRIPTION = """\
Pick the algorithm (and segment size) an MPI collective should use for each communicator size
and message size on this machine.

Typical use:
  collsel tune --out tune --budget 30m                  every collective, measured and decided
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


def parser(argv=None):
    """The command line parser; given the arguments, with only the named command's module
    imported (importing all fifteen costs each command ~0.1-0.2 s), else with every command."""
    top = Parser(prog="collsel", description=DESCRIPTION,
                 formatter_class=argparse.RawDescriptionHelpFormatter)
    top.add_argument("--version", action="version", version=f"collsel {__version__}")
    sub = top.add_subparsers(title="commands", metavar="COMMAND")
    named = argv[0] if argv else None
    for command, module in COMMAND_MODULES.items():
        if named not in COMMAND_MODULES or command == named:
            importlib.import_module(module).register(sub)
    return top


def main(argv=None):
    argv = sys.argv[1:] if argv is None else list(argv)
    args = parser(argv).parse_args(argv)
    if not hasattr(args, "run"):
        parser().print_help(sys.stderr)
        return 2
    try:
        return args.run(args) or 0
    except CollselError as e:
        print(f"collsel: error: {printable(e)}", file=sys.stderr)
        return e.exit_status
    except KeyboardInterrupt as e:
        # a command that can continue says how in the exception (sweep, tune: --resume)
        print("collsel: interrupted" + (f"; {printable(e)}" if str(e) else ""), file=sys.stderr)
        return 130
    except BrokenPipeError:
        # The reader went away (`collsel baseline t.csv | head`): stop quietly, as cat does.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141


if __name__ == "__main__":
    sys.exit(main())
