"""The JSON Schemas of tree.json and model parameter files (collsel/core/schemas/).

Every file collsel writes fits its schema; malformed documents are refused by the commands with
one stderr line naming the file and the JSON location, exit status 2; no mutation of a valid
document crashes the loaders.
"""
import contextlib
import copy
import io
import json
import math
import pathlib
import subprocess

import jsonschema
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from collsel import cli
from collsel.core import schemas
from collsel.core.mpi import algorithms
from collsel.core.trees import treefile
from collsel.core.trees.tree import LEAF_RULES, SPLITS
from collsel.errors import InputError
from collsel.sinks.emit.targets import TARGETS, EmitOptions, emit
from collsel.research.models import params
from collsel.research.models.bcast import TLOP_PARAMS

REPO = pathlib.Path(__file__).resolve().parents[4]
SWEEPS = {c: REPO / "bench-data" / f"{c}-sweep.csv" for c in ("bcast", "reduce")}
PARAM_FILES = [params.preset_path(n) for n in params.PRESETS] + [
    REPO / "bench-data" / "models" / "vm-fitted.json"]


def collsel(*args):
    """The `collsel` console script (the installed one under `make test`), in a subprocess."""
    return subprocess.run(["collsel", *map(str, args)], capture_output=True, text=True)


def collsel_main(*args):
    """collsel's main() in this process (fast): exit status, stdout and stderr as a subprocess's."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = cli.main([str(a) for a in args])
    return subprocess.CompletedProcess(args, status, out.getvalue(), err.getvalue())


def table_3d(path, categorical):
    """A small table with a third column ppn, numeric or categorical."""
    zs = ["bynode", "byslot", "bycore"] if categorical else [1, 2, 4]
    lines = ["collective,comm_size,msg_size,algorithm,segsize,time_us,ppn"]
    for p in (2, 3, 4, 8, 16):
        for m in (0, 1, 64, 4096, 1 << 20):
            for zi, z in enumerate(zs):
                for alg, seg, cost in ((1, 0, p * (1 + m / 1e3)),
                                       (6, 0, math.log2(p + 1) * (3 + m / 1e3) * (1 + zi)),
                                       (3, 8192, 40 + m / 4e3 * (1 + zi / 2))):
                    lines.append(f"bcast,{p},{m},{alg},{seg},{cost:.4f},{z}")
    path.write_text("\n".join(lines) + "\n")
    return path


BUILDS = {
    "bcast-exact": ("bcast", ["--no-defer"]),      # BAD_TREES' counts: 763 nodes, 33 methods
    "bcast-exact-defer": ("bcast", []),
    "bcast-depth3": ("bcast", ["--max-depth", "3"]),
    "bcast-replicate-penalty": ("bcast", ["--split", "replicate", "--leaf", "penalty"]),
    "reduce-threshold": ("reduce", ["--threshold", "90"]),
    "reduce-depth0": ("reduce", ["--max-depth", "0"]),
    "z-numeric": ("bcast", ["--z", "ppn"]),
    "z-category": ("bcast", ["--z", "ppn", "--split", "replicate"]),
}


class _Built(dict):
    """tree.json files `collsel build` writes, by case name, each built on first use (the fast
    tests need two of them; the slow schema test all)."""

    def __init__(self, directory):
        super().__init__()
        self.directory = directory

    def __missing__(self, name):
        collective, options = BUILDS[name]
        if name.startswith("z-"):
            table = table_3d(self.directory / f"{name}.csv", name == "z-category")
        else:
            table = SWEEPS[collective]
        r = collsel_main("build", table, "--collective", collective, "--out",
                         self.directory / name, *options)
        assert r.returncode == 0, r.stderr
        self[name] = self.directory / name / "tree.json"
        return self[name]

    def items(self):
        return [(name, self[name]) for name in BUILDS]


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    return _Built(tmp_path_factory.mktemp("schemas"))


@pytest.fixture(scope="module")
def tree_doc(built):
    return json.loads(built["bcast-exact"].read_text())


# --- the schema files ---------------------------------------------------------------------------

@pytest.mark.parametrize("name", sorted(schemas.FILES))
def test_schema_files_are_valid_and_published(name):
    doc = schemas.schema(name)
    jsonschema.Draft202012Validator.check_schema(doc)
    assert doc["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert doc["$id"].startswith("urn:collsel:schema:") and doc["title"] and doc["description"]
    # package data, found through importlib.resources (also in an installed wheel)
    assert (pathlib.Path(schemas.__file__).parent / schemas.FILES[name]).is_file()


def _algorithm_enums(branches, prefix):
    out = {}
    for branch in branches:
        cond = branch["if"]["properties"]
        collective = cond["collective"]["const"]
        if "algorithm_family" in cond:              # tree.json: ids of each algorithm family
            collective = (cond["algorithm_family"]["const"], collective)
        node = branch["then"]
        for key in prefix:
            node = node["properties"][key] if key != "items" else node["items"]
        algorithm = node["properties"]["algorithm"]
        # Open MPI bcast/reduce: the ids, or (anyOf) a hierarchical method's range
        out[collective] = algorithm["enum"] if "enum" in algorithm else algorithm["anyOf"][0]["enum"]
    return out


def test_schemas_agree_with_the_code():
    """Enumerations the schemas repeat from the code are the code's."""
    candidates = {c: sorted(set(ids) - {algorithms.BASELINE_ALGORITHM})
                  for c, ids in algorithms.ALGORITHMS.items()}
    tree = schemas.schema("tree")
    family_ids = {(f, c): sorted(ids) for f in algorithms.FAMILIES     # 0 = defer to the MPI
                  for c, ids in algorithms.registry(f).items()}
    assert _algorithm_enums(tree["allOf"], ["methods", "items"]) == family_ids
    assert tree["properties"]["format"]["const"] == treefile.FORMAT
    assert tree["properties"]["version"]["const"] == treefile.VERSION
    build = tree["properties"]["build"]["properties"]
    assert set(build["split"]["enum"]) == set(SPLITS) and set(build["leaf"]["enum"]) == set(LEAF_RULES)
    model = schemas.schema("model-params")
    method = model["properties"]["methods"]["items"]
    assert method["properties"]["collective"]["enum"] == list(algorithms.ALGORITHMS)
    assert _algorithm_enums(method["allOf"], []) == candidates
    assert list(method["properties"]["tlop"]["properties"]) == list(TLOP_PARAMS)
    assert model["properties"]["format"]["const"] == params.FORMAT
    assert model["properties"]["version"]["const"] == params.VERSION


