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

REPO = pathlib.Path(__file__).resolve().parents[2]
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
    "methods[k].algorithm": (0, 9), "methods[k].segsize": (0, INT_MAX),   # 0 = defer
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
    "algorithm_family": ["", "intelmpi", "MPICH"],
}
OPTIONAL = {"algorithm_family"}     # absent: openmpi (tree files written before families)
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
            if child_loc not in OPTIONAL:
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
    cli.parser = lambda argv=None: parser
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
@pytest.mark.slow
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


# --- the holes the hardening issue found, one by one ---------------------------------------------

def _one_line(status, err, *expected):
    lines = err.splitlines()
    assert status == 2 and len(lines) == 1 and "Traceback" not in err, (status, err)
    for text in expected:
        assert text in lines[0], lines[0]
    return lines[0]


def _write(tmp_path, doc, name="tree.json"):
    path = tmp_path / name
    path.write_text(json.dumps(doc))
    return path


@pytest.mark.parametrize("edit, expected", [
    (lambda d: d["methods"][0].__setitem__("algorithm", 2**40),
     "methods[0].algorithm: 1099511627776 is greater than the maximum"),
    (lambda d: d["methods"][0].__setitem__("algorithm", -3),
     "methods[0].algorithm: -3 is less than the minimum of 0"),
    (lambda d: d["methods"][0].__setitem__("algorithm", "1; } int evil(void) { return 0"),
     "is not of type 'integer'"),
    (lambda d: d["methods"][3].__setitem__("name", "*/ int evil; /*"),
     "methods[3].name: '*/ int evil; /*' does not match"),
    (lambda d: d.__setitem__("collective", "bcast x"), "collective: 'bcast x' does not match"),
    (lambda d: d.__setitem__("collective", "bcast\n"), "collective: 'bcast\\n' does not match"),
    (lambda d: d["axes"][1]["cuts"].__setitem__(2, math.nan),
     "axes[1].cuts[2]: nan is not of type 'integer'"),
    (lambda d: d["axes"][1]["cuts"].__setitem__(2, "64"),
     "axes[1].cuts[2]: '64' is not of type 'integer'"),
    (lambda d: d["axes"][0].__setitem__("cuts", []), "axes[0].cuts: 0 cuts for 15 values"),
    (lambda d: d.__setitem__("version", "1"),
     "version: '1' is a string; this collsel reads the integer 1"),
    (lambda d: d.__setitem__("version", True), "version: True is not an integer"),
])
def test_known_holes_are_refused_by_query_and_emit(trees, tmp_path, edit, expected):
    doc = copy.deepcopy(trees["2d"])
    edit(doc)
    bad = _write(tmp_path, doc)
    status, out, err = collsel_main("query", bad, "--comm-size", 4, "--msg-size", 8)
    assert not out
    _one_line(status, err, f"{bad}: ", expected)
    for target in ("c", "ompi-dec-fixed", "ompi-rules"):
        status, _, err = collsel_main("emit", bad, "--target", target, "--out", tmp_path / "o")
        _one_line(status, err, f"{bad}: ", expected)
        assert not (tmp_path / "o").exists()


def test_free_text_in_a_tree_cannot_leave_its_comment(trees, tmp_path):
    """Names from the file are not used (they are re-derived), and category labels and the z
    column name, which may hold any text, are escaped in C comments."""
    from collsel.core.trees import treefile
    from collsel.sinks.emit.targets import EmitOptions, emit
    doc = copy.deepcopy(trees["3d-category"])
    doc["axes"][2]["name"] = "*/ int evil; /* ??/"
    doc["axes"][2]["labels"] = ["*/ int a; /*", "b\\ ??/ \u00e9 \u2603"]
    path = _write(tmp_path, doc)
    loaded = treefile.load(path)
    loaded.method_names = ["*/ int evil2; /*"] * len(loaded.method_names)   # ignored
    files = emit("c", [loaded], EmitOptions(prefix="t")).files
    text = files["decision.c"] + files["decision.h"]
    assert "evil2" not in text and "\\x2a/ int evil; /\\x2a ?\\x3f/" in text
    assert "\\u2603" in text and text.isascii()
    for name, code in files.items():
        (tmp_path / name).write_text(code)
    r = __import__("subprocess").run(
        ["gcc", "-std=c99", "-Wall", "-Wextra", "-Werror", "-pedantic", "-c",
         str(tmp_path / "decision.c"), "-o", str(tmp_path / "d.o")], capture_output=True,
        text=True)
    assert r.returncode == 0, r.stderr
    # every comment closes where the template closes it: no code outside the known lines
    stripped = re.sub(r"/\*.*?\*/", "", files["decision.c"], flags=re.S)
    assert "evil" not in stripped and "int a" not in stripped


