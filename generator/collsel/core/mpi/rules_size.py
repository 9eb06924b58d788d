"""The message size an Open MPI dynamic rule (rules file, classic or JSON) is matched against, per
collective, as a function of collsel's m and the communicator size P.

collsel's m is the quantity coll/tuned's FIXED decision computes (docs/guide/collectives.md, "What
m means"); the DYNAMIC decision (`*_intra_dec_dynamic`, which reads the rules) computes another for
five collectives and ignores the count for three. The same expressions in Open MPI 4.1.4
(Debian's source), v5.0.10 and main (whose JSON rules fill the same com_rules), file
ompi/mca/coll/tuned/coll_tuned_decision_dynamic.c; `SOURCE` holds each one's text and line, and
tests/unit/core/mpi/test_rules_size.py checks them against the source when it is unpacked.

Relations (the benchmark's 1-byte elements and equal counts, dsize = 1):
- IDENTITY: the rule's size is m.
- TIMES_P: the rule's size is P · m (one rank's block times P).
- IGNORED: the rule's size does not depend on the count (scan, exscan: dsize · P; alltoallv: 0):
  within a communicator size only the first matching rule is ever reached, so a rules file can
  hold one decision per communicator size, not a message-size ladder.
No collective needs 1/P: allgatherv's dynamic and fixed decisions both read the total over P.
"""
from collections import namedtuple

IDENTITY, TIMES_P, IGNORED = "m", "P·m", "ignored"

Source = namedtuple("Source", "relation text line_414 line_5010 line_main")

# collective -> how its dynamic decision computes the rule's size (the line that does it)
SOURCE = {
    "allgather": Source(TIMES_P, "dsize *= (ptrdiff_t)comsize * (ptrdiff_t)scount;",
                        473, 500, 508),
    "allgatherv": Source(IDENTITY, "per_rank_size = total_size / comsize;", 538, 565, 573),
    "allreduce": Source(IDENTITY, "dsize *= count;", 72, 80, 81),
    "alltoall": Source(TIMES_P, "dsize *= (ptrdiff_t)comsize * (ptrdiff_t)scount;",
                       123, 136, 138),
    "alltoallv": Source(IGNORED, "0, &faninout, &segsize, &max_requests);", 178, 190, 193),
    "barrier": Source(IDENTITY, "0, &faninout, &segsize, &ignoreme);", 220, 234, 238),
    "bcast": Source(IDENTITY, "dsize *= count;", 261, 278, 283),
    "exscan": Source(IGNORED, "dsize *= comsize;", 690, 714, 722),
    "gather": Source(TIMES_P, "dsize *= scount * comsize;", 593, 618, 626),
    "reduce": Source(IDENTITY, "dsize *= count;", 312, 332, 338),
    "reduce_scatter": Source(IDENTITY, "dsize *= count;", 367, 388, 395),
    "reduce_scatter_block": Source(TIMES_P, "dsize *= rcount * size;", 419, 442, 450),
    "scan": Source(IGNORED, "dsize *= comsize;", 733, 758, 766),
    "scatter": Source(TIMES_P, "dsize *= scount * comsize;", 642, 668, 676),
}


def relation(collective):
    """IDENTITY, TIMES_P or IGNORED; IDENTITY for a collective coll/tuned has no dynamic rule
    size for (gatherv, scatterv, ...: collsel measures none of them)."""
    source = SOURCE.get(collective)
    return source.relation if source else IDENTITY


def rule_msg_size(collective, comm_size, m):
    """The size Open MPI matches a rule's MSGSIZE against for a call whose collsel m is `m` on a
    communicator of `comm_size` ranks (1-byte elements, equal counts). A threshold of the tree
    (m >= cut) is the rule threshold rule_msg_size(collective, P, cut), exactly, for TIMES_P and
    IDENTITY; for IGNORED the result is what Open MPI would compute, the same for every m."""
    kind = relation(collective)
    if kind == TIMES_P:
        return comm_size * m
    if kind == IGNORED:
        return comm_size if collective in ("scan", "exscan") else 0
    return m
