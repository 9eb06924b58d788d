"""`collsel emit --target mpich-json`: structure, first-match semantics, int32, mapping, bytes.

The base file here is a small selection tree written for these tests in MPICH's grammar (the
real one, compiled into libmpich, is what collsel reads by default; tests/integration use it)."""
import contextlib
import io
import json
import subprocess
import types

import pytest

from collsel import cli
from collsel.core.trees import treefile
from collsel.sinks.emit import mpich_json
from collsel.sources.measure import mpich_base
from mpich_walk import csel_walk

BASE = {
    "collective=bcast": {
        "comm_type=intra": {"comm_size<8": {"avg_msg_size=any": {
            "algorithm=MPIR_Bcast_intra_binomial": {}}},
            "comm_size=any": {"avg_msg_size=any": {
                "algorithm=MPIR_Bcast_intra_scatter_ring_allgather": {}}}},
        "comm_type=inter": {"algorithm=MPIR_Bcast_inter_remote_send_local_bcast": {}}},
    "collective=barrier": {"comm_type=intra": {"algorithm=MPIR_Barrier_intra_dissemination": {}},
                           "comm_type=inter": {"algorithm=MPIR_Barrier_inter_bcast": {}}},
    "collective=reduce": {
        "comm_type=intra": {"avg_msg_size=any": {"algorithm=MPIR_Reduce_intra_binomial": {}}},
        "comm_type=inter": {"algorithm=MPIR_Reduce_inter_local_reduce_remote_send": {}}},
}
ALL_BINOMIAL = ("bcast:1=binomial,bcast:2=binomial,bcast:3=binomial,bcast:4=binomial,"
                "bcast:5=binomial,bcast:7=binomial,"
                "reduce:1=binomial,reduce:2=binomial,reduce:3=binomial,reduce:4=binomial,"
                "reduce:6=binomial")


