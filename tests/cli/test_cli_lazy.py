"""`collsel --help` and `--version` answer without loading the heavy libraries (issue "Lean":
they took 0.35-0.86 s, nearly all of it importing every command's module and, through them,
NumPy, SciPy, Jinja2 ...). Proved by what a fresh interpreter has imported, not by a timing."""
import subprocess
import sys

import pytest

HEAVY = ("numpy", "scipy", "matplotlib", "jinja2", "jsonschema")

# Runs collsel.cli.main in a fresh interpreter, then prints the heavy top-level packages and the
# command modules it imported.
PROBE = """\
import sys
from collsel import cli
try:
    status = cli.main(sys.argv[1:])
except SystemExit as e:
    status = e.code
heavy = sorted({m.split('.')[0] for m in sys.modules} & set(%r))
commands = sorted(m for m in sys.modules if m.startswith('collsel.commands.'))
print(repr((status, heavy, commands)))
""" % (HEAVY,)


def imported(*args):
    r = subprocess.run([sys.executable, "-c", PROBE, *args], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    return eval(r.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("args, status", [(["--help"], 0), (["--version"], 0), (["-h"], 0),
                                          ([], 2), (["biuld"], 2)])
def test_no_command_named_imports_nothing_heavy(args, status):
    """No command named: the list of commands comes from collsel.commands.COMMANDS, so no
    command module is imported, and none of the heavy libraries."""
    got_status, heavy, commands = imported(*args)
    assert (got_status, heavy, commands) == (status, [], [])


def test_a_named_command_still_imports_what_it_needs():
    """The check above can fail: naming a command imports its module, and build's NumPy."""
    status, heavy, commands = imported("build", "--help")
    assert status == 0 and "numpy" in heavy
    assert "collsel.commands.build" in commands and "collsel.commands.report" not in commands


def test_help_lists_every_command_with_its_line(capsys):
    """The listing without the modules is the one their parsers make (every command, its line
    from COMMANDS, in COMMANDS' order)."""
    from collsel import cli
    from collsel.commands import COMMANDS
    with pytest.raises(SystemExit):
        cli.main(["--help"])
    light = capsys.readouterr().out
    full = cli.parser().format_help()
    assert light == full
    assert all(f"    {name}" in light and " ".join(line.split()[:3]) in light
               for name, (_, line) in COMMANDS.items())