# --- every file collsel writes is valid -----------------------------------------------------------

@pytest.mark.slow
def test_built_trees_fit_the_schema(built):
    for name, path in built.items():
        doc = json.loads(path.read_text())
        assert schemas.validator("tree").is_valid(doc), name
        loaded = treefile.load(path)
        assert loaded.tree.node_count == len(doc["nodes"]["first_child"])
        r = collsel_main("query", path, "--comm-size", 4, "--msg-size", 8,
                    *(["--z", "byslot" if name == "z-category" else 2] if name.startswith("z-")
                      else []))
        assert r.returncode == 0 and r.stdout.strip(), (name, r.stderr)


@pytest.mark.parametrize("path", PARAM_FILES, ids=lambda p: p.name)
def test_shipped_parameter_files_fit_the_schema(path):
    doc = json.loads(path.read_text())
    assert schemas.validator("model-params").is_valid(doc)
    assert params.load(path).methods


def test_fitted_parameters_document_fits_the_schema():
    """What `collsel model fit` writes (fit.fit + the header model.py adds) loads back."""
    doc = json.loads((REPO / "bench-data" / "models" / "vm-fitted.json").read_text())
    doc["platform"]["unit_size"] = None
    doc["hockney"] = None
    doc["platform"]["gamma1"] = None
    assert schemas.validator("model-params").is_valid(doc)