def run(*args):
    """collsel in this process (start-up costs seconds on a loaded machine)."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = cli.main([str(a) for a in args])
    return types.SimpleNamespace(returncode=code, stdout=out.getvalue(), stderr=err.getvalue())


def write_table(path, collective, rows):
    with open(path, "w") as f:
        f.write("collective,comm_size,msg_size,algorithm,segsize,time_us\n")
        for p, m, alg, t in rows:
            f.write(f"{collective},{p},{m},{alg},0,{t}\n")
    return path


@pytest.fixture(scope="module")
def base(tmp_path_factory):
    path = tmp_path_factory.mktemp("mpich") / "generic.json"
    path.write_text(json.dumps(BASE, indent=1))
    return path


@pytest.fixture(scope="module")
def trees(tmp_path_factory, tanjaderin):
    d = tmp_path_factory.mktemp("mpich_trees")
    out = {}
    for c in ("bcast", "reduce"):
        r = run("build", tanjaderin[c], "--collective", c, "--max-depth", "4",
                "--out", d / c)
        assert r.returncode == 0, r.stderr
        out[c] = d / c / "tree.json"
    return out


def emit(trees, base, out, *extra):
    return run("emit", "--target", "mpich-json", *trees, "--mpich-base", base, "--out", out,
               *extra)


def search(node, p, m, count, builtin=True, nodes=None):
    """MPICH's first-match walk (tests/mpich_walk.py: csel.c's prune, then search) on a flat
    (one-level) communicator of a single-threaded program (spread over `nodes` nodes, which
    comm_avg_ppn needs); bcast and reduce compare avg_msg_size = m."""
    return csel_walk(node, "bcast", p, m, built_in=builtin, parent=False, count=count,
                     nodes=nodes)


def test_structure_semantics_and_copied_collectives(trees, base, tmp_path):
    out = tmp_path / "sel.json"
    r = emit([trees["bcast"], trees["reduce"]], base, out, "--mpich-map", ALL_BINOMIAL)
    assert r.returncode == 0, r.stderr
    doc = json.loads(out.read_text())
    assert list(doc) == list(BASE)                       # base order kept
    assert doc["collective=barrier"] == BASE["collective=barrier"]
    for c in ("bcast", "reduce"):
        sub = doc[f"collective={c}"]
        assert sub["comm_type=inter"] == BASE[f"collective={c}"]["comm_type=inter"]
        sizes = list(sub["comm_type=intra"])
        assert sizes[-1] == "comm_size=any" and all(k.startswith("comm_size<=")
                                                    for k in sizes[:-1])
        p_values = [int(k.split("<=")[1]) for k in sizes[:-1]]
        assert p_values == sorted(set(p_values))
        for chain in sub["comm_type=intra"].values():
            keys = list(chain)
            assert keys[-1] == "avg_msg_size=any"
            m_values = [int(k.split("<=")[1]) for k in keys[:-1]]
            assert m_values == sorted(set(m_values))
            assert all(0 <= v <= 2**31 - 1 for v in m_values + p_values)
        # Every (P, m), on and between the measured values, selects the tree's method's name.
        loaded = treefile.load(trees[c])
        names = mpich_json.leaf_names(loaded, mpich_json.parse_map(ALL_BINOMIAL, [c]), c)
        ps = list(range(1, 40))
        ms = sorted({v + d for v in loaded.axes[1].values for d in (-1, 0, 1)} | {2**31 - 1})
        grid = [(p, m) for p in ps for m in ms]
        want = loaded.decide([[p for p, _ in grid], [m for _, m in grid]])
        for (p, m), k in zip(grid, want):
            expected = names[loaded.methods[k].algorithm]
            if expected == mpich_json.DEFER:         # MPICH's own decision, from the base file
                expected = search(BASE[f"collective={c}"], p, m, count=max(m // 4, 1))
            got = search(sub, p, m, count=max(m // 4, 1))
            if expected == mpich_json.REDUCE_SCATTER_GATHER and max(m // 4, 1) < \
                    1 << (p.bit_length() - 1):
                expected = "MPIR_Reduce_intra_binomial"
            assert got == expected, (c, p, m)


def test_deterministic_bytes(trees, base, tmp_path):
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    for out in (a, b):
        assert emit([trees["bcast"]], base, out, "--mpich-map", ALL_BINOMIAL).returncode == 0
    assert a.read_bytes() == b.read_bytes()


def test_unmapped_method_is_one_line_exit_2(trees, base, tmp_path):
    out = tmp_path / "o.json"
    r = subprocess.run(["collsel", "emit", "--target", "mpich-json", str(trees["bcast"]),
                        "--mpich-base", str(base), "--out", str(out)],
                       capture_output=True, text=True)
    assert r.returncode == 2 and r.stderr.count("\n") == 1
    assert "no MPICH counterpart" in r.stderr and "--mpich-map" in r.stderr
    assert not out.exists()


@pytest.mark.parametrize("mapping, message", [
    ("bcast:7=fastest", "unknown MPICH bcast algorithm 'fastest'"),
    ("7binomial", "expected [COLL:]ID=NAME"),
    ("gatherv:7=linear", "no MPICH mapping for collective 'gatherv'"),
])
def test_bad_map_is_one_line_exit_2(trees, base, tmp_path, mapping, message):
    r = emit([trees["bcast"]], base, tmp_path / "o.json", "--mpich-map", mapping)
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and message in r.stderr, r.stderr


def test_needs_base_and_known_collective(trees, base, tmp_path, monkeypatch):
    monkeypatch.setattr(mpich_base, "library_dirs", lambda: [str(tmp_path / "nowhere")])
    r = run("emit", "--target", "mpich-json", trees["bcast"], "--out", tmp_path / "o.json")
    assert r.returncode == 2 and r.stderr.count("\n") == 1
    assert "found no libmpich.so in " + str(tmp_path / "nowhere") in r.stderr
    assert "apt-get install libmpich-dev" in r.stderr and "--mpich-base FILE" in r.stderr
    assert not (tmp_path / "o.json").exists()
    nobcast = tmp_path / "nobcast.json"
    nobcast.write_text(json.dumps({k: v for k, v in BASE.items() if "bcast" not in k}))
    r = emit([trees["bcast"]], nobcast, tmp_path / "o.json", "--mpich-map", ALL_BINOMIAL)
    assert r.returncode == 2 and "no collective=bcast to replace" in r.stderr
    broken = tmp_path / "broken.json"
    broken.write_text('{\n"collective=bcast": {,}\n}')
    r = emit([trees["bcast"]], broken, tmp_path / "o.json", "--mpich-map", ALL_BINOMIAL)
    assert r.returncode == 2 and f"{broken}:2:" in r.stderr


def test_threshold_beyond_int32_is_an_error(base, tmp_path):
    rows = [(p, m, alg, t) for p in (2, 4) for m, fast in ((2**30, 6), (2**32, 8))
            for alg, t in ((6, 10.0 if fast == 6 else 20.0), (8, 10.0 if fast == 8 else 20.0))]
    table = write_table(tmp_path / "big.csv", "bcast", rows)
    r = run("build", table, "--collective", "bcast", "--out", tmp_path / "t")
    assert r.returncode == 0, r.stderr
    r = emit([tmp_path / "t" / "tree.json"], base, tmp_path / "o.json")
    assert r.returncode == 2 and "does not fit in a 32-bit int" in r.stderr, r.stderr


MPICH_HEADER = "# algorithm_family=mpich\ncollective,comm_size,msg_size,algorithm,segsize,time_us\n"


def write_mpich_table(path, rows):
    path.write_text(MPICH_HEADER + "".join(f"{c},{p},{m},{alg},0,{t}\n"
                                           for c, p, m, alg, t in rows))
    return path


def build(table, out, collective="bcast"):
    r = run("build", table, "--collective", collective, "--out", out)
    assert r.returncode == 0, r.stderr
    return out / "tree.json"


def test_mpich_tree_names_mpich_algorithms_directly(base, tmp_path):
    """A tree of MPICH's own algorithms needs no --mpich-map; the map is refused for it."""
    rows = [("reduce", p, m, alg, t) for p in (2, 4) for m in (8, 65536)
            for alg, t in (("binomial", 1 if m == 8 else 9), ("reduce_scatter_gather", 5),
                           ("nb", 7))]
    tree = build(write_mpich_table(tmp_path / "r.csv", rows), tmp_path / "t", "reduce")
    out = tmp_path / "sel.json"
    r = emit([tree], base, out)
    assert r.returncode == 0, r.stderr
    sub = json.loads(out.read_text())["collective=reduce"]
    assert search(sub, 2, 8, count=2) == "MPIR_Reduce_intra_binomial"
    assert search(sub, 4, 65536, count=16384) == mpich_json.REDUCE_SCATTER_GATHER
    assert search(sub, 4, 65536, count=1) == "MPIR_Reduce_intra_binomial"   # count < pof2 guard
    r = emit([tree], base, tmp_path / "o.json", "--mpich-map", "reduce:1=binomial")
    assert r.returncode == 2 and r.stderr.count("\n") == 1, r.stderr
    assert "names MPICH's own algorithms" in r.stderr and "--mpich-map" in r.stderr


