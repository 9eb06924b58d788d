"""An unmodified mpi4py program for libcollsel, at mpi4py's default thread level:
    python libcollsel_mpi4py.py COLL M [COLL M ...]
COLL: bcast (bytes, root 0), reduce (signed bytes, MPI.SUM, root 0), allreduce (the same),
allgather, alltoall (bytes, M per rank's block). Rank 0 prints "provided=<level>" and
"check COLL m=M mpi4py ok|FAIL" per call. Exit 0 when every check passed."""
import sys
from array import array

from mpi4py import MPI

LEVELS = {MPI.THREAD_SINGLE: "single", MPI.THREAD_FUNNELED: "funneled",
          MPI.THREAD_SERIALIZED: "serialized", MPI.THREAD_MULTIPLE: "multiple"}


def pattern(i, who):
    """Below 31, so a sum over up to 4 ranks fits a signed byte."""
    return (i * 131 + who * 7 + 11) % 31


# pattern(i, who) repeats every 31 i (131 * 31 is a multiple of 31): the expected bytes of an
# m of a megabyte are one period repeated, not a million calls of a Python function per rank.
PERIOD = 31


def repeated(period, n):
    """The first n bytes of `period` (PERIOD values) repeated."""
    return (bytes(period) * (n // PERIOD + 1))[:n]


def patterns(who, start, n):
    """pattern(i, who) for i in [start, start + n), as bytes."""
    return repeated([pattern(i, who) for i in range(start, start + PERIOD)], n)


def check(comm, coll, m):
    rank, size = comm.Get_rank(), comm.Get_size()
    mine = array("b", patterns(rank, 0, m * size))
    out = array("b", bytes(m * size))
    summed = repeated([sum(pattern(i, q) for q in range(size)) for i in range(PERIOD)], m)
    if coll == "bcast":
        buf = bytearray(mine.tobytes()[:m])
        comm.Bcast([buf, MPI.BYTE], root=0)
        return buf == patterns(0, 0, m)
    if coll == "reduce":
        comm.Reduce([mine, m, MPI.SIGNED_CHAR], [out, m, MPI.SIGNED_CHAR], op=MPI.SUM, root=0)
        return rank != 0 or out[:m].tobytes() == summed
    if coll == "allreduce":
        comm.Allreduce([mine, m, MPI.SIGNED_CHAR], [out, m, MPI.SIGNED_CHAR], op=MPI.SUM)
        return out[:m].tobytes() == summed
    if coll == "allgather":
        comm.Allgather([mine, m, MPI.BYTE], [out, m, MPI.BYTE])
        return out.tobytes() == b"".join(patterns(q, 0, m) for q in range(size))
    if coll == "alltoall":   # rank q's block for this rank is pattern(rank * m + i, q)
        comm.Alltoall([mine, m, MPI.BYTE], [out, m, MPI.BYTE])
        return out.tobytes() == b"".join(patterns(q, rank * m, m) for q in range(size))
    raise SystemExit(f"unknown collective {coll}")


def main(argv):
    comm = MPI.COMM_WORLD
    if comm.Get_rank() == 0:
        print(f"provided={LEVELS[MPI.Query_thread()]}", flush=True)
    all_good = True
    for coll, m in zip(argv[::2], map(int, argv[1::2])):
        good = comm.allreduce(int(check(comm, coll, m)), op=MPI.MIN)
        if comm.Get_rank() == 0:
            print(f"check {coll} m={m} mpi4py {'ok' if good else 'FAIL'}", flush=True)
        all_good &= bool(good)
    return 0 if all_good else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