def test_trees_made_in_memory_are_held_to_the_targets_limits(trees, tmp_path):
    """A library user can edit a loaded tree; the emitters check what they print themselves."""
    from collsel.core.trees import treefile
    from collsel.errors import InputError
    from collsel.sinks.emit.targets import EmitOptions, emit
    base = treefile.load(_write(tmp_path, trees["3d"]))
    for edit, target, expected in [
            (lambda t: t.axes[2].cuts.__setitem__(0, 2**70), "c", "ppn cut 1180591620717411303424 "
             "out of range [-9223372036854775807, 9223372036854775807]"),
            (lambda t: t.axes[1].cuts.__setitem__(0, math.nan), "c",
             "msg_size cut nan is not an integer"),
            (lambda t: t.axes[0].cuts.__setitem__(0, 2**31), "c",
             "comm_size cut 2147483648 out of range [2, 2147483647]"),
            (lambda t: setattr(t, "collective", "bcast x"), "c",
             "collective 'bcast x' is not a collective name"),
            (lambda t: setattr(t, "collective", "a*/b"), "c-array",
             "collective 'a*/b' is not a collective name"),
            (lambda t: setattr(t, "collective", "bcast x"), "blob",
             "collective name 'bcast x' is not 1-16 printable ASCII characters"),
            (lambda t: t.methods.__setitem__(0, type(t.methods[0])(2**31, 0, 0)), "c",
             "methods[0]: algorithm 2147483648 out of range")]:
        loaded = copy.deepcopy(base)
        edit(loaded)
        with pytest.raises(InputError) as e:
            emit(target, [loaded], EmitOptions())
        assert expected in str(e.value) and "\n" not in str(e.value), str(e.value)
    with pytest.raises(InputError, match=re.escape("--prefix 'x; int y' is not a C identifier")):
        emit("c", [base], EmitOptions(prefix="x; int y"))


def test_int64_min_is_written_as_a_c_expression(tmp_path):
    from collsel.sinks.emit import text
    assert text.c_literal(-2**63, "int64") == "(-9223372036854775807LL - 1)"
    assert text.c_literal(-5, "int64") == "-5LL" and text.c_literal(2**64 - 1, "uint64") \
        == "18446744073709551615u"
    src = tmp_path / "m.c"
    src.write_text("#include <stdint.h>\nint f(int64_t z, uint64_t m);\nint f(int64_t z, uint64_t"
                   f" m) {{ return z < {text.c_literal(-2**63 + 1, 'int64')} || z >= "
                   f"{text.c_literal(-2**63, 'int64')} || m < "
                   f"{text.c_literal(2**64 - 1, 'uint64')}; }}\n")
    r = __import__("subprocess").run(["gcc", "-std=c99", "-Wall", "-Wextra", "-Werror",
                                      "-pedantic", "-c", str(src), "-o", str(tmp_path / "m.o")],
                                     capture_output=True, text=True)
    assert r.returncode == 0, r.stderr


@pytest.mark.parametrize("flag, value", [("--prefix", "x; int y"), ("--prefix", "9x"),
                                         ("--prefix", ""), ("--array-name", "a[1]")])
def test_bad_identifiers_are_refused_before_any_output(trees, tmp_path, flag, value):
    tree = _write(tmp_path, trees["2d"])
    target = "c-array" if flag == "--array-name" else "c"
    status, _, err = collsel_main("emit", tree, "--target", target, flag, value,
                                  "--out", tmp_path / "o")
    _one_line(status, err, f"{flag} {value!r} is not a C identifier")
    assert not (tmp_path / "o").exists()
    if flag == "--prefix":
        status, _, err = collsel_main("build", REPO / "bench-data" / "bcast-sweep.csv",
                                      "--collective", "bcast", flag, value, "--out",
                                      tmp_path / "b")
        _one_line(status, err, f"{flag} {value!r} is not a C identifier")
        assert not (tmp_path / "b").exists()


def _table(path, rows):
    path.write_text("collective,comm_size,msg_size,algorithm,segsize,time_us\n"
                    + "".join(f"bcast,2,{m},{a},0,{t}\n" for m, a, t in rows))
    return path


def test_tables_hold_message_sizes_every_target_carries(tmp_path):
    """A table's msg_size stops at 2^63 - 1 (Open MPI's rules read a long): beyond, `build`
    refuses the row and writes nothing; at the bound, every target but mpich-json (int
    thresholds, refused when it emits) takes the tree."""
    beyond = _table(tmp_path / "beyond.csv", [(1, 1, 1.0), (1, 6, 2.0), (2**63, 1, 1.5),
                                              (2**63, 6, 1.2)])
    status, _, err = collsel_main("build", beyond, "--collective", "bcast", "--out", tmp_path / "b")
    _one_line(status, err, f"{beyond}:4: msg_size 9223372036854775808 out of range [0, "
              "9223372036854775807] (2^63 - 1: Open MPI's rules files read message sizes as a "
              "long)")
    assert not (tmp_path / "b").exists()
    at = _table(tmp_path / "at.csv", [(1, 1, 1.0), (1, 6, 2.0), (2**63 - 2, 1, 1.5),
                                      (2**63 - 2, 6, 1.2), (2**63 - 1, 1, 1.5),
                                      (2**63 - 1, 6, 1.6)])
    status, _, err = collsel_main("build", at, "--collective", "bcast", "--out", tmp_path / "t")
    assert status == 0, err
    for target in ("c", "blob", "ompi-rules", "ompi-json"):
        status, _, err = collsel_main("emit", tmp_path / "t" / "tree.json", "--target", target,
                                      "--out", tmp_path / f"e-{target}")
        assert status == 0, (target, err)


