"""`collsel emit --target blob / c-array`: deterministic bytes, the documented layout, refusals.

The C runtime's agreement with `collsel query` is tested by `make test-runtime` (Catch2)."""
import json
import re
import struct
import subprocess
import zlib

import pytest

from collsel.core.trees import treefile
from collsel.core.mpi.algorithms import Method
from collsel.errors import InputError
from collsel.sinks.emit import blob


def run(*args):
    return subprocess.run(["collsel", *map(str, args)], capture_output=True, text=True)


@pytest.fixture(scope="module")
def built(tmp_path_factory, tanjaderin):
    out = tmp_path_factory.mktemp("blob") / "tree"
    r = run("build", tanjaderin["bcast"], "--collective", "bcast", "--max-depth", "3", "--out", out)
    assert r.returncode == 0, r.stderr
    return out


def emit(tree, target, out, *extra):
    r = run("emit", tree, "--target", target, "--out", out, *extra)
    assert r.returncode == 0, r.stderr
    return out.read_bytes()


def test_blob_is_deterministic_and_matches_the_documented_layout(built, tmp_path):
    blob = emit(built / "tree.json", "blob", tmp_path / "a.bin")
    assert emit(built / "tree.json", "blob", tmp_path / "b.bin") == blob
    doc = json.loads((built / "tree.json").read_text())
    first, method = doc["nodes"]["first_child"], doc["nodes"]["method"]
    magic, version, axes, mode, width, n, m, family, reserved, name = struct.unpack_from(
        "<4sBBBBIHBB16s", blob)
    assert (magic, version, axes, mode, width, family, reserved) == (b"CSLT", 2, 2, 0, 2, 0, 0)
    assert (n, m, name.rstrip(b"\0")) == (len(first), len(doc["methods"]), b"bcast")
    pos = 32
    cells = []
    for kind in (0, 1):
        k, res, cells_d = struct.unpack_from("<BBH", blob, pos)
        assert (k, res) == (kind, 0)
        cells.append(cells_d)
        pos += 4
    assert cells == [len(a["values"]) for a in doc["axes"]]
    assert list(struct.unpack_from(f"<{cells[0] - 1}I", blob, pos)) == doc["axes"][0]["cuts"]
    pos += 4 * (cells[0] - 1)
    assert list(struct.unpack_from(f"<{cells[1] - 1}Q", blob, pos)) == doc["axes"][1]["cuts"]
    pos += 8 * (cells[1] - 1)
    for meth in doc["methods"]:
        assert struct.unpack_from("<HHIHBB", blob, pos) == (
            meth["algorithm"], meth["faninout"], meth["segsize"], 0, 0, 0)   # flat: groups 0
        pos += 12
    words = struct.unpack_from(f"<{n}H", blob, pos)
    for w, fc, mi in zip(words, first, method):
        assert w == (0x8000 | mi if fc == -1 else fc)
    pos += 2 * n
    assert len(blob) == pos + 4
    assert struct.unpack_from("<I", blob, pos)[0] == zlib.crc32(blob[:pos])


def test_node_width_4_and_c_array_hold_the_same_tree(built, tmp_path):
    blob2 = emit(built / "tree.json", "blob", tmp_path / "w2.bin")
    blob4 = emit(built / "tree.json", "blob", tmp_path / "w4.bin", "--node-width", "4")
    n = struct.unpack_from("<I", blob2, 8)[0]
    assert blob4[7] == 4 and len(blob4) == len(blob2) + 2 * n
    text = emit(built / "tree.json", "c-array", tmp_path / "t.c", "--array-name", "my_tree").decode()
    assert "static const unsigned char my_tree[%d] = {" % len(blob2) in text
    body = text[text.index("{", text.index("my_tree[")) + 1:text.rindex("}")]
    assert bytes(int(x, 16) for x in re.findall(r"0x([0-9a-f]{2})", body)) == blob2
    assert emit(built / "tree.json", "c-array", tmp_path / "t2.c", "--array-name",
                "my_tree").decode() == text


def test_c_array_compiles(built, tmp_path):
    emit(built / "tree.json", "c-array", tmp_path / "t.c")
    main = tmp_path / "main.c"
    main.write_text('#include "t.c"\nint main(void) { return collsel_bcast_tree[0] != 0x43; }\n')
    subprocess.run(["gcc", "-std=c99", "-Wall", "-Wextra", "-Werror", "-pedantic", "-c", str(main),
                    "-o", str(tmp_path / "main.o")], check=True)


@pytest.mark.parametrize("edit,message", [
    (lambda d: d["nodes"]["split"][0].__setitem__(0, d["nodes"]["split"][0][0] + 1),
     "nodes.split[0][0]: 5 is not the balanced split of node 0's box on axis comm_size (4)"),
    (lambda d: d["build"].__setitem__("split", "diagonal"), "build.split: 'diagonal' is not one of"),
    (lambda d: d.__setitem__("collective", "a much too long collective name"),
     "collective: 'a much too long collective name' does not match"),
    (lambda d: d["methods"][0].__setitem__("segsize", 2**31),
     "methods[0].segsize: 2147483648 is greater than the maximum"),
])
def test_trees_it_cannot_encode_exactly_are_refused(built, tmp_path, edit, message):
    doc = json.loads((built / "tree.json").read_text())
    edit(doc)
    bad = tmp_path / "tree.json"
    bad.write_text(json.dumps(doc))
    r = run("emit", bad, "--target", "blob", "--out", tmp_path / "o.bin")
    assert r.returncode == 2 and r.stderr.count("\n") == 1, r.stderr
    assert message in r.stderr and not (tmp_path / "o.bin").exists()


@pytest.mark.parametrize("edit,message", [
    (lambda t: t.build.__setitem__("split", "diagonal"), "unknown split mode"),
    (lambda t: t.methods.__setitem__(0, Method(t.methods[0].algorithm, 2**31, 0)), "out of range"),
    (lambda t: t.tree.split.__setitem__((0, 0), t.tree.split[0, 0] + 1),
     "nodes.split[0][0]: 5 is not the balanced split"),
    (lambda t: t.tree.first_child.__setitem__(0, 2), "nodes.first_child[0]: 2, but node 0's "
     "children come breadth first, at 1"),
    (lambda t: setattr(t, "collective", "a much too long collective name"),
     "1-16 printable ASCII"),
])
def test_encoder_refuses_what_the_schema_would_have(built, edit, message):
    """The tree.json schema rejects these files first; the encoder still refuses such trees made
    in memory by a library user."""
    loaded = treefile.load(built / "tree.json")
    edit(loaded)
    with pytest.raises(InputError, match=re.escape(message)):
        blob.encode(loaded)


def test_bad_array_name(built, tmp_path):
    r = run("emit", built / "tree.json", "--target", "c-array", "--array-name", "9x",
            "--out", tmp_path / "o.c")
    assert r.returncode == 2 and "not a C identifier" in r.stderr
