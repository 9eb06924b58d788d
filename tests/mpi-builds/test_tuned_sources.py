"""mpi-builds/ompi-patched/tuned_sources.py: scan and exscan get a coll/tuned fixed decision
(what coll/basic runs) that a generated function can replace, and the module is pointed at it."""
import pathlib
import subprocess
import sys

REPO = pathlib.Path(__file__).resolve().parents[2]
HERE = REPO / "mpi-builds" / "ompi-patched"
sys.path.insert(0, str(HERE))
import splice  # noqa: E402
import tuned_sources  # noqa: E402

MODULE = """\
    tuned_module->super.coll_bcast      = ompi_coll_tuned_bcast_intra_dec_fixed;
    tuned_module->super.coll_exscan     = NULL;
    tuned_module->super.coll_gatherv    = NULL;
    tuned_module->super.coll_scan       = NULL;
"""


def tree(tmp_path, module=MODULE):
    tuned = tmp_path / tuned_sources.TUNED
    tuned.mkdir(parents=True)
    (tuned / (tuned_sources.DECISION + ".orig")).write_text("int other(void)\n{\n}\n")
    (tuned / tuned_sources.MODULE).write_text(module)
    return tuned


def test_the_base_defines_scan_and_exscan_once_for_the_splice(tmp_path):
    tree(tmp_path)
    text = tuned_sources.base_text(str(tmp_path))
    assert text.startswith("int other(void)\n")
    for c in ("scan", "exscan"):
        name = f"ompi_coll_tuned_{c}_intra_dec_fixed"
        assert len(splice.definitions(text, name)) == 1
        assert f"return ompi_coll_base_{c}_intra_linear(" in text


def test_the_module_gives_scan_and_exscan_to_them_once(tmp_path):
    tuned = tree(tmp_path)
    assert tuned_sources.hook_module(str(tmp_path)) is True
    text = (tuned / tuned_sources.MODULE).read_text()
    assert "coll_exscan     = ompi_coll_tuned_exscan_intra_dec_fixed;" in text
    assert "coll_scan       = ompi_coll_tuned_scan_intra_dec_fixed;" in text
    assert "coll_gatherv    = NULL;" in text
    assert (tuned / (tuned_sources.MODULE + ".orig")).read_text() == MODULE
    assert tuned_sources.hook_module(str(tmp_path)) is False     # unchanged: make recompiles nothing


def test_a_module_that_is_not_4_1_4s_is_refused_in_one_line(tmp_path):
    other = MODULE.replace("coll_scan       = NULL", "coll_scan = NULL")
    tuned = tree(tmp_path, other)
    r = subprocess.run([sys.executable, str(HERE / "tuned_sources.py"), str(tmp_path)],
                       capture_output=True, text=True)
    assert r.returncode == 1
    assert r.stderr == ("tuned_sources.py: error: coll_tuned_module.c: expected the line "
                        "'tuned_module->super.coll_scan       = NULL;' once, found 0: not Open "
                        "MPI 4.1.4's file\n")
    assert (tuned / tuned_sources.MODULE).read_text() == other      # left as it was
