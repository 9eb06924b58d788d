"""The `collsel` command: one console script, subcommands registered by the modules that own
them."""
import argparse
import gc
import importlib
import os
import sys

from collsel import __version__
from collsel.commands import COMMANDS, add_command
from collsel.errors import CollselError, printable

DESCRIPTION = """\
Pick the algorithm (and segment size) an MPI collective should use for each communicator size
and message size on this machine.

Typical use:
  collsel tune --out tune --budget 30m                  every collective, measured and decided
  collsel sweep --collective bcast --out bcast.csv      measure every Open MPI algorithm
  collsel build bcast.csv --collective bcast --out out/ decision map -> quadtree -> C code
  collsel query out/tree.json --comm-size 8 --msg-size 65536
  collsel build bcast.csv --collective bcast --recommend --out out/  sized by cross-validation

Exit status: 0 success, 1 failure, 2 bad input (the message names the file and line).
"""


class Parser(argparse.ArgumentParser):
    """argparse with bad flags reported like every other bad input: one line, exit status 2
    (argparse's own error prints the whole usage block first)."""

    def error(self, message):
        self.exit(2, f"collsel: error: {printable(self.prog)}: {printable(message)} "
                     f"(see {self.prog} --help)\n")


def parser(argv=None):
    """The command line parser. Given the arguments, only the named command's module is
    imported (importing all fifteen costs each command ~0.1-0.2 s); with no command named
    (`collsel --help`, `--version`, a mistyped command) none is: the commands are listed from
    collsel.commands.COMMANDS, which is all --help and argparse's error show of them. Without
    arguments (the docs and tests read every option), every command's parser."""
    top = Parser(prog="collsel", description=DESCRIPTION,
                 formatter_class=argparse.RawDescriptionHelpFormatter)
    top.add_argument("--version", action="version", version=f"collsel {__version__}")
    sub = top.add_subparsers(title="commands", metavar="COMMAND")
    named = argv[0] if argv else None
    for command, (module, _) in COMMANDS.items():
        if argv is None or command == named:
            importlib.import_module(module).register(sub)
        elif named not in COMMANDS:
            add_command(sub, command)       # listed; this run never parses its options
    return top


def main(argv=None):
    argv = sys.argv[1:] if argv is None else list(argv)
    top = parser(argv)
    args = top.parse_args(argv)
    if not hasattr(args, "run"):
        top.print_help(sys.stderr)       # no command named: the list of commands
        return 2
    # What the imports made lives as long as the process: out of the cyclic collector's sight,
    # its full passes do not walk the modules' objects again and again (a report's plots and
    # model selection allocate enough to run many).
    gc.freeze()
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
