"""Algorithm ids of each MPI family, their names, and which ones honour a segment size.

Two families: `openmpi` (coll/tuned ids, the default everywhere) and `mpich` (MPICH 4.0's own
algorithms, the values of MPIR_CVAR_<COLL>_INTRA_ALGORITHM). A table says which family its
`algorithm` column uses with the metadata line `# algorithm_family=mpich` (absent: openmpi).
In both, id 0 is the MPI's own decision (Open MPI's fixed ladder, MPICH's `auto`): a baseline.

Facts from Open MPI 4.1.4 (`coll_tuned_<coll>_decision.c`: the `*_intra_do_this` switch of each
of the 14 collectives and which coll_base functions it passes segsize and faninout; ids and names
as `ompi_info --param coll tuned --level 9 --parsable` prints them, which `collsel catalogue`
checks against the installed MPI). Id 0 ("ignore") is Open MPI's own fixed decision: a baseline,
never a candidate.
"""
import re
from dataclasses import dataclass

from collsel.core.io import names
from collsel.core.mpi.intel_algorithms import INTEL_ALGORITHMS
from collsel.errors import InputError

BASELINE_ALGORITHM = 0

# Open MPI 4.1.4's coll/tuned catalogue, all 14 collectives a user can force: id -> name as
# `ompi_info --param coll tuned --level 9 --parsable` spells the enumerators of
# coll_tuned_<coll>_algorithm. `collsel catalogue` checks it against the installed MPI.
TUNED_ALGORITHMS = {
    "allgather": {0: "ignore", 1: "linear", 2: "bruck", 3: "recursive_doubling", 4: "ring",
                  5: "neighbor", 6: "two_proc"},
    "allgatherv": {0: "ignore", 1: "default", 2: "bruck", 3: "ring", 4: "neighbor",
                   5: "two_proc"},
    "allreduce": {
        0: "ignore", 1: "basic_linear", 2: "nonoverlapping", 3: "recursive_doubling", 4: "ring",
        5: "segmented_ring", 6: "rabenseifner",
    },
    "alltoall": {0: "ignore", 1: "linear", 2: "pairwise", 3: "modified_bruck", 4: "linear_sync",
                 5: "two_proc"},
    "alltoallv": {0: "ignore", 1: "basic_linear", 2: "pairwise"},
    "barrier": {0: "ignore", 1: "linear", 2: "double_ring", 3: "recursive_doubling", 4: "bruck",
                5: "two_proc", 6: "tree"},
    "bcast": {
        0: "ignore", 1: "basic_linear", 2: "chain", 3: "pipeline", 4: "split_binary_tree",
        5: "binary_tree", 6: "binomial", 7: "knomial", 8: "scatter_allgather",
        9: "scatter_allgather_ring",
    },
    "exscan": {0: "ignore", 1: "linear", 2: "recursive_doubling"},
    "gather": {0: "ignore", 1: "basic_linear", 2: "binomial", 3: "linear_sync"},
    "reduce": {
        0: "ignore", 1: "linear", 2: "chain", 3: "pipeline", 4: "binary", 5: "binomial",
        6: "in-order_binary", 7: "rabenseifner",
    },
    "reduce_scatter": {0: "ignore", 1: "non-overlapping", 2: "recursive_halving", 3: "ring",
                       4: "butterfly"},
    "reduce_scatter_block": {0: "ignore", 1: "basic_linear", 2: "recursive_doubling",
                             3: "recursive_halving", 4: "butterfly"},
    "scan": {0: "ignore", 1: "linear", 2: "recursive_doubling"},
    "scatter": {0: "ignore", 1: "basic_linear", 2: "binomial", 3: "linear_nb"},
}

