"""A benchmark's size column -> m, the message size Open MPI's fixed decision sees for that call.

Open MPI 4.1.4's fixed decision (ompi/mca/coll/tuned/coll_tuned_decision_fixed.c) computes, per
collective: count x type size for bcast, reduce, allreduce (lines 67, 522, 677); the per-rank
block for allgather (`dsize * scount`, 1107: the name says total, the value is one rank's block),
allgatherv (sum of rcounts / P, 1259-1262), alltoall (244), gather (1399/1402), scatter
(1486/1489) and reduce_scatter_block (`dsize * rcount`, 986); the sum of the receive counts for
reduce_scatter (838-841). Alltoallv decides on P alone (418-445) and barrier has no size (464):
alltoallv keeps the per-rank block as m, barrier gets m = 0. Scan and exscan have no fixed
decision (coll/tuned leaves them to coll/basic); their m is count x type size, and neither IMB-MPI1
nor OSU measures them.
(The dynamic rules of coll_tuned_decision_dynamic.c use other sizes: P x block for allgather,
alltoall, gather, scatter, reduce_scatter_block. A rules file must be written in those.)

What the benchmarks print, read from their sources and checked here:
- IMB-MPI1 (src_c/IMB_<benchmark>.c): #bytes is the vector for Bcast, Reduce, Allreduce; the
  per-rank block for Allgather(v), Alltoall(v), Gather, Scatter and Reduce_scatter_block
  (recvcount = #bytes / sizeof(float)). Reduce_scatter changed in IMB 2019 Update 1: before it
  (IMB 4.x, 2017, 2018, 2019) #bytes is split over the ranks, so m = #bytes; from it on (2021.x,
  the binary Intel MPI 2021.18.1 ships, probed with a PMPI library in
  tests/data/ingest/imb/PROVENANCE) every rank receives #bytes, so the receive counts add up to
  P x #bytes. The version comes from the file's header. (A newer IMB built with its legacy
  src_c/Makefile defines IMB2018 and splits again; the output does not say so.)
- OSU 7.x (c/mpi/collective/blocking/osu_<coll>.c): Size is the vector for bcast, reduce,
  allreduce and the per-rank block for allgather(v), alltoall(v), gather, scatter;
  osu_reduce_scatter splits Size / type size elements over the ranks (their sum is m);
  osu_reduce_scatter_block passes recvcount = (Size / type size) / P. osu_barrier prints no size.
"""
from collsel.errors import located

_VECTOR = ("the buffer (count x type size)", lambda size, procs, elem: size)
_BLOCK = ("the per-rank block", lambda size, procs, elem: size)
_NONE = ("no size (m = 0)", lambda size, procs, elem: 0)
_COMMON = {"bcast": _VECTOR, "reduce": _VECTOR, "allreduce": _VECTOR, "allgather": _BLOCK,
           "allgatherv": _BLOCK, "alltoall": _BLOCK, "alltoallv": _BLOCK,
           "gather": _BLOCK, "scatter": _BLOCK, "barrier": _NONE}

# format -> collective -> (what m is, in words, as the table's metadata records it; m(size, P,
# element size)).
CONVERSIONS = {
    "imb": {**_COMMON,
            "reduce_scatter_block": ("the per-rank block (recvcount = #bytes / 4)",
                                     lambda size, procs, elem: size // elem * elem)},
    "osu": {**_COMMON,
            "reduce_scatter": ("the sum of the receive counts (Size / type size elements split "
                               "over the ranks)", lambda size, procs, elem: size // elem * elem),
            "reduce_scatter_block": ("the per-rank block ((Size / type size) / P elements)",
                                     lambda size, procs, elem: size // elem // procs * elem)},
}
# IMB's Reduce_scatter, by the version the header prints (see above).
_IMB_SPLIT = ("#bytes (split over the ranks: IMB before 2019 Update 1)",
              lambda size, procs, elem: size // elem * elem)
_IMB_PER_RANK = ("P x #bytes (every rank receives #bytes: IMB 2019 Update 1 and later)",
                 lambda size, procs, elem: procs * (size // elem * elem))

# Element sizes of the datatypes the tools print (IMB's reduction type, OSU's `# Datatype:`).
_TYPE_SIZES = {"MPI_CHAR": 1, "MPI_BYTE": 1, "MPI_SIGNED_CHAR": 1, "MPI_UNSIGNED_CHAR": 1,
               "MPI_SHORT": 2, "MPI_INT": 4, "MPI_UNSIGNED": 4, "MPI_FLOAT": 4, "MPI_LONG": 8,
               "MPI_DOUBLE": 8, "MPI_LONG_LONG": 8, "MPI_LONG_DOUBLE": 16}
# What the tools reduce when they do not print the type: MPI_FLOAT (IMB's default, OSU's).
DEFAULT_ELEMENT = "MPI_FLOAT"


def converts(fmt, collective):
    """Whether `fmt`'s size column is converted for `collective` (IMB and OSU)."""
    return fmt in CONVERSIONS and (collective in CONVERSIONS[fmt] or
                                   (fmt, collective) == ("imb", "reduce_scatter"))


def conversion(path, fmt, collective, info):
    """(words, m(size, P, element size)) for this file; IMB's Reduce_scatter by its version."""
    if (fmt, collective) != ("imb", "reduce_scatter"):
        return CONVERSIONS[fmt][collective]
    version = info.get("imb_version")
    if version is None:
        raise located(path, None, "Reduce_scatter without IMB's version header ('Intel(R) MPI "
                      "Benchmarks <version>'): #bytes is the total before IMB 2019 Update 1 and "
                      "each rank's share since; ingest the complete output")
    year, _, rest = version.partition(" ")
    major = int(year.split(".")[0]) if year.split(".")[0].isdigit() else 0
    split = major < 2019 or (major == 2019 and "update" not in rest.lower())
    return _IMB_SPLIT if split else _IMB_PER_RANK


def element_size(path, datatype):
    """Bytes of one element of the reduction datatype the file names (MPI_FLOAT if none)."""
    name = (datatype or DEFAULT_ELEMENT).strip().rstrip(".").upper()
    if name not in _TYPE_SIZES:
        raise located(path, None, f"datatype {name}: element size unknown, so the size column "
                      f"cannot be converted to m (known: {', '.join(sorted(_TYPE_SIZES))})")
    return _TYPE_SIZES[name]
