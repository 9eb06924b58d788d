"""The C runtimes' MPI knowledge, generated: runtime/collsel_mpi_table.h from core/mpi/algorithms.py
(collectives, blob names, Open MPI's catalogue, which algorithms need a commutative operation,
MPICH's names, the forcing variables) and
core/mpi/fallbacks.py (Open MPI's refusals per release), through templates/collsel_mpi_table.h.j2.

The header is committed, so a C build needs no Python; `make regen-mpi-table` (or
`python -m collsel.sinks.emit.mpi_table FILE`) rewrites it after the table changed, and
tests/unit/sinks/emit/test_mpi_table.py fails while the committed file differs from `header()`.
The header holds no version or date, so it changes only when the facts do.
"""
import re
import sys

from collsel.core.mpi import algorithms, fallbacks
from collsel.sinks.emit import render

HEADER = "runtime/collsel_mpi_table.h"
_C_NAME = re.compile(r"[a-z][a-z0-9_]*|MPIR_CVAR_[A-Z0-9_]+")   # written between C quotes
_WIDTH = 96                                                       # the runtime's line length
BLOB_NAME_MAX = 16                      # the blob header's collective field (docs/formats/blob.md)


def _name(text):
    """`text` for a C string literal: names only, so no quote or backslash reaches the header."""
    if not _C_NAME.fullmatch(text):
        raise ValueError(f"MPI table: {text!r} is not a name the header may quote")
    return text


def _wrapped(names, indent=8):
    """`"a", "b", ..., NULL,` as lines of at most _WIDTH characters."""
    lines, line = [], ""
    for item in [f'"{_name(n)}",' for n in names] + ["NULL,"]:
        if line and indent + len(line) + 1 + len(item) > _WIDTH:
            lines.append(line)
            line = item
        else:
            line = f"{line} {item}" if line else item
    return lines + [line]


def _mpich_names(collective):
    """The MPICH id -> name list of one collective (ids are 0..n-1 by construction); empty for a
    collective without MPICH names, which libcollsel then passes to MPICH (no-mpich-names)."""
    ids = algorithms.MPICH_ALGORITHMS.get(collective, {})
    assert sorted(ids) == list(range(len(ids))), collective
    return [ids[i] for i in range(len(ids))]


def _refusals(collectives):
    """([{major, minor, list}], [refusal list]): OMPI_RELEASE_REFUSALS, oldest first, each
    release naming the distinct list of its refusals, an entry for every collective (algorithm
    0: none), since the C list is indexed by collective: one refusal per collective and release
    at most."""
    releases, lists = [], []
    for release in sorted(fallbacks.OMPI_RELEASE_REFUSALS, key=_release_key):
        major, minor = _release_key(release)
        entries = {c: {"collective": c, "algorithm": 0, "runs_from": 0, "runs_below": 0}
                   for c in collectives}
        for f in fallbacks.OMPI_RELEASE_REFUSALS[release]:
            if entries[f.collective]["algorithm"]:
                raise ValueError(f"MPI table: Open MPI {release}: a second refusal of "
                                 f"{f.collective}")
            entries[f.collective].update(
                algorithm=f.algorithm, name=algorithms.ALGORITHMS[f.collective][f.algorithm],
                runs_from=f.runs_only[0], runs_below=f.runs_only[1])
        listed = list(entries.values())
        if listed not in lists:
            lists.append(listed)
        releases.append({"major": major, "minor": minor, "list": lists.index(listed)})
    return releases, lists


def _release_key(release):
    """'4.1' -> (4, 1), so releases sort as numbers."""
    return tuple(map(int, release.split(".")))


def context():
    """What the template is rendered from: plain ints and checked names."""
    collectives = algorithms.collectives()
    rows = []
    for c in collectives:
        mpich = _mpich_names(c)
        if len(algorithms.BLOB_NAMES.get(c, c)) > BLOB_NAME_MAX:
            raise ValueError(f"MPI table: {c} needs a BLOB_NAMES entry of at most "
                             f"{BLOB_NAME_MAX} characters (the blob's collective field)")
        rows.append({
            "name": _name(c), "enum": c.upper(),
            "blob_name": _name(algorithms.BLOB_NAMES.get(c, c)),
            "ompi_max": max(algorithms.TUNED_ALGORITHMS[c]),
            "ompi_cvar": _name(algorithms.ompi_algorithm_cvar(c)),
            "mpich_cvar": _name(algorithms.mpich_algorithm_cvar(c)),
            "mpich_names": mpich, "mpich_lines": _wrapped(mpich),
            "mpich_pow2": mpich.index(algorithms.MPICH_POWER_OF_TWO_ONLY[c])
                          if c in algorithms.MPICH_POWER_OF_TWO_ONLY else 0,
            "fan_vars": [_name(v) for v in algorithms.FANINOUT_VARIABLES[c]],
            "commutative_only": sorted(algorithms.COMMUTATIVE_ONLY.get(c, ()))})
    mpich_releases = sorted(algorithms.MPICH_VERSIONS, key=_release_key)
    releases, refusal_lists = _refusals(collectives)
    return {
        "collectives": rows,
        "releases": releases,
        "refusal_lists": refusal_lists,
        "ompi_catalogue": "4.1.4",
        "mpich_first": f"MPICH {mpich_releases[0]}",
        "mpich_releases": ", ".join(mpich_releases[1:]) or "none",
        "mpich_max_ids": max(len(r["mpich_names"]) for r in rows) + 1,   # room for the NULL
        "fan_vars_max": max(len(r["fan_vars"]) for r in rows) + 1,
        "commutative_max": max(len(r["commutative_only"]) for r in rows) + 1,   # and the 0
    }


def header():
    """The text of runtime/collsel_mpi_table.h."""
    return render("collsel_mpi_table.h.j2", **context())


def main(argv):
    if len(argv) != 1:
        print("usage: python -m collsel.sinks.emit.mpi_table FILE  (writes the C header)",
              file=sys.stderr)
        return 2
    with open(argv[0], "w", encoding="ascii") as out:
        out.write(header())
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
