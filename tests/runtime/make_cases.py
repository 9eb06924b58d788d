"""Reference cases for the C runtime tests (tests/runtime/test_runtime.cpp).

For several trees (2-D and 3-D, both split modes, both leaf rules, depth and threshold limits,
a hand-made tree deferring to the MPI: algorithm 0, and trees with tree.json's `beyond`) writes into OUT/<case>/: tree.bin (`collsel emit --target blob`), points.txt (every grid value,
cut and cut-1, extremes and 100,000 random points, as tests/unit/sinks/emit/test_c_ladder.py
picks them) and expected.txt (`collsel query --points` on the same tree.json). OUT/cases.txt lists the cases.
Usage: PYTHONPATH=tests python3 tests/runtime/make_cases.py OUT
"""
import contextlib
import io
import json
import pathlib
import sys

from collsel import cli

HERE = pathlib.Path(__file__).resolve().parent
REPO = HERE.parents[1]
import defer_tree  # noqa: E402  (tests/ is on PYTHONPATH)
from helpers import query_points, synthetic_3d, tanjaderin_table  # noqa: E402

N_RANDOM = 100_000
BEYOND_ABOVE = 16     # the hand-made tree's largest P (tests/defer_tree.py)
SWEEP = {c: REPO / "bench-data" / f"{c}-sweep.csv" for c in ("bcast", "reduce")}


def collsel(*args):
    """`collsel ARGS` in this process (one interpreter start for all cases); its stdout. Its
    stderr (the expected "worse than the default" warnings of deliberately poor trees) is shown
    only when it fails."""
    buf, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(buf), contextlib.redirect_stderr(err):
        status = cli.main([str(a) for a in args])
    if status:
        sys.stderr.write(err.getvalue())
        sys.exit(f"make_cases: collsel {' '.join(map(str, args[:2]))} failed ({status})")
    return buf.getvalue()


def main(out):
    out = pathlib.Path(out)
    out.mkdir(parents=True, exist_ok=True)
    tables = {"bcast": SWEEP["bcast"], "reduce": SWEEP["reduce"],
              "tj-bcast": tanjaderin_table("bcast", out), "tj-reduce": tanjaderin_table("reduce", out),
              "z-num": synthetic_3d(out / "z-num.csv"),
              "z-cat": synthetic_3d(out / "z-cat.csv", categorical=True)}
    cases = [  # name, table, collective, build options, emit options
        ("bcast-exact", "bcast", "bcast", [], []),
        ("bcast-exact-replicate", "bcast", "bcast", ["--split", "replicate"], []),
        ("bcast-exact-w4", "bcast", "bcast", [], ["--node-width", "4"]),
        ("reduce-depth3-penalty", "reduce", "reduce", ["--max-depth", "3", "--leaf", "penalty"], []),
        ("reduce-replicate-th80", "reduce", "reduce", ["--split", "replicate", "--threshold", "80"],
         []),
        ("tj-bcast-th90-penalty", "tj-bcast", "bcast", ["--threshold", "90", "--leaf", "penalty"],
         []),
        ("tj-reduce-replicate-d2", "tj-reduce", "reduce", ["--split", "replicate", "--max-depth", "2"],
         []),
        ("z-num-exact", "z-num", "bcast", ["--z", "ppn"], []),
        ("z-num-replicate-th70-penalty", "z-num", "bcast",
         ["--z", "ppn", "--split", "replicate", "--threshold", "70", "--leaf", "penalty"],
         ["--node-width", "4"]),
        ("z-cat-exact", "z-cat", "bcast", ["--z", "ppn"], []),
        ("z-cat-replicate", "z-cat", "bcast", ["--z", "ppn", "--split", "replicate"], []),
        ("z-cat-depth2", "z-cat", "bcast", ["--z", "ppn", "--max-depth", "2"], []),
        # hand-made (tests/defer_tree.py): leaves deferring to the MPI hold algorithm 0
        ("defer-handmade", None, "bcast", [], []),
        # tree.json's `beyond` (format 3 blobs): every P past the largest measured one defers
        ("beyond-handmade", None, "bcast", [], []),
        ("bcast-beyond", "bcast", "bcast", ["--beyond", "defer"], []),
        ("z-num-beyond-w4", "z-num", "bcast", ["--z", "ppn", "--beyond", "defer"],
         ["--node-width", "4"]),
    ]
    for name, table, coll, build_opts, emit_opts in cases:
        d = out / name
        if table is None:
            d.mkdir(parents=True, exist_ok=True)
            defer_tree.write(d / "tree.json", coll,
                             BEYOND_ABOVE if name.startswith("beyond") else None)
        else:
            collsel("build", tables[table], "--collective", coll, "--out", d, *build_opts)
        collsel("emit", d / "tree.json", "--target", "blob", "--out", d / "tree.bin", *emit_opts)
        doc = json.loads((d / "tree.json").read_text())
        points = query_points(doc, N_RANDOM)
        text = "".join(" ".join(map(str, p)) + "\n" for p in points)
        (d / "points.txt").write_text(text)
        (d / "expected.txt").write_text(collsel("query", d / "tree.json", "--ids", "--points",
                                                d / "points.txt"))
        print(f"make_cases: {name}: {len(points)} points, {(d / 'tree.bin').stat().st_size} bytes")
    (out / "cases.txt").write_text("".join(c[0] + "\n" for c in cases))


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "build/runtime-test")