# The per-collective controls coll/tuned registers beside coll_tuned_<coll>_algorithm (the
# suffix after `_algorithm_`; `count` is the number of algorithms, always there).
TUNED_PARAMETERS = {
    **{c: frozenset({"count", "segmentsize", "tree_fanout", "chain_fanout"})
       for c in ("allreduce", "allgather", "allgatherv", "gather", "reduce_scatter")},
    "alltoall": frozenset({"count", "segmentsize", "tree_fanout", "chain_fanout",
                           "max_requests"}),
    "alltoallv": frozenset({"count"}),
    "barrier": frozenset({"count"}),
    "bcast": frozenset({"count", "segmentsize", "tree_fanout", "chain_fanout", "knomial_radix"}),
    "exscan": frozenset({"count"}),
    "reduce": frozenset({"count", "segmentsize", "tree_fanout", "chain_fanout", "max_requests"}),
    "reduce_scatter_block": frozenset({"count", "segmentsize", "tree_fanout"}),
    "scan": frozenset({"count"}),
    "scatter": frozenset({"count", "segmentsize", "tree_fanout", "chain_fanout", "max_requests"}),
}

# coll/tuned algorithm id -> the coll/base function it calls, after "ompi_coll_base_"
# (ompi_coll_tuned_<coll>_intra_do_this in coll_tuned_<coll>_decision.c of Open MPI 4.1.4;
# scan and exscan: do_this maps 0 to 1, coll_tuned_scan_decision.c:99-100). The LD_PRELOAD probe
# (sources/measure/collsel_coll_probe.c) sees these functions run: `collsel verify` and the
# forcing tests name the algorithm that ran by them.
OMPI_BASE_FUNCTIONS = {
    "allgather": {1: "allgather_intra_basic_linear", 2: "allgather_intra_bruck",
                  3: "allgather_intra_recursivedoubling", 4: "allgather_intra_ring",
                  5: "allgather_intra_neighborexchange", 6: "allgather_intra_two_procs"},
    "allgatherv": {1: "allgatherv_intra_basic_default", 2: "allgatherv_intra_bruck",
                   3: "allgatherv_intra_ring", 4: "allgatherv_intra_neighborexchange",
                   5: "allgatherv_intra_two_procs"},
    "allreduce": {1: "allreduce_intra_basic_linear", 2: "allreduce_intra_nonoverlapping",
                  3: "allreduce_intra_recursivedoubling", 4: "allreduce_intra_ring",
                  5: "allreduce_intra_ring_segmented", 6: "allreduce_intra_redscat_allgather"},
    "alltoall": {1: "alltoall_intra_basic_linear", 2: "alltoall_intra_pairwise",
                 3: "alltoall_intra_bruck", 4: "alltoall_intra_linear_sync",
                 5: "alltoall_intra_two_procs"},
    "alltoallv": {1: "alltoallv_intra_basic_linear", 2: "alltoallv_intra_pairwise"},
    "barrier": {1: "barrier_intra_basic_linear", 2: "barrier_intra_doublering",
                3: "barrier_intra_recursivedoubling", 4: "barrier_intra_bruck",
                5: "barrier_intra_two_procs", 6: "barrier_intra_tree"},
    "bcast": {1: "bcast_intra_basic_linear", 2: "bcast_intra_chain", 3: "bcast_intra_pipeline",
              4: "bcast_intra_split_bintree", 5: "bcast_intra_bintree",
              6: "bcast_intra_binomial", 7: "bcast_intra_knomial",
              8: "bcast_intra_scatter_allgather", 9: "bcast_intra_scatter_allgather_ring"},
    "exscan": {1: "exscan_intra_linear", 2: "exscan_intra_recursivedoubling"},
    "gather": {1: "gather_intra_basic_linear", 2: "gather_intra_binomial",
               3: "gather_intra_linear_sync"},
    "reduce": {1: "reduce_intra_basic_linear", 2: "reduce_intra_chain", 3: "reduce_intra_pipeline",
               4: "reduce_intra_binary", 5: "reduce_intra_binomial",
               6: "reduce_intra_in_order_binary", 7: "reduce_intra_redscat_gather"},
    "reduce_scatter": {1: "reduce_scatter_intra_nonoverlapping",
                       2: "reduce_scatter_intra_basic_recursivehalving",
                       3: "reduce_scatter_intra_ring", 4: "reduce_scatter_intra_butterfly"},
    "reduce_scatter_block": {1: "reduce_scatter_block_basic_linear",
                             2: "reduce_scatter_block_intra_recursivedoubling",
                             3: "reduce_scatter_block_intra_recursivehalving",
                             4: "reduce_scatter_block_intra_butterfly"},
    "scan": {1: "scan_intra_linear", 2: "scan_intra_recursivedoubling"},
    "scatter": {1: "scatter_intra_basic_linear", 2: "scatter_intra_binomial",
                3: "scatter_intra_linear_nb"},
}
# The collectives collsel handles (tables, trees, emitters, report, query): all 14. Which of them
# the benchmark measures, ingest reads and the models predict is each of those steps' own list.
ALGORITHMS = TUNED_ALGORITHMS