def test_rules_targets_refuse_message_sizes_beyond_a_long(tmp_path):
    """A tree.json (made by hand, or by a collsel before tables were bounded) may hold message
    sizes up to 2^64 - 1 (a size_t): the rules targets refuse a cut beyond a long."""
    table = _table(tmp_path / "t.csv", [(1, 1, 1.5), (1, 6, 1.2), (2, 1, 2.5), (2, 6, 3.5)])
    status, _, err = collsel_main("build", table, "--collective", "bcast", "--out", tmp_path / "t")
    assert status == 0, err
    tree = tmp_path / "t" / "tree.json"
    doc = json.loads(tree.read_text())
    doc["axes"][1].update(values=[2**63, 2**64 - 1], labels=[str(2**63), str(2**64 - 1)],
                          cuts=[13043817825332782212])
    tree.write_text(json.dumps(doc))
    for target in ("ompi-rules", "ompi-json"):
        status, _, err = collsel_main("emit", tmp_path / "t" / "tree.json", "--target", target,
                                      "--out", tmp_path / "r")
        _one_line(status, err, f"--target {target}: msg_size cut 13043817825332782212 out of "
                  "range [1, 9223372036854775807]; Open MPI rules take message sizes up to a long")
        assert not (tmp_path / "r").exists()
    # the C targets print it exactly
    status, _, err = collsel_main("emit", tmp_path / "t" / "tree.json", "--target", "c",
                                  "--out", tmp_path / "c")
    assert status == 0, err
    assert "msg_size < 13043817825332782212u" in (tmp_path / "c" / "decision.c").read_text()


@pytest.mark.parametrize("command", ["query", "check-rules"])
@pytest.mark.parametrize("point, expected", [
    (("0", "0"), "comm_size 0 out of range [1, 2147483647]"),
    (("-1", "5"), "comm_size -1 out of range [1, 2147483647]"),
    (("2147483648", "5"), "comm_size 2147483648 out of range"),
    (("4", "-1"), "msg_size -1 out of range [0, 18446744073709551615]"),
    (("4", str(2**64)), "msg_size 18446744073709551616 out of range"),
    (("4", "1e3"), "msg_size '1e3' is not a size or count (accepted: 4096, 4K, 4KiB, 64M, 1G, "
                   "2^20 (K, M, G = 2^10, 2^20, 2^30))")])
def test_query_and_check_rules_check_points_alike(trees, tmp_path, command, point, expected):
    tree = _write(tmp_path, trees["2d"])
    rules = tmp_path / "rules.conf"
    status, _, err = collsel_main("emit", tree, "--target", "ompi-rules", "--out", rules)
    assert status == 0, err
    if command == "query":
        flags = ["query", tree, "--comm-size", point[0], "--msg-size", point[1]]
        where = "--comm-size" if "comm_size" in expected else "--msg-size"
    else:
        flags = ["check-rules", rules, "--collective", "bcast", "--query", *point]
        where = "--query"
    status, out, err = collsel_main(*flags)
    assert not out
    _one_line(status, err, f"{where}: {expected}")
    points = tmp_path / "points"
    points.write_text(f"4 8\n{point[0]} {point[1]}\n")
    flags = (["query", tree] if command == "query" else
             ["check-rules", rules, "--collective", "bcast"]) + ["--points", points]
    status, out, err = collsel_main(*flags)
    assert not out
    _one_line(status, err, f"{points}:2: {expected}")


def test_mpich_base_that_is_no_json_for_mpich_is_one_line(trees, tmp_path):
    tree = _write(tmp_path, trees["2d"])
    for name, data in (("nan.json", b'{"collective=bcast": {"x": NaN}}'),
                       ("latin1.json", b'{"collective=bcast": "\xe9"}'),
                       ("deep.json", b"[" * 100000)):
        base = tmp_path / name
        base.write_bytes(data)
        status, _, err = collsel_main("emit", tree, "--target", "mpich-json", "--mpich-base",
                                      base, "--out", tmp_path / "o.json")
        _one_line(status, err, f"{base}")
        assert not (tmp_path / "o.json").exists()
