"""Hand-made tree.json files for libcollsel's benchmarks and tests, from tests/defer_tree.py
(P <= 5 and m >= 2048: the forced leaf; P <= 5, m < 2048 and P >= 6, m >= 2048: defer):
  defer  as tests/defer_tree.py (the tiny-message overhead: a deferred call is the
         interposition alone)
  patho  P <= 5, m >= 2048: bcast pipeline / reduce chain with 64-byte segments (pathological
         at large m: thousands of segments), to show that a decision takes effect
  hier   P <= 5, m >= 2048: hier:2:linear:linear (2 groups, linear at both levels)
Usage: python3 make_tree.py {defer|patho|hier} {bcast|reduce|allreduce (defer only)} OUT.json"""
import json
import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "tests"))
import defer_tree  # noqa: E402
from collsel.core.mpi import algorithms  # noqa: E402

FORCED = {"patho": {"bcast": (3, 64), "reduce": (2, 64)},
          "hier": {"bcast": (algorithms.hier_id("bcast", 2, 1, 1), 0),
                   "reduce": (algorithms.hier_id("reduce", 2, 1, 1), 0)}}


def document(kind, collective):
    doc = defer_tree.document(collective)
    if kind != "defer":
        alg, seg = FORCED[kind][collective]
        doc["methods"][1] = {"algorithm": alg, "segsize": seg, "faninout": 0,
                             "name": algorithms.describe(collective,
                                                         algorithms.Method(alg, seg, 0))}
    return doc


if __name__ == "__main__":
    if len(sys.argv) != 4 or sys.argv[1] not in ("defer", "patho", "hier"):
        sys.exit(__doc__)
    pathlib.Path(sys.argv[3]).write_text(json.dumps(document(sys.argv[1], sys.argv[2])))
