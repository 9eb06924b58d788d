"""The canonical tables a command is given (TABLE...), read, combined and narrowed to one
collective with its decision map: what `collsel build` (collsel.pipeline) and the other table
commands (commands/options.py) start from. A warning, such as tables that measure different
statistics, goes to stderr as the command's own."""
from __future__ import annotations

import sys
from collections.abc import Sequence
from dataclasses import dataclass

from collsel.core.io import names, statistic
from collsel.core.maps import decision_map, table
from collsel.core.mpi import algorithms
from collsel.errors import InputError, printable


@dataclass(frozen=True)
class Loaded:
    """One collective's rows of the tables, and its decision map."""
    table: table.PerfTable
    dmap: decision_map.DecisionMap
    collective: str


def read_tables(paths: Sequence[str], parts: list | None = None) -> table.PerfTable:
    """The tables combined (`parts`: the same tables, already read one by one); a warning on
    stderr, naming the files, when they measure different statistics (core.io.statistic)."""
    combined = table.read_tables(paths) if parts is None else table.combine(parts)
    warning = statistic.mismatch_warning(
        [(s.path, s.metadata.get("statistic")) for s in combined.sources])
    if warning:
        print(f"collsel: warning: {printable(warning)}", file=sys.stderr)
    return combined


def the_collective(tables: table.PerfTable | list, name: str | None = None) -> str:
    """`name`, or the one collective the tables (a table or a list of them) hold (an error
    naming them when several); a collective core.mpi.algorithms does not know is refused, naming
    those it knows (its tree could be neither queried nor emitted)."""
    tables = tables if isinstance(tables, list) else [tables]
    files = ", ".join(s.path for t in tables for s in t.sources)
    where = f"--collective {printable(name)[:40]}" if name is not None else files
    present = sorted({c for t in tables for c in t.collective.tolist()})
    if name is not None:        # 'MPI_Allreduce' as 'allreduce' (core.io.names)
        name = names.canonical(name, algorithms.registry(tables[0].family))
    if name is None:
        if len(present) != 1:
            raise InputError(f"{files}: the tables hold several collectives "
                             f"({', '.join(present)}); choose one with --collective")
        name = present[0]
    elif name not in present:
        return name           # PerfTable.select refuses it, naming the collectives present
    try:
        algorithms.check_collective(name, tables[0].family)
    except InputError as e:
        raise InputError(f"{where}: {e}") from None
    return name


def load(tables: Sequence[str], *, collective: str | None = None,
         settings: decision_map.MapSettings = decision_map.MapSettings(),
         parts: list | None = None) -> Loaded:
    """The rows of `collective` (None: the one the tables hold) and their map under
    `settings` (`parts`: the tables, already read one by one)."""
    combined = read_tables(tables, parts)
    name = the_collective(combined, collective)
    selected = combined.select(name)
    return Loaded(selected, settings.build(selected), name)
