"""Every single-field corruption of a real tree.json is refused by `collsel query` and by
`collsel emit --target T` for every target: exit status 2, exactly one line on stderr naming the
file, no output file.

Two trees: `collsel build bench-data/bcast-sweep.csv --max-depth 3` (2-D) and a small 3-D tree
(numeric z, replicate split; its category z axis is corrupted too). The corruptions are generated
from the documents: for each field path (every key; the first and last items of each list, and
the root, an internal node and a leaf of each node array) each of
  - a value of the wrong JSON type,
  - a value out of the field's range on each side (for text: empty or too long, not in the enum,
    not matching the pattern),
  - NaN and Infinity (written as the JSON tokens Python's json module reads),
  - the key missing, an extra key (objects),
  - for the node links, a cycle (first_child pointing to the node itself or backwards).
collsel runs in this process (one argparse parser for all runs): start-up would cost more than
the runs.
"""
import contextlib
import copy
import io
import json
import math
import pathlib
import re

import pytest

from collsel import cli
from collsel.core import schemas

REPO = pathlib.Path(__file__).resolve().parents[1]
INT_MAX, SIZE_MAX, I64 = 2**31 - 1, 2**64 - 1, 2**63
TARGETS = ("c", "c-fast", "ompi-dec-fixed", "blob", "c-array", "ompi-rules", "ompi-json",
           "mpich-json")
DELETE = object()
COUNTS = {}

# Integer ranges of the fields, by location with item indexes written as [k]: the values just
# outside them must be refused. (The algorithm ids are bcast's: 1..9.)
RANGES = {
    "version": (1, 1), "build.max_depth": (0, 64),
    "axes[k].values[k]": None,   # per axis, below
    "methods[k].algorithm": (1, 9), "methods[k].segsize": (0, INT_MAX),
    "methods[k].faninout": (0, INT_MAX),
    "nodes.first_child[k]": (-1, INT_MAX), "nodes.method[k]": (-2, INT_MAX),
    "nodes.depth[k]": (0, INT_MAX), "nodes.split[k][k]": (-2, INT_MAX),
}
AXIS_RANGES = [  # values, cuts of comm_size, msg_size, a numeric z
    ((1, INT_MAX), (2, INT_MAX)), ((0, SIZE_MAX), (1, SIZE_MAX)),
    ((-I64, I64 - 1), (-I64 + 1, I64 - 1))]
# Text fields: values out of their range (enum, pattern, length).
TEXT_OUT = {
    "format": ["", "collsel-tree2"], "collective": ["", "a" * 17, "Bcast", "bcast\n"],
    "build.split": ["", "quad"], "build.leaf": ["", "minority"],
    "axes[0].name": ["", "P"], "axes[1].name": ["", "m"], "axes[2].name": ["", "z" * 65, "a\nb"],
    "axes[k].kind": ["", "cubic"], "axes[k].labels[k]": ["x" * 257, "1\n"],
    "methods[k].name": ["", "n" * 65, "*/ int evil; /*"],
}
SYNTHETIC_3D = [(p, m, z) for p in (2, 4, 8) for m in (1, 64, 4096) for z in (1, 2)]


def generic(location):
    """`axes[1].cuts[3]` -> `axes[k].cuts[k]`."""
    return re.sub(r"\[\d+\]", "[k]", location)


def integer_range(location, doc):
    g = generic(location)
    if g.startswith("axes[k].") and g.endswith("[k]"):
        d = int(location[5])
        axis = doc["axes"][d]
        if axis["kind"] == "category":
            return (0, INT_MAX) if ".values" in g else (1, INT_MAX)
        return AXIS_RANGES[d][0 if ".values" in g else 1]
    return RANGES.get(g)


def text_out(location):
    g = generic(location)
    for key in (location, g):
        if key in TEXT_OUT:
            return TEXT_OUT[key]
    return []


def representatives(location, items, doc):
    """Item indexes to corrupt: first and last; for node arrays the root, an internal node and
    a leaf too."""
    keep = {0, len(items) - 1}
    if location.startswith("nodes."):
        first = doc["nodes"]["first_child"]
        keep |= {next((i for i, c in enumerate(first) if c != -1 and i > 0), 0),
                 first.index(-1)}
    return sorted(k for k in keep if 0 <= k < len(items))


