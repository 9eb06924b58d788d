"""The steps under the commands, as typed functions that read and write files and return
records: build one collective's tree from its tables and write `collsel build`'s files
(building.py), render trees for an emit target and write them (emitting.py), write a report
(reporting.py) and run a sweep (sweeping.py). The commands parse the flags into these
functions' arguments or requests and print the records they return; `collsel tune` calls the
same functions for every collective, so what tune writes is what the commands write.

A step's warnings that arise on the way (tables that measure different statistics) go to stderr
as every command prints them, and so do a report's and a sweep's progress lines.
"""
from collsel.pipeline.building import (BuildResult, build, build_recommended, leaf_methods,
                                       render_files, third_axis_block)
from collsel.pipeline.emitting import emit, emit_options, mpich_base, write_emitted
from collsel.pipeline.reporting import (CollectiveReport, ReportRequest, ReportResult,
                                        report)
from collsel.pipeline.sweeping import SweepRequest, SweepResult, sweep

__all__ = ["BuildResult", "CollectiveReport", "ReportRequest", "ReportResult", "SweepRequest",
           "SweepResult", "build", "build_recommended", "emit", "emit_options",
           "leaf_methods", "mpich_base", "render_files", "report", "sweep",
           "third_axis_block", "write_emitted"]
