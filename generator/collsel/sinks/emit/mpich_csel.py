"""What MPICH's collective selection (csel, 4.0.2 and 5.0.2) can test, per collective, for
`collsel emit --target mpich-json`: the MPIR_ function of each MPICH algorithm name, the message
quantity csel compares, the conditions an algorithm needs beyond what the benchmark varied, the
parameters a leaf must give, and which MPICH release a base file is.

Message size (src/mpi/coll/src/csel.c, get_avg_msgsize / get_total_msgsize). collsel's m is the
quantity Open MPI's fixed decision computes (docs/guide/collectives.md; the benchmark's 1-byte
elements and equal counts). csel compares, per collective:
  avg_msg_size   = type size x count            bcast, reduce, allreduce; alltoall: one block
                                                 (type size x sendcount)      -> m
  total_msg_size = the sum over ranks            allgather, allgatherv, gather, scatter,
                                                 reduce_scatter_block, alltoallv -> P x m;
                                                 reduce_scatter (sum of recvcounts) -> m
  nothing                                        barrier, scan, exscan (csel defines neither
                                                 quantity for them: a test would assert)
For gather and scatter csel multiplies the count by P without the type size, which equals the
bytes for the benchmark's 1-byte elements only (a note says so).

Guards. The benchmark measures each algorithm on a commutative built-in operation, without
MPI_IN_PLACE, on one node, at the measured P; MPICH refuses (MPIR_CVAR_COLLECTIVE_FALLBACK) an
algorithm whose condition a call breaks, but a selection file's choice is not checked: the
algorithm runs and may be wrong. So a leaf of such an algorithm tests the condition first and
otherwise runs FALLBACK (MPICH's own decision, the base file's subtree; for the two reduce-scatter
based reductions the algorithm MPICH's own generic.json falls back to). The conditions are
MPICH 4.0.2's fallback checks (src/mpi/coll/mpir_coll.c) and, for the algorithms 5.0 adds, the
`restrictions` of 5.0's src/mpi/coll/coll_algorithms.txt (read at v5.0.1, whose names are
5.0.2's), written in csel's keys.

Parameters. 5.0's csel container reads a parameterised algorithm's settings (radix k, tree type,
...) from the keys below its leaf and leaves absent ones uninitialised (csel_container.c of
5.0.1: MPL_malloc, set only from the keys), so each such leaf names them all: MPICH's defaults,
the CVAR defaults a forced run (the benchmark's) uses; MPICH's own generic.json writes its
k_dissemination leaf the same way ("k=2").

Release. A base file's MPICH release is the newest one (algorithms.MPICH_VERSIONS) some of whose
own algorithms (no earlier release has them) the file names: 5.0.2's generic.json names
k_dissemination, 4.0.2's none of 5.0's additions.
"""
import re

from collsel.core.mpi import algorithms

AVG, TOTAL = "avg_msg_size", "total_msg_size"
IDENTITY, TIMES_P = "m", "P·m"

# collective -> (the key csel compares, how it follows from m and P); None: csel tests no size
MESSAGE = {
    "bcast": (AVG, IDENTITY), "reduce": (AVG, IDENTITY), "allreduce": (AVG, IDENTITY),
    "alltoall": (AVG, IDENTITY), "reduce_scatter": (TOTAL, IDENTITY),
    "allgather": (TOTAL, TIMES_P), "allgatherv": (TOTAL, TIMES_P), "gather": (TOTAL, TIMES_P),
    "scatter": (TOTAL, TIMES_P), "reduce_scatter_block": (TOTAL, TIMES_P),
    "alltoallv": (TOTAL, TIMES_P),
    "barrier": None, "scan": None, "exscan": None,
}

# a guard's fallback: MPICH's own decision of the collective (the base file's intra subtree)
OWN_DECISION = "auto"

_PARENT = ("comm_hierarchy=parent", True)
_COMMUTATIVE = ("is_commutative=yes", True)
_POW2 = ("comm_size=pow2", True)
_NOT_IN_PLACE = ("is_sendbuf_inplace=no", True)
_IN_PLACE = ("is_sendbuf_inplace=yes", True)
_BUILT_IN_AND_COUNT = [("is_op_built_in=yes", True), ("count<pow2", False)]

