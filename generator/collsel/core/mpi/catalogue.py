"""The installed Open MPI's coll/tuned catalogue, read from `ompi_info --parsable` text, and its
differences from the built-in table (core.mpi.algorithms.TUNED_ALGORITHMS / TUNED_PARAMETERS): an
algorithm the MPI has and the table lacks is reported, never silently missed."""
import re
from dataclasses import dataclass, field
from typing import Optional

from collsel.core.mpi.algorithms import TUNED_ALGORITHMS, TUNED_PARAMETERS
from collsel.errors import InputError

# mca:coll:tuned:param:coll_tuned_bcast_algorithm:enumerator:value:6:binomial
_ENUMERATOR = re.compile(r"mca:coll:tuned:param:coll_tuned_(\w+?)_algorithm:enumerator:value:"
                         r"(\d+):(.+)")
# mca:coll:tuned:param:coll_tuned_bcast_algorithm_segmentsize:value:0
_PARAMETER = re.compile(r"mca:coll:tuned:param:coll_tuned_(\w+?)_algorithm_(\w+):value:")
# mca:coll:tuned:version:"component:4.1.4"
_VERSION = re.compile(r'mca:coll:tuned:version:"component:([^"]+)"')
# plain `ompi_info`: "MCA coll: tuned (MCA v2.1.0, API v2.0.0, Component v4.1.2)"
_PLAIN = re.compile(r"MCA coll: tuned \(.*Component v([^)\s]+)\)")


@dataclass
class Catalogue:
    algorithms: dict = field(default_factory=dict)   # collective -> {id: name}
    parameters: dict = field(default_factory=dict)   # collective -> {suffix}
    version: Optional[str] = None                    # the coll/tuned component's version


def parse_ompi_info(text, where):
    """The catalogue in `ompi_info --param coll tuned --level 9 --parsable` output; InputError
    (naming `where`) when the text holds no coll/tuned algorithm at all."""
    cat = Catalogue()
    for line in text.splitlines():
        m = _VERSION.fullmatch(line.strip())
        if m:
            cat.version = m[1]
            continue
        m = _ENUMERATOR.fullmatch(line.strip())
        if m:
            cat.algorithms.setdefault(m[1], {})[int(m[2])] = m[3]
            continue
        m = _PARAMETER.match(line.strip())
        if m:
            cat.parameters.setdefault(m[1], set()).add(m[2])
    if not cat.algorithms:
        plain = _PLAIN.search(text)
        seen = (f" (plain ompi_info output of coll/tuned {plain[1]}: it lists components, not "
                "their parameters)" if plain else "")
        raise InputError(f"{where}: no coll_tuned_<coll>_algorithm enumerators{seen}; give the "
                         "output of 'ompi_info --param coll tuned --level 9 --parsable'")
    return cat


def compared(cat):
    """What the comparison covers, in one line: collectives, algorithm ids and names, and the
    per-collective parameter variables, counted on both sides."""
    version = f"coll/tuned {cat.version}" if cat.version else "coll/tuned, version not listed"
    return (f"compared ({version}): the algorithm ids and names of coll_tuned_<coll>_algorithm "
            f"({_count(TUNED_ALGORITHMS)} in the table over {len(TUNED_ALGORITHMS)} "
            f"collectives, {_count(cat.algorithms)} in the MPI over {len(cat.algorithms)}) and "
            f"the variables coll_tuned_<coll>_algorithm_<parameter> "
            f"({_count(TUNED_PARAMETERS)} in the table, {_count(cat.parameters)} in the MPI)")


def _count(per_collective):
    return sum(len(v) for v in per_collective.values())


def differences(cat):
    """One line per difference between the MPI's catalogue and the built-in table, sorted by
    collective; [] when they agree."""
    lines = []
    for coll in sorted(set(cat.algorithms) | set(TUNED_ALGORITHMS)):
        ours, theirs = TUNED_ALGORITHMS.get(coll), cat.algorithms.get(coll)
        if ours is None:
            lines.append(f"{coll}: the MPI has this collective ({len(theirs)} algorithms: "
                         f"{_listing(theirs)}), the table lacks it")
            continue
        if theirs is None:
            lines.append(f"{coll}: in the table, the MPI has no coll_tuned_{coll}_algorithm")
            continue
        for alg in sorted(set(ours) | set(theirs)):
            if alg not in ours:
                lines.append(f"{coll}: algorithm {alg} ({theirs[alg]}) in the MPI, the table "
                             "lacks it")
            elif alg not in theirs:
                lines.append(f"{coll}: algorithm {alg} ({ours[alg]}) in the table, not in the MPI")
            elif ours[alg] != theirs[alg]:
                lines.append(f"{coll}: algorithm {alg} is '{theirs[alg]}' in the MPI, "
                             f"'{ours[alg]}' in the table")
        mpi_params = cat.parameters.get(coll, set())
        table_params = TUNED_PARAMETERS.get(coll, frozenset())
        for suffix in sorted(mpi_params - table_params):
            lines.append(f"{coll}: parameter coll_tuned_{coll}_algorithm_{suffix} in the MPI, "
                         "the table lacks it")
        for suffix in sorted(table_params - mpi_params):
            lines.append(f"{coll}: parameter coll_tuned_{coll}_algorithm_{suffix} in the table, "
                         "not in the MPI")
    return lines


