"""The C runtime's one refusal rule (runtime/collsel_tree.c REFUSALS, collsel_tree_refused) is
core/fallbacks.py's: every refusal entry (`runs` None) with its P range `runs_only`, keyed by the
name the blob carries, and nothing more; both runtimes (coll/collsel, libcollsel) call it."""
import re
from pathlib import Path

from collsel.core import fallbacks
from collsel.core.algorithms import BLOB_NAMES

REPO = Path(__file__).resolve().parents[2]
ENTRY = re.compile(r'\{"([a-z_]+)", (\d+), (\d+), (\d+)\}')


def c_refusals():
    """{(blob name, algorithm): (runs_from, runs_below)} from collsel_tree.c's REFUSALS[]."""
    text = (REPO / "runtime" / "collsel_tree.c").read_text()
    body = re.search(r"static const struct refusal REFUSALS\[\] = \{(.*?)\n\};", text, re.S)
    assert body, "REFUSALS[] not found in runtime/collsel_tree.c"
    entries = ENTRY.findall(body.group(1))
    table = {(c, int(a)): (int(lo), int(hi)) for c, a, lo, hi in entries}
    assert len(table) == len(entries), "an entry twice"
    return table


def test_c_refusals_are_core_fallbacks_refusals():
    want = {(BLOB_NAMES.get(f.collective, f.collective), f.algorithm): tuple(f.runs_only)
            for f in fallbacks.REFUSALS}
    assert want, "core/fallbacks.py lists no refusal"
    assert c_refusals() == want


def test_one_refusal_per_collective():
    """A loaded tree keeps one refusal (collsel_tree.c find_refusal)."""
    names = [c for c, _ in c_refusals()]
    assert len(names) == len(set(names))


def test_both_runtimes_call_the_rule_and_keep_no_table():
    for path in ("runtime/ompi-component/coll_collsel_colls.c",
                 "runtime/libcollsel/force_openmpi.c"):
        text = (REPO / path).read_text()
        assert "collsel_tree_refused(" in text, path
        assert not re.search(r"two_procs?\[", text), path
