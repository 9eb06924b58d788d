"""libcollsel's COLLSEL_TRACE lines go to stderr one write(2) each (runtime/libcollsel/rules.c,
lc_trace): two ranks' lines once interleaved mid-line. tests/c/trace_one_write.c interposes
write() and counts the calls."""
import shutil
import subprocess

import pytest

from helpers import CFLAGS, REPO


@pytest.mark.skipif(shutil.which("gcc") is None, reason="gcc not installed; run make setup")
def test_each_trace_line_is_one_write(tmp_path):
    exe = tmp_path / "trace_one_write"
    subprocess.run(["gcc", *CFLAGS, f"-I{REPO / 'include'}", f"-I{REPO / 'runtime'}",
                    f"-I{REPO / 'runtime' / 'libcollsel'}",
                    str(REPO / "tests" / "c" / "trace_one_write.c"),
                    str(REPO / "runtime" / "libcollsel" / "rules.c"),
                    str(REPO / "runtime" / "collsel_tree.c"), "-o", str(exe)],
                   check=True, timeout=120)
    r = subprocess.run([str(exe)], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stdout + r.stderr


def test_every_trace_site_uses_it():
    """No trace line of libcollsel is printed another way (fprintf would be split again)."""
    for path in (REPO / "runtime" / "libcollsel").glob("*.c"):
        text = path.read_text()
        assert 'fprintf(stderr, "collsel-trace' not in text, path