# --- malformed tree.json: one located line, exit 2 ----------------------------------------------

def _set(*keys_value):
    *keys, value = keys_value

    def change(doc):
        node = doc
        for k in keys[:-1]:
            node = node[k]
        node[keys[-1]] = value(node[keys[-1]]) if callable(value) else value
    return change


def _delete(*keys):
    def change(doc):
        node = doc
        for k in keys[:-1]:
            node = node[k]
        del node[keys[-1]]
    return change


def _first_leaf(doc):
    return doc["nodes"]["first_child"].index(-1)


BAD_TREES = {
    "first_child_below_minimum": (_set("nodes", "first_child", 3, -7),
                                  "nodes.first_child[3]: -7 is less than the minimum of -1"),
    "first_child_2_to_40": (_set("nodes", "first_child", 3, 2**40),
                            "nodes.first_child[3]: 1099511627776 is greater than the maximum"),
    "nan_cut": (_set("axes", 1, "cuts", 2, float("nan")),
                "axes[1].cuts[2]: nan is not of type 'integer'"),
    "infinite_cut": (_set("axes", 1, "cuts", 2, float("inf")),
                     "axes[1].cuts[2]: inf is not of type 'integer'"),
    "string_cut": (_set("axes", 1, "cuts", 2, "64"),
                   "axes[1].cuts[2]: '64' is not of type 'integer'"),
    "float_cut": (_set("axes", 1, "cuts", 2, 3.0), "axes[1].cuts[2]: 3.0 is not of type 'integer'"),
    "cut_2_to_64": (_set("axes", 1, "cuts", 2, 2**64),
                    "axes[1].cuts[2]: 18446744073709551616 is greater than the maximum"),
    "negative_cut": (_set("axes", 0, "cuts", 0, -1), "axes[0].cuts[0]: -1 is less than"),
    "empty_cuts": (_set("axes", 1, "cuts", []), "axes[1].cuts: 0 cuts for"),
    "decreasing_cuts": (_set("axes", 1, "cuts", 2, 1), "axes[1].cuts[2]: 1 is not above the cut"),
    "labels_short": (_set("axes", 0, "labels", lambda v: v[:-1]), "axes[0].labels: "),
    "wrong_axis_kind": (_set("axes", 1, "kind", "linear"), "axes[1].kind: 'log2' was expected"),
    "one_axis": (_set("axes", lambda v: v[:1]), "axes: "),
    "unknown_algorithm": (_set("methods", 0, "algorithm", 12),
                          # anyOf: a coll/tuned id or a hierarchical method's range
                          "methods[0].algorithm: 12 is not valid under any of the given schemas"),
    "negative_method": (_set("methods", 0, "algorithm", -1), "methods[0].algorithm: -1 is less than the minimum of 0"),
    "negative_segsize": (_set("methods", 1, "segsize", -8192),
                         "methods[1].segsize: -8192 is less than the minimum of 0"),
    "no_methods": (_set("methods", []), "methods: []"),
    "method_without_name": (_delete("methods", 0, "name"),
                            "methods[0]: 'name' is a required property"),
    "no_nodes": (_delete("nodes"), "'nodes' is a required property"),
    "nodes_not_object": (_set("nodes", [1, 2, 3]), "nodes: [1, 2, 3] is not of type 'object'"),
    "no_nodes_at_all": (_set("nodes", "first_child", []), "nodes.first_child: []"),
    "method_column_short": (_set("nodes", "method", lambda v: v[:-1]),
                            "nodes.method: 762 entries for 763 nodes"),
    "split_rows": (_set("nodes", "split", lambda v: v[:1]), "nodes.split: "),
    "child_out_of_range": (_set("nodes", "first_child", 0, 762),
                           "nodes.first_child[0]: 762 does not link node 0"),
    "child_before_parent": (lambda d: d["nodes"]["first_child"].__setitem__(
        d["nodes"]["first_child"].index(max(d["nodes"]["first_child"])), 0),
        "does not link node"),
    "leaf_method_out_of_range": (lambda d: d["nodes"]["method"].__setitem__(_first_leaf(d), 33),
                                 "leaf method 33 is not an index of the 33 methods"),
    "split_beyond_axis": (_set("nodes", "split", 0, 0, 99),
                          "nodes.split[0][0]: 99 is neither -2 nor a cell boundary"),
    "bool_depth": (_set("nodes", "depth", 0, True), "nodes.depth[0]: True is not of type"),
    "unknown_split_mode": (_set("build", "split", "quad"),
                           "build.split: 'quad' is not one of ['balanced', 'replicate']"),
    "max_depth_text": (_set("build", "max_depth", "3"), "build.max_depth: '3' is not of type"),
    "extra_key": (_set("comment", "hi"), "Additional properties are not allowed ('comment'"),
    "empty_collective": (_set("collective", ""), "collective: ''"),
}