def corruptions(doc, location="", value=None):
    """(location, label, new value or DELETE) for every field below `location`."""
    if location == "":
        value = doc
    where = location or "(top)"
    if isinstance(value, dict):
        yield where, "wrong type: list", [value]
        yield where, "wrong type: text", "x"
        yield where, "NaN", math.nan
        yield where, "extra key", {**value, "comment": 1}
        for key, child in value.items():
            child_loc = f"{location}.{key}" if location else key
            yield child_loc, "missing key", DELETE
            yield from corruptions(doc, child_loc, child)
        return
    if isinstance(value, list):
        yield where, "wrong type: object", {"items": value}
        yield where, "wrong type: text", "x"
        yield where, "NaN", math.nan
        for k in representatives(location, value, doc):
            yield from corruptions(doc, f"{location}[{k}]", value[k])
        return
    # a scalar field
    yield where, "NaN", math.nan
    yield where, "Infinity", math.inf
    if isinstance(value, bool) or value is None:
        yield where, "wrong type: text", "x"
        yield where, "wrong type: list", []
    elif isinstance(value, int):
        yield where, "wrong type: text", str(value)
        yield where, "wrong type: float", value + 0.5
        bounds = integer_range(location, doc)
        assert bounds is not None, f"no range for {location}"
        yield where, "below range", bounds[0] - 1
        yield where, "above range", bounds[1] + 1
    elif isinstance(value, float):
        yield where, "wrong type: text", str(value)
        yield where, "wrong type: bool", True
    else:
        yield where, "wrong type: integer", 7
        yield where, "wrong type: null", None
        for text in text_out(location):
            if text != value:
                yield where, f"out of range: {text[:12]!r}", text
    if generic(location) == "nodes.first_child[k]":
        k = int(location.split("[")[1][:-1])
        yield where, "cycle: itself", k
        if k > 0:
            yield where, "cycle: backwards", k - 1


def null_fields(doc):
    """Corruptions of fields that hold null (max_depth, threshold): out of range numbers."""
    out = []
    if doc["build"]["threshold"] is None:
        out += [("build.threshold", "below range", 0), ("build.threshold", "above range", 100.5),
                ("build.threshold", "wrong type: text", "90")]
    if doc["build"]["max_depth"] is None:
        out += [("build.max_depth", "below range", -1), ("build.max_depth", "above range", 65)]
    return out


def apply(doc, location, value):
    """A copy of `doc` with the field at `location` set to `value` (or deleted)."""
    doc = copy.deepcopy(doc)
    if location == "(top)":
        return value
    node, parts = doc, _parts(location)
    for part in parts[:-1]:
        node = node[part]
    if value is DELETE:
        del node[parts[-1]]
    else:
        node[parts[-1]] = value
    return doc


def _parts(location):
    parts = []
    for piece in location.replace("[", ".[").split("."):
        if piece.startswith("["):
            parts.append(int(piece[1:-1]))
        elif piece:
            parts.append(piece)
    return parts


# --- the trees ----------------------------------------------------------------------------------

def collsel_main(*args):
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = cli.main([str(a) for a in args])
    return status, out.getvalue(), err.getvalue()


@pytest.fixture(scope="module", autouse=True)
def one_parser():
    """cli.main builds its argparse parser per call; here one serves every run."""
    parser = cli.parser()
    saved = cli.parser
    cli.parser = lambda: parser
    yield
    cli.parser = saved
    print("\nhostile tree.json corruptions, each refused by query and 8 targets: "
          + ", ".join(f"{k}: {v}" for k, v in sorted(COUNTS.items())))


