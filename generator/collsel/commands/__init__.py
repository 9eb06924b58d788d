"""The `collsel` subcommands, one module each: the only layer that reads flags (argparse) and
prints. Each module has register(subparsers), which adds its subcommand with add_command."""

# Every subcommand: its module and the line `collsel --help` shows for it. The line lives here,
# not in the module, so that `collsel --help` (and `--version`, a mistyped command) lists the
# commands without importing their modules, which import NumPy and more (0.3 s of a 0.35 s
# `collsel --help`); cli.py imports a module only when its command runs.
COMMANDS = {
    "build": ("collsel.commands.build",
              "performance table -> decision map -> tree -> stats and C"),
    "query": ("collsel.commands.query", "decision of a tree.json for given P and m"),
    "stats": ("collsel.commands.stats", "tree statistics and penalties for many limits"),
    "sweep": ("collsel.commands.sweep", "measure MPI algorithms into a table"),
    "baseline": ("collsel.commands.baseline",
                 "penalty of the MPI's own decision vs the best measured method"),
    "compare": ("collsel.commands.compare",
                "score one table's exact decisions on another table's times"),
    "ingest": ("collsel.commands.ingest", "read existing benchmark results into a table"),
    "emit": ("collsel.commands.emit", "tree.json -> C, rules files, binary blob, ..."),
    "check-rules": ("collsel.commands.check_rules",
                    "validate an Open MPI coll/tuned rules file; evaluate it"),
    "verify": ("collsel.commands.verify",
               "run a program under a probe: did Open MPI run what the rules file says?"),
    "report": ("collsel.commands.report",
               "penalty-analysis report: index.html, report.json, PNG/SVG plots"),
    "model": ("collsel.commands.model", "analytical performance models (fit, predict, validate)"),
    "cluster": ("collsel.commands.cluster",
                "emulated cluster: rehearse multi-node tuning on one machine (up, down, status)"),
    "hier": ("collsel.commands.hier", "hierarchical methods against flat ones: speedup, best G "
             "vs the model's G, split cost"),
    "catalogue": ("collsel.commands.catalogue",
                  "check the algorithm table against the installed MPI"),
    "tune": ("collsel.commands.tune",
             "sweep, build, emit and report every collective within a time budget, resumable"),
    "profile": ("collsel.commands.profile", "run an MPI program under libcollsel's census: which "
                "collectives, P and m take its time"),
    "evaluate": ("collsel.commands.evaluate", "held-out penalty of build configurations on a table "
                 "(the protocol recommendations are judged by)"),
}


def add_command(subparsers, name, **kw):
    """The parser of subcommand `name`, listed with its line from COMMANDS."""
    return subparsers.add_parser(name, help=COMMANDS[name][1], **kw)