def _one_line_error(r, path, expected):
    assert r.returncode == 2, (r.returncode, r.stderr)
    lines = r.stderr.splitlines()
    assert len(lines) == 1 and "Traceback" not in r.stderr, r.stderr
    assert lines[0].startswith(f"collsel: error: {path}:"), lines[0]
    assert expected in lines[0], lines[0]
    assert len(lines[0]) - len(str(path)) < 250, lines[0]    # the path is pytest's


@pytest.mark.parametrize("case", sorted(BAD_TREES))
def test_query_refuses_malformed_tree(tmp_path, tree_doc, case):
    change, expected = BAD_TREES[case]
    doc = copy.deepcopy(tree_doc)
    assert len(doc["nodes"]["first_child"]) == 763 and len(doc["methods"]) == 33  # as in BAD_TREES
    change(doc)
    bad = tmp_path / f"{case}.json"
    bad.write_text(json.dumps(doc))
    r = collsel_main("query", bad, "--comm-size", 4, "--msg-size", 8)
    _one_line_error(r, bad, expected)


@pytest.mark.parametrize("text, expected", [
    ("", "not JSON"), ("[1, 2]", "not a collsel-tree file"), ('{"format": "collsel-tree"}',
                                                             "version missing"),
    ('{"format": "collsel-tree", "version": 1}', "'collective' is a required property"),
    ("[" * 100000, "not JSON"), (b"\xff\xfe{}", "not JSON")])
def test_query_refuses_non_tree_json(tmp_path, text, expected):
    bad = tmp_path / "t.json"
    bad.write_bytes(text if isinstance(text, bytes) else text.encode())
    _one_line_error(collsel("query", bad, "--comm-size", 4, "--msg-size", 8), bad, expected)


@pytest.mark.parametrize("case", ["first_child_2_to_40", "nan_cut", "no_nodes"])
def test_console_script_refuses_malformed_tree(tmp_path, tree_doc, case):
    change, expected = BAD_TREES[case]
    doc = copy.deepcopy(tree_doc)
    change(doc)
    bad = tmp_path / "t.json"
    bad.write_text(json.dumps(doc))
    _one_line_error(collsel("query", bad, "--comm-size", 4, "--msg-size", 8), bad, expected)


def test_emit_refuses_malformed_tree(tmp_path, tree_doc):
    doc = copy.deepcopy(tree_doc)
    doc["nodes"]["first_child"][5] = 2**40
    bad = tmp_path / "t.json"
    bad.write_text(json.dumps(doc))
    for target in ("c", "blob", "ompi-dec-fixed"):
        r = collsel("emit", bad, "--target", target, "--out", tmp_path / f"o-{target}")
        _one_line_error(r, bad, "nodes.first_child[5]: 1099511627776 is greater than the maximum")
        assert not (tmp_path / f"o-{target}").exists()


# --- malformed model parameter files ------------------------------------------------------------