@pytest.fixture(scope="module")
def trees(tmp_path_factory):
    d = tmp_path_factory.mktemp("hostile")
    status, _, err = collsel_main("build", REPO / "bench-data" / "bcast-sweep.csv",
                                  "--collective", "bcast", "--max-depth", "3", "--out", d / "2d")
    assert status == 0, err
    out = {"2d": json.loads((d / "2d" / "tree.json").read_text())}
    for kind, zs in (("3d", (1, 2)), ("3d-category", ("bynode", "byslot"))):
        table = d / f"{kind}.csv"
        rows = ["collective,comm_size,msg_size,algorithm,segsize,time_us,ppn"]
        for p, m, zi in SYNTHETIC_3D:
            z = zs[zi - 1]
            for alg, seg, cost in ((1, 0, p * (1 + m / 1e3)), (6, 0, (3 + m / 1e3) * zi),
                                   (3, 8192, 40 + m / 4e3)):
                rows.append(f"bcast,{p},{m},{alg},{seg},{cost:.4f},{z}")
        table.write_text("\n".join(rows) + "\n")
        status, _, err = collsel_main("build", table, "--collective", "bcast", "--z", "ppn",
                                      "--split", "replicate", "--out", d / kind)
        assert status == 0, err
        out[kind] = json.loads((d / kind / "tree.json").read_text())
    base = d / "mpich.json"
    base.write_text(json.dumps({
        "collective=bcast": {"comm_type=intra": {"algorithm=MPIR_Bcast_intra_binomial": {}},
                             "comm_type=inter": {"algorithm=MPIR_Bcast_inter_x": {}}}}))
    out["mpich-base"] = base
    return out


def all_corruptions(doc, only=None):
    found = list(corruptions(doc)) + null_fields(doc)
    if only:
        found = [c for c in found if c[0].startswith(only)]
    return found


GROUPS = [("2d", "(top)"), ("2d", "format"), ("2d", "version"), ("2d", "collective"),
          ("2d", "build"), ("2d", "axes"), ("2d", "methods"), ("2d", "nodes"), ("3d", None),
          ("3d-category", "axes[2]")]


def _refused_everywhere(tmp_path, doc, location, label, value, base):
    """'' when query and every target refuse the corrupted file properly, else what went
    wrong."""
    bad = tmp_path / "tree.json"
    bad.write_text(json.dumps(apply(doc, location, value)))   # NaN, Infinity as JSON tokens
    z = ["--z", 1] if len(doc["axes"]) == 3 else []
    runs = [("query", ["query", bad, "--comm-size", 4, "--msg-size", 8, *z])]
    runs += [(t, ["emit", bad, "--target", t, "--out", tmp_path / f"out-{t}"]
              + (["--mpich-base", base] if t == "mpich-json" else [])) for t in TARGETS]
    problems = []
    for name, args in runs:
        status, out, err = collsel_main(*args)
        lines = err.splitlines()
        if status != 2 or len(lines) != 1 or not lines[0].startswith(f"collsel: error: {bad}: "):
            problems.append(f"{name}: exit {status}, stderr {err[:200]!r}")
        elif name != "query" and (tmp_path / f"out-{name}").exists():
            problems.append(f"{name}: wrote {tmp_path / f'out-{name}'}")
        elif name == "query" and out:
            problems.append(f"query: printed {out[:80]!r}")
    return "; ".join(problems)


@pytest.mark.parametrize("tree, only", GROUPS, ids=[f"{t}-{o}" for t, o in GROUPS])
def test_every_corruption_is_refused_by_query_and_every_target(trees, tree, only, tmp_path):
    doc = trees[tree]
    cases = all_corruptions(doc, only)
    assert cases
    failures = []
    for location, label, value in cases:
        problem = _refused_everywhere(tmp_path, doc, location, label, value, trees["mpich-base"])
        if problem:
            failures.append(f"{location} ({label}): {problem}")
    COUNTS[f"{tree}:{only or 'all'}"] = len(cases)
    assert not failures, f"{len(failures)} of {len(cases)} not refused:\n" + "\n".join(
        failures[:20])


def test_corruptions_change_the_document(trees):
    """Each corruption makes a different document, and the uncorrupted trees load."""
    for name in ("2d", "3d", "3d-category"):
        doc = trees[name]
        for location, label, value in all_corruptions(doc):
            assert json.dumps(apply(doc, location, value)) != json.dumps(doc), (location, label)
        assert schemas.validator("tree").is_valid(doc)
