"""Target `ompi-dec-fixed`: a drop-in `ompi_coll_tuned_<coll>_intra_dec_fixed` for each of the 14
collectives Open MPI 4.1.4's coll/tuned can force (templates/ompi_dec_fixed.c.j2 renders it).

Per collective, `SPECS` holds what the function must match in Open MPI 4.1.4 (Debian's source,
ompi/mca/coll/tuned/): its parameter list (the types of coll_tuned.h's <COLL>_ARGS, in order),
the C statements that compute the message size m exactly as the fixed decision of
coll_tuned_decision_fixed.c does (the quantity of the tree's m axis: docs/guide/collectives.md,
"What m means"), and the trailing arguments *_do_this takes after the algorithm. Three have no
fixed decision to copy: barrier has no m (the tree splits on P alone; m is 0); alltoallv's
decision reads P only, so m is the mean block one rank sends to one peer (its counts' sum / P);
scan and exscan have none at all (coll/tuned leaves them to coll/basic, which runs the linear
algorithm): m is dsize * count, as the benchmark measures them, and the patched build gives
coll/tuned a fixed decision for them (mpi-builds/ompi-patched/scan_fixed.c) that this function
replaces.

Every rank must pick the same algorithm. Each m below is the same on every rank for any call MPI
allows, but alltoallv's with unequal counts: ranks may then choose differently, which 4.1.4's two
alltoallv algorithms tolerate (linear and pairwise both exchange exactly one message per ordered
pair of ranks, zero bytes included, with tag MCA_COLL_BASE_TAG_ALLTOALLV,
coll_base_alltoallv.c:173-316).

A leaf whose method 4.1.4 refuses at some P (two_proc, any P but 2: core.mpi.fallbacks) tests P
first and defers there, in the ladder every C target shares (c_ladder, templates/_branches.c.j2).
"""
from dataclasses import dataclass

from collsel.errors import InputError
from collsel.sinks.emit import ompi_ppn, render, text
from collsel.sinks.emit.c_ladder import decision_context
from collsel.sinks.emit.targets import Emitted, one_tree

DTYPE = "struct ompi_datatype_t *"
OP = "struct ompi_op_t *"
TAIL = (("struct ompi_communicator_t *", "comm"), ("mca_coll_base_module_t *", "module"))
GATHERING = (("const void *", "sbuf"), ("int", "scount"), (DTYPE, "sdtype"),
             ("void *", "rbuf"), ("int", "rcount"), (DTYPE, "rdtype"))
REDUCING = (("const void *", "sbuf"), ("void *", "rbuf"), ("int", "count"), (DTYPE, "dtype"),
            (OP, "op"))
ROOTED = GATHERING + (("int", "root"),)

# m as the fixed decision computes it, in bytes, into total_dsize (coll_tuned_decision_fixed.c
# of 4.1.4; the lines are docs/guide/collectives.md's).
BLOCK_OF_SEND = """\
size_t dsize;

if (MPI_IN_PLACE != sbuf) {
    ompi_datatype_type_size(sdtype, &dsize);
} else {
    ompi_datatype_type_size(rdtype, &dsize);
}
total_dsize = dsize * (ptrdiff_t)scount;"""


def _one_type(dtype, count, cast="ptrdiff_t"):
    """m = the size of `dtype` times `count` (cast as 4.1.4 casts it)."""
    return f"""\
size_t dsize;

ompi_datatype_type_size({dtype}, &dsize);
total_dsize = dsize * ({cast}){count};"""


def _by_root(at_root, root_side, other_side):
    """m = one rank's block, read from (type, count) `root_side` where `at_root` holds."""
    return f"""\
size_t dsize;

if ({at_root}) {{
    ompi_datatype_type_size({root_side[0]}, &dsize);
    total_dsize = dsize * (ptrdiff_t){root_side[1]};
}} else {{
    ompi_datatype_type_size({other_side[0]}, &dsize);
    total_dsize = dsize * (ptrdiff_t){other_side[1]};
}}"""