BAD_PARAMS = {
    "algorithm_zero": (_set("methods", 1, "algorithm", 0),
                       "methods[1].algorithm: 0 is not one of [1, 2, 3, 4, 5, 6, 7, 8, 9]"),
    "algorithm_unknown": (_set("methods", 1, "algorithm", 10), "methods[1].algorithm: 10 is not"),
    "algorithm_text": (_set("methods", 1, "algorithm", "chain"), "methods[1].algorithm: 'chain'"),
    "collective_unknown": (_set("methods", 1, "collective", "alltoallw"),
                           "methods[1].collective: 'alltoallw' is not one of"),
    "nan_parameter": (_set("methods", 1, "tlop", "L0", float("nan")),
                      "methods[1].tlop.L0: nan is not of type 'number'"),
    "negative_parameter": (_set("methods", 1, "tlop", "L0", -1.0),
                           "methods[1].tlop.L0: -1.0 is less than the minimum of 0"),
    "unknown_parameter": (_set("methods", 1, "tlop", "L2", 1.0),
                          "methods[1].tlop: Additional properties are not allowed ('L2'"),
    "no_tlop": (_delete("methods", 0, "tlop"), "methods[0]: 'tlop' is a required property"),
    "segsize_float": (_set("methods", 2, "segsize", 8192.5), "methods[2].segsize: 8192.5 is not"),
    "duplicate_method": (lambda d: d["methods"].append(copy.deepcopy(d["methods"][1])),
                         "methods[6]: bcast algorithm 2 segsize 8192 again (as methods[1])"),
    "no_methods": (_set("methods", []), "methods: []"),
    "methods_object": (_set("methods", {"a": 1}), "methods: {'a': 1} is not of type 'array'"),
    "no_platform": (_delete("platform"), "'platform' is a required property"),
    "gamma_for_one_process": (_set("platform", "gamma1", "1", 1.0), 'platform.gamma1: \'1\' does not match'),
    "gamma_zero": (_set("platform", "gamma1", "9", 0),
                   'platform.gamma1["9"]: 0 is less than or equal to the minimum of 0'),
    "ranks_per_node_float": (_set("platform", "ranks_per_node", 2.5),
                             "platform.ranks_per_node: 2.5 is not of type 'integer', 'null'"),
    "ranks_per_node_zero": (_set("platform", "ranks_per_node", 0),
                            "platform.ranks_per_node: 0 is less than the minimum of 1"),
    "Q_text": (_set("platform", "Q", "12"), "platform.Q: '12' is not of type 'number', 'null'"),
    "misspelt_platform_key": (_set("platform", "ranks_per_nodes", 4),
                              "platform: Additional properties are not allowed ('ranks_per_nodes'"),
    "hockney_half": (_set("hockney", {"alpha": 1.0}), "hockney: 'beta' is a required property"),
    "name_number": (_set("name", 7), "name: 7 is not of type 'string'"),
    "wrong_format": (_set("format", "collsel-tree"), "not a model parameter file"),
    "version_2": (_set("version", 2), "version 2 unsupported (this collsel reads version 1)"),
}


@pytest.fixture(scope="module")
def gros():
    return json.loads(params.preset_path("gros").read_text())


@pytest.mark.parametrize("case", sorted(BAD_PARAMS))
def test_model_predict_refuses_malformed_parameters(tmp_path, gros, case):
    change, expected = BAD_PARAMS[case]
    doc = copy.deepcopy(gros)
    assert len(doc["methods"]) == 6 and doc["methods"][1]["algorithm"] == 2
    change(doc)
    bad = tmp_path / f"{case}.json"
    bad.write_text(json.dumps(doc, indent=1))
    out = tmp_path / "x.csv"
    r = collsel_main("model", "predict", bad, "--comm-sizes", "2-4", "--msg-sizes", "1K",
                     "--out", out)
    _one_line_error(r, bad, expected)
    assert not out.exists()


@pytest.mark.parametrize("case", ["nan_parameter", "algorithm_zero"])
def test_console_script_refuses_malformed_parameters(tmp_path, gros, case):
    change, expected = BAD_PARAMS[case]
    doc = copy.deepcopy(gros)
    change(doc)
    bad = tmp_path / "p.json"
    bad.write_text(json.dumps(doc))
    out = tmp_path / "x.csv"
    r = collsel("model", "predict", bad, "--comm-sizes", "2", "--msg-sizes", "1", "--out", out)
    _one_line_error(r, bad, expected)
    assert not out.exists()


