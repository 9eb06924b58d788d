"""`collsel emit --target c-fast` (O(1) cells + cell table) agrees with `collsel query` on every
point tests/unit/sinks/emit/test_c_ladder.py checks, is deterministic, and refuses trees it
cannot tabulate."""
import pathlib
import subprocess

import pytest

from helpers import CFLAGS, DRIVER, agree_with_query, build, collsel, synthetic_3d

BENCH_DATA = pathlib.Path(__file__).parents[4] / "bench-data"


def _emit_fast(out):
    fast = out / "fast"
    r = collsel("emit", "--target", "c-fast", out / "tree.json", "--prefix", "t", "--out", fast)
    assert r.returncode == 0, r.stderr
    return fast


def _agree_fast(out, n_random):
    fast = _emit_fast(out)
    exe = fast / "decide"
    subprocess.run(["gcc", *CFLAGS, "-DDECIDE=t_decide", f"-I{fast}", str(DRIVER),
                    str(fast / "decision.c"), "-o", str(exe)], check=True)
    agree_with_query(out, exe, n_random)


@pytest.mark.parametrize("collective,options", [
    ("bcast", ["--split", "replicate"]),
    ("reduce", ["--max-depth", "2", "--leaf", "penalty"])])
def test_c_fast_agrees_with_query_tanjaderin(tmp_path, tanjaderin, collective, options):
    out = build(tmp_path, tanjaderin[collective], collective, *options)
    _agree_fast(out, n_random=20_000)


@pytest.mark.slow
def test_c_fast_agrees_on_shipped_bcast_sweep(tmp_path):
    out = build(tmp_path, BENCH_DATA / "bcast-sweep.csv", "bcast")
    _agree_fast(out, n_random=20_000)


def test_c_fast_is_deterministic(tmp_path, tanjaderin):
    out = build(tmp_path, tanjaderin["bcast"], "bcast")
    first = (_emit_fast(out) / "decision.c").read_bytes()
    assert (_emit_fast(out) / "decision.c").read_bytes() == first


def test_c_fast_refuses_3_axis_tree(tmp_path):
    out = build(tmp_path, synthetic_3d(tmp_path / "t3.csv"), "bcast", "--z", "ppn")
    r = collsel("emit", "--target", "c-fast", out / "tree.json", "--out", tmp_path / "fast")
    assert r.returncode == 2
    assert r.stderr.count("\n") == 1 and "c-fast takes 2-axis trees" in r.stderr
    assert not (tmp_path / "fast").exists()