VECTOR = _one_type("dtype", "count")


@dataclass(frozen=True)
class Spec:
    params: tuple         # ((C type, name), ...): coll_tuned.h's <COLL>_ARGS
    m_code: str           # C statements setting total_dsize (m in bytes); declarations first
    m_source: str         # where 4.1.4 computes it (coll_tuned_decision_fixed.c lines)
    do_this_tail: tuple   # *_do_this's arguments after the call's own: names or C expressions

    @property
    def has_op(self):
        return any(name == "op" for _, name in self.params)


SPECS = {
    "allgather": Spec(GATHERING + TAIL, BLOCK_OF_SEND, ":1102-1107",
                      ("alg", "faninout", "segsize")),
    "allgatherv": Spec(
        (("const void *", "sbuf"), ("int", "scount"), (DTYPE, "sdtype"), ("void *", "rbuf"),
         ("const int *", "rcounts"), ("const int *", "rdispls"), (DTYPE, "rdtype")) + TAIL,
        """\
size_t dsize;
int i;

if (MPI_IN_PLACE != sbuf) {
    ompi_datatype_type_size(sdtype, &dsize);
} else {
    ompi_datatype_type_size(rdtype, &dsize);
}
total_dsize = 0;
for (i = 0; i < ompi_comm_size(comm); i++) {
    total_dsize += dsize * rcounts[i];
}
total_dsize /= ompi_comm_size(comm);    /* per_rank_dsize */""",
        ":1252-1262", ("alg", "faninout", "segsize")),
    "allreduce": Spec(REDUCING + TAIL, VECTOR, ":66-67", ("alg", "faninout", "segsize")),
    "alltoall": Spec(GATHERING + TAIL, BLOCK_OF_SEND, ":239-244",
                     ("alg", "faninout", "segsize", "ompi_coll_tuned_alltoall_max_requests")),
    "alltoallv": Spec(
        (("const void *", "sbuf"), ("const int *", "scounts"), ("const int *", "sdisps"),
         (DTYPE, "sdtype"), ("void *", "rbuf"), ("const int *", "rcounts"),
         ("const int *", "rdisps"), (DTYPE, "rdtype")) + TAIL,
        """\
size_t dsize;
const int *counts = scounts;
int i;

if (MPI_IN_PLACE != sbuf) {
    ompi_datatype_type_size(sdtype, &dsize);
} else {    /* the send arguments are ignored */
    ompi_datatype_type_size(rdtype, &dsize);
    counts = rcounts;
}
total_dsize = 0;
for (i = 0; i < ompi_comm_size(comm); i++) {
    total_dsize += dsize * counts[i];
}
total_dsize /= ompi_comm_size(comm);    /* the mean block to one peer */""",
        "none (:418-451 reads P only)", ("alg",)),
    "barrier": Spec(TAIL, "total_dsize = 0;    /* no m: the tree splits on P alone */",
                    "none (:464-510 reads P only)", ("alg", "faninout", "segsize")),
    "bcast": Spec((("void *", "buff"), ("int", "count"), (DTYPE, "datatype"), ("int", "root"))
                  + TAIL, _one_type("datatype", "count", "unsigned long"), ":521-522",
                  ("alg", "faninout", "segsize")),
    "exscan": Spec(REDUCING + TAIL, VECTOR, "none (no fixed decision in 4.1.4)", ("alg",)),
    "gather": Spec(ROOTED + TAIL,
                   _by_root("(ompi_comm_rank(comm) == root) || (MPI_IN_PLACE == sbuf)",
                            ("rdtype", "rcount"), ("sdtype", "scount")),
                   ":1396-1402", ("alg", "faninout", "segsize")),
    "reduce": Spec(
        (("const void *", "sendbuf"), ("void *", "recvbuf"), ("int", "count"),
         (DTYPE, "datatype"), (OP, "op"), ("int", "root")) + TAIL,
        _one_type("datatype", "count"), ":676-677", ("alg", "faninout", "segsize", "0")),
    "reduce_scatter": Spec(
        (("const void *", "sbuf"), ("void *", "rbuf"), ("const int *", "rcounts"),
         (DTYPE, "dtype"), (OP, "op")) + TAIL, """\
size_t dsize;
int i;

ompi_datatype_type_size(dtype, &dsize);
total_dsize = 0;
for (i = 0; i < ompi_comm_size(comm); i++) {
    total_dsize += rcounts[i];
}
total_dsize *= dsize;""", ":837-842", ("alg", "faninout", "segsize")),
    "reduce_scatter_block": Spec(
        (("const void *", "sbuf"), ("void *", "rbuf"), ("int", "rcount"), (DTYPE, "dtype"),
         (OP, "op")) + TAIL,
        _one_type("dtype", "rcount"), ":985-986", ("alg", "faninout", "segsize")),
    "scan": Spec(REDUCING + TAIL, VECTOR, "none (no fixed decision in 4.1.4)", ("alg",)),
    "scatter": Spec(ROOTED + TAIL,
                    _by_root("ompi_comm_rank(comm) == root", ("sdtype", "scount"),
                             ("rdtype", "rcount")),
                    ":1484-1489", ("alg", "faninout", "segsize")),
}

