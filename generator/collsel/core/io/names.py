"""Collective names as people type them: `MPI_Allreduce`, `Allreduce`, `reduce-scatter` are the
collective `allreduce` / `reduce_scatter`; a name that is none of them gets the closest known
one suggested ("did you mean 'allreduce'?", difflib). Every place a collective name is given
on the command line goes through here (core.mpi.algorithms.check_collective, the sweep's and
tune's checks, the commands' --collective)."""
import difflib
import re

MPI_PREFIX = "mpi_"
# What a table row, a tree.json and emitted C may hold as a collective's name: lowercase letters,
# digits and _, at most 24 characters (coll/tuned's longest, reduce_scatter_block, has 20; emitted
# C derives identifiers and a header guard from it). schemas/tree.schema.json states the same
# pattern, anchored (JSON Schema has no fullmatch); a test holds the two equal.
COLLECTIVE_NAME = re.compile(r"[a-z][a-z0-9_]{0,23}")


def normalise(text) -> str:
    """'MPI_Reduce_scatter' -> 'reduce_scatter': case, an MPI_ prefix and '-' for '_' ignored."""
    name = str(text).strip().lower().replace("-", "_")
    return name[len(MPI_PREFIX):] if name.startswith(MPI_PREFIX) else name


def canonical(text, known) -> str:
    """The known collective `text` names (see normalise), or `text` unchanged when it names
    none (the caller refuses it, with `did_you_mean`)."""
    name = normalise(text)
    return name if name in known else text


# MPI collectives that are not among collsel's (no coll/tuned algorithms to choose from): the
# closest known name would be wrong for them (alltoallw is no misspelt alltoall, nor gatherv a
# misspelt gather), so they are named as what they are. Non-blocking (i...) and persistent
# (..._init) forms alike.
OTHER_MPI = ("alltoallw", "gatherv", "scatterv", "reduce_local", "neighbor_allgather",
             "neighbor_allgatherv", "neighbor_alltoall", "neighbor_alltoallv",
             "neighbor_alltoallw")


def did_you_mean(text, known) -> str:
    """" (did you mean 'allreduce'?)" for the closest of `known` to `text`, or "" when none is
    close (difflib's ratio below 0.6); for another MPI collective, that collsel has none of its
    algorithms."""
    name = normalise(text)
    base = name[:-len("_init")] if name.endswith("_init") else name
    blocking = base[1:] if base.startswith("i") else base
    if base in OTHER_MPI or (name != blocking and (blocking in known
                                                   or blocking in OTHER_MPI)):
        return " (an MPI collective collsel has no algorithms for)"
    close = difflib.get_close_matches(name, sorted(known), n=1, cutoff=0.6)
    return f" (did you mean '{close[0]}'?)" if close else ""