def test_defer_leaf_is_the_base_files_own_decision(base, tmp_path):
    """Where `auto` (MPICH's own decision) was fastest the leaf holds the base file's intra
    subtree, with comm_size<8 written comm_size<=7: below a message-size node MPICH reads
    comm_size<8 as <= 8, and P = 8 would get binomial where MPICH itself picks scatter_ring."""
    rows = [("bcast", p, m, alg, t) for p in (4, 8, 16) for m in (8, 1048576)
            for alg, t in (("binomial", 2 if m == 8 else 900), ("auto", 3 if m == 8 else 400))]
    tree = build(write_mpich_table(tmp_path / "b.csv", rows), tmp_path / "t")
    out = tmp_path / "sel.json"
    assert emit([tree], base, out).returncode == 0
    sub = json.loads(out.read_text())["collective=bcast"]
    chain = sub["comm_type=intra"]["comm_size=any"]
    assert list(chain) == ["avg_msg_size<=2896", "avg_msg_size=any"]
    spliced = chain["avg_msg_size=any"]
    assert list(spliced) == ["comm_type=intra"]
    assert list(spliced["comm_type=intra"]) == ["comm_size<=7", "comm_size=any"]
    own = BASE["collective=bcast"]
    for p in range(2, 20):
        assert search(sub, p, 8, 8) == "MPIR_Bcast_intra_binomial"
        assert search(sub, p, 2**20, 2**20) == search(own, p, 2**20, 2**20), p
    assert search(sub, 8, 2**20, 2**20) == "MPIR_Bcast_intra_scatter_ring_allgather"
    # Without the rewrite the walk would differ at P = 8 (what the rewrite is for).
    verbatim = {"comm_type=intra": BASE["collective=bcast"]["comm_type=intra"]}
    assert search({"avg_msg_size=any": verbatim}, 8, 2**20, 2**20) == "MPIR_Bcast_intra_binomial"