# Open MPI's collective ids: enum COLLTYPE in ompi/mca/coll/base/coll_base_functions.h (the same
# in 4.1, 5.0 and main), the COLID of a classic rules file; 22 of them, the 14 above among them.
OMPI_COLLTYPE = {
    "allgather": 0, "allgatherv": 1, "allreduce": 2, "alltoall": 3, "alltoallv": 4,
    "alltoallw": 5, "barrier": 6, "bcast": 7, "exscan": 8, "gather": 9, "gatherv": 10,
    "reduce": 11, "reduce_scatter": 12, "reduce_scatter_block": 13, "scan": 14, "scatter": 15,
    "scatterv": 16, "neighbor_allgather": 17, "neighbor_allgatherv": 18,
    "neighbor_alltoall": 19, "neighbor_alltoallv": 20, "neighbor_alltoallw": 21,
}


def ompi_algorithm_cvar(collective):
    """The control variable that forces `collective`'s coll/tuned algorithm (its segment size and
    fan-outs are this name + `_segmentsize`, `_chain_fanout`, ...: TUNED_PARAMETERS)."""
    return f"coll_tuned_{collective}_algorithm"


def mpich_algorithm_cvar(collective):
    """The control variable whose value names `collective`'s MPICH algorithm (MPICH_VERSIONS)."""
    return f"MPIR_CVAR_{collective.upper()}_INTRA_ALGORITHM"

# The blob's collective field holds 16 bytes (docs/formats/blob.md): the short form of the one
# coll/tuned collective whose name is longer.
BLOB_NAMES = {"reduce_scatter_block": "reduce_scat_blk"}

# Algorithms whose base implementation uses the segsize argument (coll_tuned_<coll>_decision.c,
# `*_intra_do_this` of Open MPI 4.1.4: the coll_base functions called with segsize); the others
# ignore it (bcast linear and the two scatter-allgather variants; reduce linear and rabenseifner;
# every algorithm of the collectives absent here).
_SEGMENTING = {
    "bcast": frozenset({2, 3, 4, 5, 6, 7}),
    "reduce": frozenset({2, 3, 4, 5, 6}),
    "allreduce": frozenset({5}),   # segmented_ring
    "gather": frozenset({3}),      # linear_sync: size of the first segment
}
SEGMENTING = {c: _SEGMENTING.get(c, frozenset()) for c in ALGORITHMS}

# Algorithms that read faninout (chain: number of chains; 0 is forced to 1): bcast and reduce
# chain only (the other `*_intra_do_this` take faninout but pass it to no algorithm).
USES_FANINOUT = {c: frozenset({2}) if c in ("bcast", "reduce") else frozenset()
                 for c in ALGORITHMS}

# Algorithms whose coll/base function needs a commutative operation (Open MPI 4.1.4): reduce all
# but linear (1) and in-order binary (6), which alone keep the operand order (the fixed decision
# uses only them for non-commutative ops, ompi_coll_tuned_reduce_intra_dec_fixed); allreduce ring
# and segmented ring (coll_base_allreduce.c:288, :557) and rabenseifner (:988 falls back);
# reduce_scatter recursive halving and ring (coll_base_reduce_scatter.c:129, :409);
# reduce_scatter_block recursive halving (coll_base_reduce_scatter_block.c:399, :420 falls back).
# Scan and exscan algorithms take any op (coll_base_scan.c:134, coll_base_exscan.c:119).
# libcollsel defers a non-commutative call where the tree names one of them.
COMMUTATIVE_ONLY = {
    "reduce": frozenset({2, 3, 4, 5, 7}),
    "allreduce": frozenset({4, 5, 6}),
    "reduce_scatter": frozenset({2, 3}),
    "reduce_scatter_block": frozenset({3}),
}

