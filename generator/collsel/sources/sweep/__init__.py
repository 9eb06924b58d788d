"""Measuring a real MPI into a table (collsel sweep); see docs/design.md."""


def journal_path(table):
    """The journal beside a sweep's table: TABLE.launches. Defined here, not in journal.py, so
    that the commands that only look for it beside a table (build, stats, report) do not import
    the sweep's machinery with it (subprocess, sockets, the benchmark program: ~45 ms)."""
    return table + ".launches"