def _listing(algs):
    return ", ".join(f"{k}:{v}" for k, v in sorted(algs.items()))


# --- MPICH: MPIR_CVAR_<COLL>_INTRA_ALGORITHM, read through MPI_T ------------------------------

# MPIR_CVAR_BCAST_INTRA_ALGORITHM<TAB>Variable to select bcast algorithmauto - Internal ...
_MPICH_CVAR = re.compile(r"MPIR_CVAR_([A-Z_]+?)_INTRA_ALGORITHM\t(.*)")
# nonblocking (I...) and neighbourhood variables, and the ch4 device's POSIX and OFI (5.0) ones:
# not selected by the MPIR-level selection file collsel emits
_MPICH_SKIPPED = re.compile(r"I[A-Z]|NEIGHBOR_|INEIGHBOR_|[A-Z_]+_(POSIX|OFI)$")
# An entry of the description: "name   - text"; MPI_T strips the newlines, so a name is glued to
# the text before it ("...algorithmauto - Internal ...Treenb - Force ...").
_ENTRY = re.compile(r" +- ")


def mpich_descriptions(text, where):
    """{collective: description} of the MPIR_CVAR_<COLL>_INTRA_ALGORITHM lines (blocking
    collectives only); InputError when there is none."""
    out = {}
    for line in text.splitlines():
        m = _MPICH_CVAR.fullmatch(line.strip("\n"))
        if m and not _MPICH_SKIPPED.match(m[1]):
            out[m[1].lower()] = m[2]
    if not out:
        raise InputError(f"{where}: no MPIR_CVAR_<COLL>_INTRA_ALGORITHM variables; give the "
                         "output of collsel's mpi_t_cvars program (NAME<TAB>DESCRIPTION lines)")
    return out


def _described_names(description, ours):
    """[(entry number, name or None, tail)] of a description: entry i's name is the table's
    name i when the text before the i-th " - " ends with it, not after '_' (so `replace` is not
    `pairwise_sendrecv_replace`; a letter may precede it: the names are glued to the text
    before), else None with the text's tail to show."""
    parts = _ENTRY.split(description)[:-1]      # the last part is the last entry's text only
    out = []
    for i, part in enumerate(parts):
        name = ours.get(i)
        ok = name is not None and part.endswith(name) and part[:-len(name)][-1:] != "_"
        out.append((i, name if ok else None, part[-40:]))
    return out


def mpich_differences(descriptions, tables):
    """One line per difference between MPICH's descriptions and `tables` ({collective: {id:
    name}}, ids in the description's order), sorted by collective; [] when they agree."""
    lines = []
    for coll in sorted(set(descriptions) | set(tables)):
        ours, desc = tables.get(coll), descriptions.get(coll)
        if ours is None:
            lines.append(f"{coll}: the MPI has MPIR_CVAR_{coll.upper()}_INTRA_ALGORITHM "
                         f"({desc[:120]}...), the table lacks it")
            continue
        if desc is None:
            lines.append(f"{coll}: in the table, the MPI has no "
                         f"MPIR_CVAR_{coll.upper()}_INTRA_ALGORITHM")
            continue
        entries = _described_names(desc, ours)
        for i, name, tail in entries:
            if name is None:
                lines.append(f"{coll}: entry {i} of the MPI's description (ending '...{tail}') "
                             f"is not the table's {ours.get(i, 'nothing')!r}")
        for i in sorted(set(ours) - {i for i, _, _ in entries}):
            lines.append(f"{coll}: algorithm {i} ({ours[i]}) in the table, not in the MPI")
    return lines


def mpich_compared(descriptions, tables):
    return (f"compared (MPICH, MPI_T): the entries of MPIR_CVAR_<COLL>_INTRA_ALGORITHM "
            f"({_count(tables)} in the table over {len(tables)} collectives, "
            f"{sum(len(_ENTRY.findall(d)) for d in descriptions.values())} in the MPI over "
            f"{len(descriptions)}; nonblocking and neighbourhood collectives not compared)")
