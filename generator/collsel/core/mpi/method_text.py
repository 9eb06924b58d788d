"""Methods and the MPI's default as people read them, in every command's text output.

An algorithm id means nothing without its family: 1 is MPICH's binomial but Open MPI's
basic_linear. So a method is always shown by the name its tree's (or table's) family gives it,
e.g. "binomial", "pipeline, 8 KiB segments", "chain, 1 KiB segments, 4 chains",
"defer (Open MPI's default)". Machine-readable outputs keep the ids (and may add these names).
"""
from collsel.core.mpi import algorithms

MPI_NAMES = {"openmpi": "Open MPI", "mpich": "MPICH", "intel": "Intel MPI"}

# Algorithms whose faninout is a number of chains (core.mpi.algorithms.USES_FANINOUT: chain).
_CHAINS = "chain"


def mpi_name(family=algorithms.DEFAULT_FAMILY) -> str:
    """'Open MPI' or 'MPICH'."""
    return MPI_NAMES[algorithms.check_family(family)]


def default_name(family=algorithms.DEFAULT_FAMILY) -> str:
    """What algorithm 0 is: "Open MPI's default" or "MPICH's default"."""
    return f"{mpi_name(family)}'s default"


_BYTE_UNITS = ((30, "GiB", "G"), (20, "MiB", "M"), (10, "KiB", "K"))


def size_text(n, compact=False) -> str:
    """Bytes as a person writes them, in the largest unit that divides them: '8 KiB', '1 MiB',
    '1000 B'; `compact` (a figure's tick labels): '8K', '1M', '1000'."""
    for shift, unit, short in _BYTE_UNITS:
        if n >= 1 << shift and n % (1 << shift) == 0:
            return f"{n >> shift}{short}" if compact else f"{n >> shift} {unit}"
    return str(n) if compact else f"{n} B"


def _algorithm(collective, alg, family) -> str:
    names = algorithms.registry(family).get(collective, {})
    return default_name(family) if alg == algorithms.BASELINE_ALGORITHM \
        else names.get(alg, f"algorithm {alg}")


def method_text(collective, method, family=algorithms.DEFAULT_FAMILY) -> str:
    """The method by name, with its segment size and fan-in/out when it has them."""
    if method.algorithm == algorithms.BASELINE_ALGORITHM:
        return f"defer ({default_name(family)})"
    h = algorithms.hier_parts(method.algorithm) if family == "openmpi" else None
    if h:
        return (f"hierarchical, {h.groups} groups: {_algorithm(collective, h.inner, family)} "
                f"within groups, {_algorithm(collective, h.outer, family)} among their leaders")
    name = _algorithm(collective, method.algorithm, family)
    parts = [name]
    if method.segsize:
        parts.append(f"{size_text(method.segsize)} segments")
    if method.faninout:
        parts.append(f"{method.faninout} chains" if name == _CHAINS
                     else f"fan-in/out {method.faninout}")
    return ", ".join(parts)


def method_ids(method) -> str:
    """The ids behind a name, for people who also read rules files: 'alg 3, seg 8192, fan 0'."""
    return f"alg {method.algorithm}, seg {method.segsize}, fan {method.faninout}"


def leaf_method_counts(t, methods) -> list:
    """[(Method, number of leaves holding it)] of tree t (core.trees.tree.TreeArrays) whose methods
    index `methods`."""
    used = t.method[t.is_leaf()]
    return [(methods[i], int((used == i).sum())) for i in sorted(set(used.tolist()))]


def leaves_text(n) -> str:
    return count_text(n, "leaf", "leaves")


def count_text(n, singular, plural=None) -> str:
    """'1 collective', '2 collectives' (never '1 collectives')."""
    return f"{n} {singular if n == 1 else plural or singular + 's'}"


def leaf_methods_text(collective, counts, family=algorithms.DEFAULT_FAMILY, limit=None) -> str:
    """'binomial: 12 leaves; pipeline, 8 KiB segments: 3 leaves' from [(Method, leaves)],
    most leaves first (then by method, so the text is deterministic); beyond `limit` methods,
    the rest counted ('; 5 more methods: 9 leaves')."""
    return _ranked_text(collective, _ranked(counts), family, limit,
                        lambda n: f": {leaves_text(n)}")


def chosen_text(collective, counts, family=algorithms.DEFAULT_FAMILY, limit=None) -> str:
    """What a tree decides, in one phrase, from [(Method, leaves)]: "defer: Open MPI's default"
    when every leaf defers (deploying it changes nothing), "binomial everywhere" for one method,
    else "linear (10 leaves); binary, 128 KiB segments (5 leaves)", most leaves first, beyond
    `limit` methods the rest counted. tune's summary and `make demo` print it."""
    ranked = _ranked(counts)
    if all(m.algorithm == algorithms.BASELINE_ALGORITHM for m, _ in ranked):
        return f"defer: {default_name(family)}"
    if len(ranked) == 1:
        return f"{method_text(collective, ranked[0][0], family)} everywhere"
    return _ranked_text(collective, ranked, family, limit, lambda n: f" ({leaves_text(n)})")


def _ranked(counts) -> list:
    """[(Method, leaves)] most leaves first, then by method (so the text is deterministic)."""
    return sorted(counts, key=lambda mc: (-mc[1], mc[0]))


def _ranked_text(collective, ranked, family, limit, leaves) -> str:
    """The methods of `ranked` by name joined by '; ', each followed by `leaves` of its leaf
    count; beyond `limit` methods, the rest counted as one."""
    shown, rest = ranked[:limit], ranked[len(ranked[:limit]):]
    text = "; ".join(f"{method_text(collective, m, family)}{leaves(n)}" for m, n in shown)
    if rest:
        text += f"; {len(rest)} more methods{leaves(sum(n for _, n in rest))}"
    return text


def stats_counts(leaf_methods) -> list:
    """[(Method, leaves)] from stats.json's `leaf_methods`."""
    return [(algorithms.Method(m["algorithm"], m["segsize"], m["faninout"]), m["leaves"])
            for m in leaf_methods]