# Open MPI 4.1 / 5.0 reduce ladder for non-commutative ops (coll_tuned_decision_fixed.c):
# (comm_size below, [(msg_size below, algorithm)]); None = no bound.
REDUCE_NONCOMMUTATIVE = (
    (4, ((8, 6), (None, 1))),
    (8, ((None, 1),)),
    (16, ((1024, 6), (8192, 1), (16384, 6), (262144, 1), (None, 6))),
    (128, ((None, 6),)),
    (256, ((512, 6), (1024, 1), (None, 6))),
    (None, ((None, 6),)),
)


def spec(collective, target="ompi-dec-fixed"):
    """The collective's Spec; a collective coll/tuned has no fixed decision for is refused."""
    if collective not in SPECS:
        raise InputError(f"--target {target}: no Open MPI dec_fixed for {collective} (coll/tuned "
                         f"decides {', '.join(sorted(SPECS))})")
    return SPECS[collective]


def emit(loaded):
    """{'ompi_<coll>_intra_dec_fixed.c': ...}: 2-D trees, or 3-D trees whose third axis is ppn,
    which the function computes once per communicator (the template says how)."""
    s = spec(loaded.collective)
    ppn = ompi_ppn.ppn_axis(loaded, "ompi-dec-fixed") is not None
    if ppn and loaded.collective == "allreduce":
        raise InputError("--target ompi-dec-fixed: an allreduce tree cannot split on ppn: the "
                         "generated function counts a communicator's nodes with an allreduce "
                         "on it, which would decide by itself; build it without --z ppn")
    ctx = decision_context(loaded, None, "ompi-dec-fixed")
    names = [name for _, name in s.params]
    code = render("ompi_dec_fixed.c.j2", ppn=ppn, noncommutative=REDUCE_NONCOMMUTATIVE,
                  params=s.params, args=", ".join(names), m_code=s.m_code,
                  m_source=text.c_comment(s.m_source), has_op=s.has_op,
                  do_this_args=", ".join(names + list(s.do_this_tail)), **ctx)
    return {f"ompi_{ctx['collective']}_intra_dec_fixed.c": code}


DEFER = ("the generated dec_fixed calls Open MPI's original fixed decision "
         "(collsel_ompi_original_<coll>_intra_dec_fixed, kept by the splice)")


def emit_target(trees, options):
    loaded = one_tree(trees, "ompi-dec-fixed")
    return Emitted(emit(loaded), text.defer_notes(loaded, "Open MPI", DEFER))