def test_model_validate_refuses_malformed_parameters(tmp_path, gros):
    doc = copy.deepcopy(gros)
    doc["methods"][3]["tlop"]["o1"] = "fast"
    bad = tmp_path / "p.json"
    bad.write_text(json.dumps(doc))
    r = collsel("model", "validate", bad, "--measured", SWEEPS["bcast"])
    _one_line_error(r, bad, "methods[3].tlop.o1: 'fast' is not of type 'number'")


def test_long_values_are_cut_in_messages(tmp_path, tree_doc):
    doc = copy.deepcopy(tree_doc)
    doc["nodes"]["split"] = {"rows": doc["nodes"]["split"]}
    bad = tmp_path / "t.json"
    bad.write_text(json.dumps(doc))
    r = collsel("query", bad, "--comm-size", 4, "--msg-size", 8)
    _one_line_error(r, bad, "nodes.split: {'rows': [[")


# --- no mutation crashes a loader ----------------------------------------------------------------

JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(-2**70, 2**70) | st.sampled_from(
        [-2, -1, 0, 1, 2**31, 2**63, 2**64, float("nan"), float("inf"), 0.5, 3.0])
    | st.text(max_size=4),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner,
                                                                max_size=3),
    max_leaves=5)


def _paths(node, prefix=()):
    yield prefix
    if isinstance(node, dict):
        for k, v in node.items():
            yield from _paths(v, prefix + (k,))
    elif isinstance(node, list):
        for i, v in enumerate(node[:6]):   # the first items stand for the rest
            yield from _paths(v, prefix + (i,))


def _mutate(doc, path, value, delete):
    if not path:
        return value
    node = doc
    for k in path[:-1]:
        node = node[k]
    if delete:
        del node[path[-1]]
    else:
        node[path[-1]] = value
    return doc


def _check_loads_or_one_line(load, doc, name):
    try:
        loaded = load(doc)
    except InputError as e:
        message = str(e)
        assert message.startswith(f"{name}: ") and "\n" not in message, message
        return None
    return loaded


@pytest.fixture(scope="module")
def small_tree(built):
    return json.loads(built["bcast-depth3"].read_text())


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_tree_mutations_load_or_fail_in_one_line(small_tree, data):
    doc = copy.deepcopy(small_tree)
    path = data.draw(st.sampled_from(list(_paths(doc))))
    delete = bool(path) and data.draw(st.booleans())
    doc = _mutate(doc, path, data.draw(JSON_VALUES), delete)
    loaded = _check_loads_or_one_line(lambda d: treefile.LoadedTree(d, "m.json"), doc, "m.json")
    if loaded is not None:   # a document that loads answers queries, and every target takes it
        methods = loaded.decide([[a.values[0], a.values[-1]] for a in loaded.axes])
        assert all(0 <= m < len(loaded.methods) for m in methods)
        for target in sorted(TARGETS):
            try:
                emit(target, [loaded], EmitOptions(mpich_map={"bcast": {
                    m.algorithm: "binomial" for m in loaded.methods}}, mpich_base={
                        "collective=bcast": {"comm_type=inter": {}}}))
            except InputError as e:
                assert "\n" not in str(e)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_parameter_mutations_load_or_fail_in_one_line(tmp_path, gros, data):
    doc = copy.deepcopy(gros)
    path = data.draw(st.sampled_from(list(_paths(doc))))
    delete = bool(path) and data.draw(st.booleans())
    doc = _mutate(doc, path, data.draw(JSON_VALUES), delete)
    f = tmp_path / "m.json"
    f.write_text(json.dumps(doc))
    loaded = _check_loads_or_one_line(params.load, f, str(f))
    if loaded is not None:
        assert loaded.methods and loaded.platform.gamma(0, 4) > 0
