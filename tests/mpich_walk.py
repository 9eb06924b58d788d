"""MPICH 4.0.2's collective selection walk (csel.c: MPIR_Csel_prune, then MPIR_Csel_search) over
one collective's subtree of a selection file, for the calls collsel's tests make: 1-byte
elements, equal counts (reduce_scatter: m in all, split evenly), MPI_SUM (commutative, built
in), not in place, single threaded, all ranks on one node (there MPICH's communicator is a
parent of its node communicator and its ranks are node-consecutive, as MPICH's own choices of
smp for barrier and scan show in tests/integration/test_mpich_json_collectives.py)."""
import re

from collsel.core.mpi import algorithms
from collsel.sinks.emit import mpich_csel

PRUNED = ("comm_type", "comm_size", "comm_hierarchy", "is_node_consecutive", "comm_avg_ppn")


def csel_walk(node, collective, p, m, commutative=True, built_in=True, in_place=False,
              parent=True, count=None, nodes=None):
    """The MPIR_ function csel selects for `collective` at communicator size p and collsel's m
    (the message size csel compares follows from them: sinks/emit/mpich_csel.MESSAGE); the
    keywords change the call (operation, MPI_IN_PLACE, element count: default m) or the
    communicator (hierarchy; `nodes` it spans, which comm_avg_ppn<=N reads as P <= N x nodes).
    comm_size<N is `<` in the per-communicator prune and `<=` in the search."""
    message = mpich_csel.MESSAGE[collective]
    total = p * m if message and message[1] == mpich_csel.TIMES_P else m
    pof2 = 1 << (p.bit_length() - 1)
    searching = False
    truth = {"comm_type=intra": True, "comm_type=inter": False, "comm_hierarchy=parent": parent,
             "comm_hierarchy=flat": not parent,
             "is_node_consecutive=yes": True, "is_node_consecutive=no": False,
             "is_multi_threaded=yes": False, "is_multi_threaded=no": True,
             "is_commutative=yes": commutative, "is_commutative=no": not commutative,
             "is_op_built_in=yes": built_in, "is_op_built_in=no": not built_in,
             "is_sendbuf_inplace=yes": in_place, "is_sendbuf_inplace=no": not in_place,
             "is_block_regular=yes": m % p == 0, "is_block_regular=no": m % p != 0,
             "comm_size=pow2": p == pof2, "count<pow2": (m if count is None else count) < pof2}
    while True:
        for key, child in node.items():
            if key.startswith("algorithm="):
                return key.split("=", 1)[1]
            name = re.split("[<=]", key)[0]
            searching = searching or name not in PRUNED
            if key.endswith("=any"):
                hit = True
            elif key in truth:
                hit = truth[key]
            else:
                op, value = re.fullmatch(r"\w+(<=|<)(\d+)", key).groups()
                x = {"comm_size": p, "avg_msg_size": m, "total_msg_size": total,
                     "count": m if count is None else count, "comm_avg_ppn": None}[name]
                le = op == "<=" or (name == "comm_size" and searching)
                if name == "comm_avg_ppn":       # csel.c: local_size <= N * node count
                    hit = p <= int(value) * nodes if le else p < int(value) * nodes
                else:
                    hit = x <= int(value) if le else x < int(value)
            if hit:
                node = child
                break
        else:
            raise AssertionError(f"{collective} P={p} m={m}: no match in {list(node)}")


def mpich_table(collective, best, ps, ms, release=None):
    """A `# algorithm_family=mpich` table of MPICH's algorithms (those of `release`, e.g. "4.0",
    when given) where best(P index, m index, names) is the fastest (10 us; every other 20 us);
    barrier at m = 0 only."""
    names = [n for a, n in algorithms.MPICH_ALGORITHMS[collective].items() if a
             and (release is None or n in algorithms.MPICH_VERSIONS[release][collective])]
    ms = (0,) if collective == "barrier" else ms
    rows = [f"{collective},{p},{m},{n},0,{10 if n == best(i, j, names) else 20}"
            for i, p in enumerate(ps) for j, m in enumerate(ms) for n in names]
    return ("# algorithm_family=mpich\ncollective,comm_size,msg_size,algorithm,segsize,time_us\n"
            + "\n".join(rows) + "\n")