# Reduce algorithms valid for non-commutative operations.
REDUCE_NONCOMMUTATIVE = frozenset(TUNED_ALGORITHMS["reduce"]) - {0} - COMMUTATIVE_ONLY["reduce"]

# The coll/tuned variables a method's fan-in/out F is written into when it is forced (by the
# benchmark's forcing and by libcollsel), after `coll_tuned_<coll>_algorithm_`: chain_fanout and
# tree_fanout, but alltoall's max_requests (linear_sync's limit; no alltoall algorithm reads a
# fan-out). reduce's max_requests keeps the launch's value (it limits the tree algorithms'
# requests, whose F is the fan-out). A variable the collective lacks (TUNED_PARAMETERS) is not
# written.
FANINOUT_VARIABLES = {c: ("max_requests",) if c == "alltoall" else ("chain_fanout", "tree_fanout")
                      for c in ALGORITHMS}

# Words that name the MPI's own decision (id 0) in benchmark outputs; refused as ambiguous where
# the catalogue gives the word to an algorithm (allgatherv's 1 is ompi_info's "default").
_BASELINE_WORDS = ("default", "tuned", "ignore", "fixed")

# Spellings seen in benchmark outputs and papers beyond the catalogue's own names (which
# _aliases() adds), normalised by _key(); per collective.
_EXTRA_SPELLINGS = {
    "bcast": {
        "linear": 1, "flat": 1, "flattree": 1, "lin": 1,
        "pipe": 3,
        "splitbinary": 4, "splitbintree": 4, "sbin": 4,
        "binary": 5, "bintree": 5, "bin": 5,
        "binomialtree": 6, "bm": 6,
        "knomialtree": 7,
        "scatterallgatherrd": 8,
    },
    "reduce": {
        "basiclinear": 1, "flat": 1, "flattree": 1,
        "pipe": 3,
        "binarytree": 4, "bintree": 4,
        "binomialtree": 5,
        "inorderbinarytree": 6, "inorderbintree": 6,
        "redscatgather": 7, "reducescattergather": 7,
    },
    "allreduce": {
        "linear": 1,
        "reducebcast": 2,
        "recdoubling": 3, "rd": 3,
        "segring": 5,
        "redscatallgather": 6, "reducescatterallgather": 6,
    },
    "allgather": {"basiclinear": 1, "recdoubling": 3, "rd": 3, "neighborexchange": 5,
                  "neighbourexchange": 5, "twoprocs": 6},
    "allgatherv": {"basicdefault": 1, "linear": 1, "neighborexchange": 4,
                   "neighbourexchange": 4, "twoprocs": 5},
    "alltoall": {"basiclinear": 1, "bruck": 3, "linearsync": 4, "twoprocs": 5},
    "alltoallv": {"linear": 1},
    "barrier": {"basiclinear": 1, "doublering": 2, "recdoubling": 3, "rd": 3, "twoprocs": 5},
    "exscan": {"recdoubling": 2, "rd": 2},
    "gather": {"linear": 1, "binomialtree": 2, "synclinear": 3},
    "reduce_scatter": {"nonoverlapping": 1, "basicrecursivehalving": 2},
    "reduce_scatter_block": {"linear": 1, "recdoubling": 2, "rd": 2},
    "scan": {"recdoubling": 2, "rd": 2},
    "scatter": {"linear": 1, "binomialtree": 2, "nonblockinglinear": 3},
}


