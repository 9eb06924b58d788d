"""The steps under the commands, as typed functions that read and write files and return
records: build one collective's tree from its tables and write `collsel build`'s files
(building.py), render trees for an emit target and write them (emitting.py), write a report
(reporting.py), run a sweep (sweeping.py) and run a whole tune (tuning.py). The commands parse
the flags into these functions' arguments or requests and print the records they return; the
tune calls the same functions for every collective, so what tune writes is what the commands
write. tune/ is `collsel tune`'s own part: its request and plan, its stages, its directory and
how its budget is shared.

A step's warnings that arise on the way (tables that measure different statistics) go to stderr
as every command prints them, and so do a report's, a sweep's and a tune's progress lines.
"""
import importlib

# Each name is imported from its module when first used, so a command loads only its own step
# (a sweep's launchers and a report's plots are not a build's).
_MODULE_OF = {
    **dict.fromkeys(("BuildResult", "build", "build_recommended", "leaf_methods",
                     "render_files", "third_axis_block"), "building"),
    **dict.fromkeys(("emit", "emit_options", "mpich_base", "write_emitted"), "emitting"),
    **dict.fromkeys(("CollectiveReport", "ReportRequest", "ReportResult", "report"),
                    "reporting"),
    **dict.fromkeys(("SweepRequest", "SweepResult", "sweep"), "sweeping"),
    **dict.fromkeys(("Printers", "TuneRequest", "TuneResult", "run_tune"), "tuning"),
}
__all__ = sorted(_MODULE_OF)


def __getattr__(name):
    if name not in _MODULE_OF:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{_MODULE_OF[name]}"), name)


def __dir__():
    return __all__