def test_open_mpi_tree_defers_too(base, tmp_path):
    """Algorithm 0 of an Open MPI tree (its fixed decision) is MPICH's own decision here."""
    rows = [(p, m, alg, t) for p in (4, 8) for m in (8, 1048576)
            for alg, t in ((6, 2 if m == 8 else 900), (0, 3 if m == 8 else 400))]
    table = write_table(tmp_path / "o.csv", "bcast", rows)
    tree = build(table, tmp_path / "t")
    out = tmp_path / "sel.json"
    assert emit([tree], base, out).returncode == 0
    sub = json.loads(out.read_text())["collective=bcast"]
    assert search(sub, 8, 2**20, 2**20) == "MPIR_Bcast_intra_scatter_ring_allgather"
    assert search(sub, 7, 2**20, 2**20) == "MPIR_Bcast_intra_binomial"


def fake_library(path, selections):
    """A file laid out as libmpich holds its selections: NUL-terminated JSON strings among
    other bytes (the ch4 one, of MPIDI_ leaves, first)."""
    path.write_bytes(b"\x7fELF\x00junk\x00" + b"".join(
        json.dumps(sel, separators=(",", ":")).encode() + b"\x00rest\x00" for sel in selections))
    return path


def test_base_is_read_from_the_installed_library(trees, tmp_path, monkeypatch):
    """Without --mpich-base, the MPIR selection compiled into libmpich is the base (not the
    ch4 one beside it), and the output says where it came from."""
    ch4 = {"collective=bcast": {"comm_type=intra": {"composition=MPIDI_Bcast_alpha": {}}}}
    fake_library(tmp_path / "libmpich.so.12.2.2", [ch4, BASE])
    monkeypatch.setattr(mpich_base, "library_dirs", lambda: [str(tmp_path)])
    out, ref = tmp_path / "o.json", tmp_path / "ref.json"
    (tmp_path / "base.json").write_text(json.dumps(BASE))
    r = run("emit", "--target", "mpich-json", trees["bcast"], "--mpich-map", ALL_BINOMIAL,
            "--out", out)
    assert r.returncode == 0, r.stderr
    assert f"base: MPICH's built-in selection in {tmp_path / 'libmpich.so.12.2.2'}" in r.stdout
    assert emit([trees["bcast"]], tmp_path / "base.json", ref,
                "--mpich-map", ALL_BINOMIAL).returncode == 0
    assert out.read_bytes() == ref.read_bytes()


