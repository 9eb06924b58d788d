"""The package under test is the installed one when `make test` says so.

`make test` builds the wheel, installs it into a fresh build/venv and runs pytest with that
venv's python and COLLSEL_EXPECT_INSTALLED=1: then `import collsel`, the `collsel` script and the
package data (templates, presets, benchmark source, schemas) must all come from the venv's
site-packages, never from this checkout's generator/ folder.
"""
import os
import pathlib
import shutil
import subprocess
import sys

import pytest

import collsel

REPO = pathlib.Path(__file__).resolve().parents[2]
SOURCE = REPO / "generator"
EXPECT_INSTALLED = os.environ.get("COLLSEL_EXPECT_INSTALLED") == "1"
installed_only = pytest.mark.skipif(not EXPECT_INSTALLED,
                                    reason="COLLSEL_EXPECT_INSTALLED=1 is set by `make test`")


def _inside(path, folder):
    return pathlib.Path(path).resolve().is_relative_to(folder.resolve())


@installed_only
def test_collsel_is_imported_from_site_packages():
    where = pathlib.Path(collsel.__file__).resolve()
    assert not _inside(where, SOURCE), f"collsel imported from the checkout: {where}"
    assert "site-packages" in where.parts, where
    assert _inside(where, pathlib.Path(sys.prefix)), (where, sys.prefix)


@installed_only
def test_console_script_is_the_venvs():
    script = shutil.which("collsel")
    assert script, "no collsel on PATH"
    assert _inside(script, pathlib.Path(sys.prefix)), (script, sys.prefix)
    done = subprocess.run([script, "--version"], capture_output=True, text=True)
    assert done.returncode == 0 and done.stdout.strip() == f"collsel {collsel.__version__}"


@installed_only
def test_a_subprocess_imports_the_same_package(tmp_path):
    done = subprocess.run([sys.executable, "-c", "import collsel; print(collsel.__file__)"],
                          capture_output=True, text=True, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert pathlib.Path(done.stdout.strip()).resolve() == pathlib.Path(collsel.__file__).resolve()


def test_package_data_is_beside_the_package():
    """Templates, presets, the benchmark and probe sources and schemas are found where collsel is (a wheel's
    site-packages or the checkout alike), through importlib.resources."""
    from importlib import resources

    from collsel.core import schemas
    from collsel.sources.measure import benchmark_program, coll_probe
    from collsel.research.models import params

    package = pathlib.Path(collsel.__file__).resolve().parent
    found = [benchmark_program.source_path(), coll_probe.source_path(),
             *map(params.preset_path, params.PRESETS)]
    found += [benchmark_program.source_dir() / benchmark_program.CAPABILITIES_FILE]
    found += [pathlib.Path(schemas.__file__).parent / f for f in schemas.FILES.values()]
    for path in found:
        assert path.is_file() and _inside(path, package), path
    # the runtime's probe and MPI_T code, compiled into the benchmark: links to runtime/ and
    # include/ in the checkout, copies in a wheel
    for name in ("collsel_probe.c", "collsel_probe.h", "collsel_cvar.c", "collsel_cvar.h"):
        path = benchmark_program.source_dir() / name
        assert path.is_file() and _inside(path.parent, package), path
        assert path.is_symlink() != EXPECT_INSTALLED, path
    # collsel.templates maps the checkout's top-level templates/ (pyproject.toml); in a wheel
    # they are collsel/templates/ in site-packages.
    for name in ("decision.c.j2", "tree_blob.c.j2", "report.html.j2"):
        path = pathlib.Path(str(resources.files("collsel.templates").joinpath(name)))
        assert path.is_file(), path
        assert _inside(path, package if EXPECT_INSTALLED else REPO / "templates"), path
    assert schemas.schema("tree")["title"]


def test_commands_work_outside_the_checkout(tmp_path):
    """An installed collsel needs nothing from the checkout but its input files."""
    def run(*args):
        done = subprocess.run([sys.executable, "-m", "collsel.cli", *map(str, args)],
                              capture_output=True, text=True, cwd=tmp_path)
        assert done.returncode == 0, (args, done.stderr)
        return done

    run("model", "predict", "--preset", "gros", "--comm-sizes", "2-8", "--msg-sizes", "16K-64K",
        "--out", "x.csv")
    assert (tmp_path / "x.csv").read_text().count("\nbcast,") == 7 * 3 * 6
    run("build", REPO / "bench-data" / "bcast-sweep.csv", "--collective", "bcast",
        "--max-depth", "3", "--out", "t")
    assert run("query", "t/tree.json", "--comm-size", 8, "--msg-size", 65536).stdout.strip()
    run("emit", "t/tree.json", "--target", "blob", "--out", "t.bin")
    assert (tmp_path / "t.bin").read_bytes()[:4] == b"CSLT"
    # the sweep names the benchmark binary after the digest of the packaged C source
    from collsel.sources.measure import benchmark_program
    if shutil.which("mpirun") is None:   # the sweep needs the launcher even for --dry-run
        return
    dry = run("sweep", "--collective", "bcast", "--comm-sizes", 2, "--msg-sizes", "1K",
              "--out", "s.csv", "--dry-run").stdout
    assert f"collsel_bench-{benchmark_program.source_digest()[:16]}" in dry
    assert not (tmp_path / "s.csv").exists()