# (collective, MPICH name) -> ([(csel key, proceed when it holds)], fallback MPICH name or
# OWN_DECISION); an algorithm absent here needs nothing.
GUARDS = {
    ("allreduce", "smp"): ([_COMMUTATIVE, _PARENT], OWN_DECISION),
    ("allreduce", "reduce_scatter_allgather"): (_BUILT_IN_AND_COUNT, "recursive_doubling"),
    ("reduce", "smp"): ([_COMMUTATIVE, _PARENT], OWN_DECISION),
    ("reduce", "reduce_scatter_gather"): (_BUILT_IN_AND_COUNT, "binomial"),
    ("bcast", "smp"): ([_PARENT], OWN_DECISION),
    ("barrier", "smp"): ([_PARENT], OWN_DECISION),
    # MPICH's own file takes scan smp on this alone: csel cannot test a scan's operation
    ("scan", "smp"): ([("is_node_consecutive=yes", True)], OWN_DECISION),
    ("allgather", "recursive_doubling"): ([_POW2], OWN_DECISION),
    ("allgatherv", "recursive_doubling"): ([_POW2], OWN_DECISION),
    **{("alltoall", a): ([_NOT_IN_PLACE], OWN_DECISION)
       for a in ("brucks", "pairwise", "scattered")},
    ("alltoall", "pairwise_sendrecv_replace"): ([_IN_PLACE], OWN_DECISION),
    ("alltoallv", "scattered"): ([_NOT_IN_PLACE], OWN_DECISION),
    ("alltoallv", "pairwise_sendrecv_replace"): ([_IN_PLACE], OWN_DECISION),
    ("reduce_scatter", "noncommutative"): ([_POW2, ("is_block_regular=yes", True)],
                                           OWN_DECISION),
    ("reduce_scatter_block", "noncommutative"): ([_POW2], OWN_DECISION),
    # MPICH 5.0 (coll_algorithms.txt restrictions)
    **{("allreduce", a): ([_COMMUTATIVE], OWN_DECISION)
       for a in ("recursive_multiplying", "ring", "k_reduce_scatter_allgather")},
    ("alltoall", "k_brucks"): ([_NOT_IN_PLACE], OWN_DECISION),
    **{(c, a): ([_COMMUTATIVE], OWN_DECISION)
       for c in ("reduce_scatter", "reduce_scatter_block")
       for a in ("pairwise", "recursive_halving")},
}


# (collective, MPICH name) -> the parameter keys its leaf holds (MPICH 5.0's CVAR defaults:
# MPIR_CVAR_<COLL>_..._KVAL 2, *_SINGLE_PHASE_RECV false, ALLREDUCE_TREE_TYPE knomial_1 with
# chunk size and buffer per child 0, BCAST_TREE_TYPE kary, IS_NON_BLOCKING true, pipeline chunk
# 8192, RECV_PRE_POST false, the topology-aware trees' weights 200/2800/1900/1600).
_RECEXCH = ("k=2", "single_phase_recv=0")
_TOPOLOGY = ("topo_overhead=200", "topo_diff_groups=2800", "topo_diff_switches=1900",
             "topo_same_switches=1600")
PARAMETERS = {
    ("allgather", "k_brucks"): ("k=2",),
    ("allgather", "recexch_doubling"): _RECEXCH,
    ("allgather", "recexch_halving"): _RECEXCH,
    ("allreduce", "recursive_multiplying"): ("k=2",),
    ("allreduce", "tree"): ("tree_type=knomial_1", "k=2", "chunk_size=0", "buffer_per_child=0",
                            *_TOPOLOGY),
    ("allreduce", "recexch"): _RECEXCH,
    ("allreduce", "k_reduce_scatter_allgather"): _RECEXCH,
    ("allreduce", "ccl"): ("ccl=auto",),
    ("alltoall", "k_brucks"): ("k=2",),
    ("barrier", "k_dissemination"): ("k=2",),
    ("barrier", "recexch"): _RECEXCH,
    ("bcast", "tree"): ("tree_type=kary", "k=2", "is_non_blocking=1", *_TOPOLOGY),
    ("bcast", "pipelined_tree"): ("tree_type=kary", "k=2", "is_non_blocking=1",
                                  "chunk_size=8192", "recv_pre_posted=0"),
}


def function(collective, name):
    """The MPIR_ function of an MPICH algorithm name: MPIR_<Coll>_allcomm_nb for nb, else
    MPIR_<Coll>_intra_<name> (csel_container.c of 4.0.2)."""
    kind = "allcomm" if name == "nb" else "intra"
    return f"MPIR_{collective.capitalize()}_{kind}_{name}"


def functions(collective):
    """Every MPIR_ function a leaf of the collective may name, in the catalogue's order."""
    return tuple(function(collective, n) for a, n in
                 algorithms.MPICH_ALGORITHMS[collective].items()
                 if a != algorithms.BASELINE_ALGORITHM)


def short(full):
    """'binomial' of 'MPIR_Bcast_intra_binomial', 'nb' of 'MPIR_Bcast_allcomm_nb',
    'noncommutative' of 'MPIR_Reduce_scatter_block_intra_noncommutative'."""
    for kind in ("_intra_", "_allcomm_"):
        if kind in full:
            return full.split(kind, 1)[1]
    return full


def parameters(collective, full):
    """The parameter keys a leaf of the function holds (PARAMETERS; () for none)."""
    return PARAMETERS.get((collective, short(full)), ())


def base_release(text):
    """The MPICH release (algorithms.MPICH_VERSIONS key) of a base file's JSON text (see the
    module docstring)."""
    named = set(re.findall(r"algorithm=MPIR_([A-Z][a-z_]*?)_(?:intra|allcomm)_(\w+)", text))
    release, seen = algorithms.MPICH_DEFAULT_VERSION, {}
    for version, names in algorithms.MPICH_VERSIONS.items():
        for coll, listed in names.items():
            new = set(listed) - seen.setdefault(coll, set())
            if any((coll.capitalize(), n) in named for n in new) and seen[coll]:
                release = version
            seen[coll] |= new
    return release


def guard(collective, full):
    """([(key, proceed when it holds)], fallback MPIR_ function or OWN_DECISION) of a leaf's
    function; ([], None) when it needs no guard."""
    conditions, fallback = GUARDS.get((collective, short(full)), ([], None))
    if fallback not in (None, OWN_DECISION):
        fallback = function(collective, fallback)
    return conditions, fallback