def test_mpich_5s_libmpi_is_found_after_libmpich(tmp_path):
    """MPICH 5 installs libmpi.so.12 (no libmpich): found in a directory without libmpich,
    libmpich first where both are; Open MPI's libmpi.so.40 is never taken."""
    mpich5, both = tmp_path / "mpich5", tmp_path / "both"
    for d in (mpich5, both):
        d.mkdir()
        fake_library(d / "libmpi.so.12.5.0", [BASE])
        fake_library(d / "libmpi.so.40.30.0", [])
    fake_library(both / "libmpich.so.12.2.2", [BASE])
    assert mpich_base.find_library([str(mpich5)]) == str(mpich5 / "libmpi.so.12.5.0")
    assert mpich_base.find_library([str(both), str(mpich5)]) == str(both / "libmpich.so.12.2.2")
    assert mpich_base.selection_text(mpich_base.find_library([str(mpich5)])) is not None


def test_library_without_a_selection_is_one_line(trees, tmp_path, monkeypatch):
    fake_library(tmp_path / "libmpich.so.12", [])
    monkeypatch.setattr(mpich_base, "library_dirs", lambda: [str(tmp_path)])
    r = run("emit", "--target", "mpich-json", trees["bcast"], "--out", tmp_path / "o.json")
    assert r.returncode == 2 and r.stderr.count("\n") == 1
    assert "no built-in MPIR selection" in r.stderr and "--mpich-base FILE" in r.stderr
    assert not (tmp_path / "o.json").exists()


@pytest.mark.skipif(mpich_base.find_library() is None, reason="MPICH is not installed")
def test_installed_mpich_holds_its_selection():
    text, where = mpich_base.installed_selection()
    base = mpich_json.parse_base(text, where)
    assert {"collective=bcast", "collective=reduce", "collective=barrier"} <= set(base)
    assert "comm_type=inter" in base["collective=bcast"]


def test_map_is_asked_only_for_the_leaves_methods(base, tmp_path):
    """A table measuring many Open MPI methods, whose tree's leaves use only linear (1) and
    binomial (6): the map is asked for 1 alone, and the message lists MPICH's names."""
    rows = [(p, m, alg, (1.0 if alg == (1 if m < 1024 else 6) else 2.0 + alg))
            for p in (2, 4, 8) for m in (8, 64, 4096, 65536) for alg in range(1, 8)]
    write_table(tmp_path / "t.csv", "bcast", rows)
    assert run("build", tmp_path / "t.csv", "--collective", "bcast",
               "--out", tmp_path / "t").returncode == 0
    tree, out = tmp_path / "t" / "tree.json", tmp_path / "o.json"
    r = run("emit", "--target", "mpich-json", tree, "--mpich-base", base, "--out", out)
    assert r.returncode == 2 and r.stderr.count("\n") == 1, r.stderr
    assert "algorithm(s) 1 (basic_linear), which have no MPICH counterpart" in r.stderr
    assert "MPICH bcast algorithms: binomial, nb, smp, scatter_recursive_doubling_allgather, " \
        "scatter_ring_allgather" in r.stderr
    assert "--mpich-map bcast:1=binomial" in r.stderr and not out.exists()
    r = run("emit", "--target", "mpich-json", tree, "--mpich-base", base,
            "--mpich-map", "bcast:1=binomial", "--out", out)
    assert r.returncode == 0, r.stderr


def test_mpich_family_tree_needs_no_map(base, tmp_path):
    path = tmp_path / "m.csv"
    path.write_text("# algorithm_family=mpich\ncollective,comm_size,msg_size,algorithm,segsize,"
                    "time_us\n" + "".join(
                        f"bcast,{p},{m},{a},0,{1.0 if a == 'nb' else 2.0}\n"
                        for p in (2, 4) for m in (8, 4096)
                        for a in ("binomial", "nb", "smp")))
    assert run("build", path, "--collective", "bcast", "--out", tmp_path / "t").returncode == 0
    r = run("emit", "--target", "mpich-json", tmp_path / "t" / "tree.json", "--mpich-base", base,
            "--out", tmp_path / "o.json")
    assert r.returncode == 0, r.stderr
    assert "MPIR_Bcast_allcomm_nb" in (tmp_path / "o.json").read_text()