# Hierarchical methods (Hasanov & Lastovetsky): G groups of consecutive ranks, the collective
# inside the groups and among the group leaders, each level a coll/tuned algorithm (0 = Open
# MPI's own decision on that communicator). bcast: leaders first, then groups; reduce: groups
# first, then leaders. Open MPI only. One integer carries them, so tables, trees and the
# benchmark's --methods hold them like any algorithm id:
#   id = HIER_BASE + G * 100 + inner * 10 + outer     (2 <= G <= HIER_MAX_GROUPS)
# and the name `hier:G:INNER:OUTER` (INNER, OUTER: ids or names) spells the same method.
HIER_BASE = 1_000_000
HIER_COLLECTIVES = ("bcast", "reduce")      # libcollsel's hier.c composes these two
HIER_MAX_GROUPS = 9999


@dataclass(frozen=True)
class Hier:
    groups: int
    inner: int
    outer: int


def hier_id(collective, groups, inner, outer):
    """The algorithm id of a hierarchical method, its parts checked (InputError)."""
    check_collective(collective)
    if collective not in HIER_COLLECTIVES:
        raise InputError(f"hierarchical methods exist for {' and '.join(HIER_COLLECTIVES)}, "
                         f"not {collective}")
    if not 2 <= groups <= HIER_MAX_GROUPS:
        raise InputError(f"hierarchical method: G = {groups} groups (2-{HIER_MAX_GROUPS})")
    for level, alg in (("inner", inner), ("outer", outer)):
        if alg not in ALGORITHMS[collective] or alg > 9:
            raise InputError(f"hierarchical method: {level} algorithm {alg} is no coll/tuned "
                             f"{collective} algorithm")
    return HIER_BASE + groups * 100 + inner * 10 + outer


def hier_parts(alg):
    """Hier(G, inner, outer) of a hierarchical id, None for a flat one."""
    if alg < HIER_BASE + 200 or alg > HIER_BASE + HIER_MAX_GROUPS * 100 + 99:
        return None
    rest = alg - HIER_BASE
    return Hier(rest // 100, rest // 10 % 10, rest % 10)


def _hier_from_text(collective, text, family):
    """`hier:G:INNER:OUTER` -> id (Open MPI family only)."""
    parts = text.split(":")
    if len(parts) != 4 or not re.fullmatch(r"\d+", parts[1]):
        raise InputError(f"hierarchical method '{text}' must be hier:G:INNER:OUTER "
                         "(e.g. hier:2:linear:linear)")
    if family != "openmpi":
        raise InputError(f"hierarchical method '{text}': Open MPI only (inner and outer are "
                         "coll/tuned algorithms)")
    inner, outer = (algorithm_id(collective, x, family) for x in parts[2:])
    return hier_id(collective, int(parts[1]), inner, outer)


FAMILIES = ("openmpi", "mpich", "intel")
DEFAULT_FAMILY = "openmpi"

# Which MPICH release has which algorithm names: the values of MPIR_CVAR_<COLL>_INTRA_ALGORITHM
# for the 14 collectives, as MPI_T describes them, in the description's order (MPICH has no MPI_T
# enumeration for them: the values are the "name - text" entries of the variable's description;
# src/mpi/coll/cvars.txt). 4.0: 4.0.2 (Debian bookworm); 5.0: 5.0.2 (build/mpis/mpich5), which
# adds radix-k and recursive-exchange algorithms and drops barrier `dissemination` (its
# k_dissemination replaces it). `collsel catalogue --mpi mpich` checks them against the
# installed MPICH. The one table of names: the ids below follow from it.
_MPICH_40 = {
    "allgather": ("auto", "brucks", "nb", "recursive_doubling", "ring"),
    "allgatherv": ("auto", "brucks", "nb", "recursive_doubling", "ring"),
    "allreduce": ("auto", "nb", "smp", "recursive_doubling", "reduce_scatter_allgather"),
    "alltoall": ("auto", "brucks", "nb", "pairwise", "pairwise_sendrecv_replace", "scattered"),
    "alltoallv": ("auto", "nb", "pairwise_sendrecv_replace", "scattered"),
    "barrier": ("auto", "nb", "smp", "dissemination"),
    "bcast": ("auto", "binomial", "nb", "smp", "scatter_recursive_doubling_allgather",
              "scatter_ring_allgather"),
    "exscan": ("auto", "nb", "recursive_doubling"),
    "gather": ("auto", "binomial", "nb"),
    "reduce": ("auto", "binomial", "nb", "smp", "reduce_scatter_gather"),
    "reduce_scatter": ("auto", "nb", "noncommutative", "pairwise", "recursive_doubling",
                       "recursive_halving"),
    "reduce_scatter_block": ("auto", "noncommutative", "recursive_doubling", "pairwise",
                             "recursive_halving", "nb"),
    "scan": ("auto", "nb", "smp", "recursive_doubling"),
    "scatter": ("auto", "binomial", "nb"),
}
MPICH_VERSIONS = {
    "4.0": _MPICH_40,
    "5.0": {
        **_MPICH_40,
        "allgather": ("auto", "brucks", "k_brucks", "nb", "recursive_doubling", "ring",
                      "recexch_doubling", "recexch_halving"),
        "allreduce": ("auto", "nb", "smp", "recursive_doubling", "recursive_multiplying",
                      "reduce_scatter_allgather", "tree", "recexch", "ring",
                      "k_reduce_scatter_allgather", "ccl"),
        "alltoall": ("auto", "brucks", "k_brucks", "nb", "pairwise",
                     "pairwise_sendrecv_replace", "scattered"),
        "barrier": ("auto", "nb", "smp", "k_dissemination", "recexch"),
        "bcast": ("auto", "binomial", "nb", "smp", "scatter_recursive_doubling_allgather",
                  "scatter_ring_allgather", "pipelined_tree", "tree"),
    },
}
# The version each release's names were read from (MPI_T of the installed MPICH).
MPICH_READ_FROM = {"4.0": "4.0.2", "5.0": "5.0.2"}
# The release whose names a sweep or a base file uses when nothing tells it (Debian's MPICH).
MPICH_DEFAULT_VERSION = "4.0"


def _mpich_ids(versions):
    """{collective: {id: name}}: ours, stable: 0 = `auto` (MPICH's own selection), then 4.0's
    names in its description's order, then each later release's new names appended in its
    order, so a tree on disk keeps its meaning (a name a release drops keeps its id)."""
    out = {}
    for release in versions.values():
        for coll, listed in release.items():
            ids = out.setdefault(coll, {})
            for name in listed:
                if name not in ids.values():
                    ids[len(ids)] = name
    return out


# Ids per collective, as above; the names are MPICH's, written by name into the variable by
# the benchmark.
MPICH_ALGORITHMS = _mpich_ids(MPICH_VERSIONS)
def mpich_release(version):
    """The MPICH_VERSIONS key of an MPICH version ('5.0.2', or mpichversion's text): the newest
    listed release not newer than it (4.1 takes 4.0's names); MPICH_DEFAULT_VERSION for None or
    text with no version in it."""
    m = re.search(r"(\d+)\.(\d+)", version or "")
    if m is None:
        return MPICH_DEFAULT_VERSION
    wanted = (int(m[1]), int(m[2]))
    known = sorted(tuple(map(int, k.split("."))) for k in MPICH_VERSIONS)
    fit = [k for k in known if k <= wanted] or known[:1]
    return "%d.%d" % fit[-1]


def mpich_ids_of(collective, version):
    """The ids of `collective`'s algorithms the MPICH release of `version` has, ascending."""
    names = MPICH_VERSIONS[mpich_release(version)][collective]
    return sorted(a for a, n in MPICH_ALGORITHMS[collective].items() if n in names)


def check_mpich_has(collective, alg, version, where):
    """`alg`, refused (InputError, one line naming the version) when the MPICH of `version`
    has no such algorithm: forcing its name would fail MPICH's CVAR parsing, and a selection
    file naming it would be refused or misread."""
    if alg not in mpich_ids_of(collective, version):
        release = mpich_release(version)
        names = ", ".join(MPICH_VERSIONS[release][collective])
        raise InputError(f"{where}: MPICH {version or release} has no {collective} algorithm "
                         f"'{MPICH_ALGORITHMS[collective][alg]}' (MPICH {release}'s: {names})")
    return alg


# MPICH algorithms that run on power-of-two communicators only: MPICH 4.0.2 asserts (aborts)
# rather than falls back in its "noncommutative" reduce-scatter algorithms
# (reduce_scatter_intra_noncommutative.c:55 "pof2 == comm_size"); reduce_scatter's also needs
# equal counts ("block-regular"). libcollsel passes them to MPICH elsewhere.
MPICH_POWER_OF_TWO_ONLY = {"reduce_scatter": "noncommutative",
                           "reduce_scatter_block": "noncommutative"}


# The collectives MPICH's selection (csel) also decides that collsel does not measure: their
# CVARs, checked by `collsel catalogue --mpi mpich` too; an emitted JSON keeps MPICH's own
# subtree for them.
MPICH_UNMEASURED = {
    "alltoallw": {0: "auto", 1: "nb", 2: "pairwise_sendrecv_replace", 3: "scattered"},
    "gatherv": {0: "auto", 1: "linear", 2: "nb"},
    "scatterv": {0: "auto", 1: "linear", 2: "nb"},
}
_BY_FAMILY = {"openmpi": ALGORITHMS, "mpich": MPICH_ALGORITHMS,
              "intel": INTEL_ALGORITHMS}   # Intel MPI's presets: core.mpi.intel_algorithms


def check_family(family):
    if family not in _BY_FAMILY:
        raise InputError(f"unknown algorithm family '{family}' (known: {', '.join(FAMILIES)})")
    return family


def _qualifier(family):
    """'' for the default family (messages as before families existed), else 'MPICH '."""
    return {DEFAULT_FAMILY: "", "intel": "Intel MPI "}.get(family, "MPICH ")


def registry(family=DEFAULT_FAMILY):
    """{collective: {id: name}} of one family."""
    return _BY_FAMILY[check_family(family)]


def _key(name):
    return re.sub(r"[^a-z0-9]", "", name.lower())


def _aliases(collective):
    """{spelling: id} of an Open MPI collective: the baseline words, the catalogue's names, the
    extra spellings (later ones win)."""
    return {**{w: BASELINE_ALGORITHM for w in _BASELINE_WORDS},
            **{_key(n): a for a, n in ALGORITHMS[collective].items()},
            **_EXTRA_SPELLINGS.get(collective, {})}


def _refuse_ambiguous_word(collective, text):
    """A baseline word the catalogue also gives to an algorithm (allgatherv's 'default') is
    refused: read either way, a table could silently lose its baseline or its algorithm 1."""
    key = _key(text)
    owner = [a for a, n in ALGORITHMS[collective].items() if a and _key(n) == key]
    if key in _BASELINE_WORDS and owner:
        raise InputError(f"{collective} algorithm '{text}' is ambiguous: Open MPI names algorithm "
                         f"{owner[0]} '{ALGORITHMS[collective][owner[0]]}'; write 0 (or "
                         f"'ignore') for Open MPI's own decision, {owner[0]} for that algorithm")


def collectives(family=DEFAULT_FAMILY):
    return sorted(registry(family))


def check_collective(collective, family=DEFAULT_FAMILY):
    """`collective` when it is a collective of `family` (exactly: files spell it so), else one
    line naming the closest known one (core.io.names) and all of them."""
    known = registry(family)
    if collective not in known:
        raise InputError(f"unknown {_qualifier(family)}collective '{collective}'"
                         f"{names.did_you_mean(collective, known)} "
                         f"(known: {', '.join(collectives(family))})")
    return collective


def given_collective(text, family=DEFAULT_FAMILY):
    """A collective as a person types it on the command line: 'MPI_Allreduce', 'Allreduce' and
    'allreduce' alike (core.io.names), checked as check_collective checks it."""
    return check_collective(names.canonical(text, registry(family)), family)


def algorithm_id(collective, name, family=DEFAULT_FAMILY):
    """The family's id for an algorithm given as a number or a name (Open MPI: any common
    spelling; MPICH: the cvar value, e.g. `scatter_ring_allgather`, `-` and `_` alike)."""
    check_collective(collective, family)
    known_ids = registry(family)[collective]
    text = str(name).strip()
    if text.lower().startswith("hier:"):
        return _hier_from_text(collective, text, family)
    if re.fullmatch(r"\d+", text):
        alg = int(text)
        h = hier_parts(alg) if family == "openmpi" else None
        if h:
            return hier_id(collective, h.groups, h.inner, h.outer)
        if alg not in known_ids:
            raise InputError(f"{collective} has no {_qualifier(family)}algorithm {alg} "
                             f"(ids 0-{max(known_ids)})")
        return alg
    if family == "openmpi":
        _refuse_ambiguous_word(collective, text)
        alg = _aliases(collective).get(_key(text))
    else:
        alg = {_key(v): k for k, v in known_ids.items()}.get(_key(text))
    if alg is None:
        known = ", ".join(known_ids.values())
        raise InputError(f"unknown {_qualifier(family)}{collective} algorithm '{text}' "
                         f"(known: {known})")
    return alg


def algorithm_name(collective, alg, family=DEFAULT_FAMILY):
    h = hier_parts(alg) if family == "openmpi" else None
    if h:
        return f"hier:{h.groups}:{h.inner}:{h.outer}"
    return registry(family)[collective][alg]


def segments(collective, alg, family=DEFAULT_FAMILY):
    """Whether the algorithm uses a segment size (no MPICH 4.0 algorithm does)."""
    return family == "openmpi" and alg in SEGMENTING[collective]


def check_segsize(collective, alg, segsize, family=DEFAULT_FAMILY):
    """`segsize`, refused (InputError naming the algorithm) when non-zero on an algorithm that
    ignores it: such a row repeats the unsegmented measurement under another name."""
    if segsize and not segments(collective, alg, family):
        users = [registry(family)[collective][a] for a in sorted(SEGMENTING[collective])
                 ] if family == "openmpi" else []
        raise InputError(f"segsize {segsize} on {collective} algorithm {alg} "
                         f"({algorithm_name(collective, alg, family)}), which does not segment; "
                         f"use segment size 0 (segmenting {collective} algorithms: "
                         f"{', '.join(users) or 'none'})")
    return segsize


@dataclass(frozen=True, order=True)
class Method:
    """What a decision names: an algorithm with its segment size (bytes, 0 = none) and fan-in/out
    (0 = the algorithm's default). Ordered, so method lists sort deterministically."""
    algorithm: int
    segsize: int
    faninout: int = 0

    def label(self, collective, family=DEFAULT_FAMILY):
        """Id and name, as sweep metadata and progress lines show it, e.g. '3:pipeline/seg=8192'."""
        return (f"{self.algorithm}:{algorithm_name(collective, self.algorithm, family)}"
                + (f"/seg={self.segsize}" if self.segsize else "")
                + (f"/faninout={self.faninout}" if self.faninout else ""))


def describe(collective, method, family=DEFAULT_FAMILY):
    """Human name of a method, e.g. 'pipeline/8K' or 'chain/1K/f4'; 'defer' for algorithm 0,
    which as a tree's choice means "let the MPI decide"."""
    if method.algorithm == BASELINE_ALGORITHM:
        return "defer"
    names = registry(family).get(collective, {})
    h = hier_parts(method.algorithm) if family == "openmpi" else None
    if h:   # e.g. hier4/chain/linear: 4 groups, chain inside, linear among the leaders
        return f"hier{h.groups}/{names.get(h.inner, h.inner)}/{names.get(h.outer, h.outer)}"
    name = names.get(method.algorithm, f"alg{method.algorithm}")
    if method.segsize:
        seg = method.segsize
        name += f"/{seg // 1024}K" if seg % 1024 == 0 else f"/{seg}B"
    if method.faninout:
        name += f"/f{method.faninout}"
    return name
