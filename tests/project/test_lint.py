"""The package's source passes ruff (pycodestyle and pyflakes, generator/collsel) and mypy
(collsel.core), as pyproject.toml configures them; beside the layer check (test_layers.py)."""
import pathlib
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]
CONFIG = ROOT / "pyproject.toml"


def run(*args):
    return subprocess.run([sys.executable, "-m", *args], capture_output=True, text=True,
                          cwd=ROOT, timeout=600)


def test_ruff_passes():
    done = run("ruff", "check", "--no-cache", "--config", str(CONFIG), "generator/collsel")
    assert done.returncode == 0, done.stdout + done.stderr


def test_mypy_passes_on_the_core(tmp_path):
    done = run("mypy", "--config-file", str(CONFIG), "--cache-dir", str(tmp_path / "cache"))
    assert done.returncode == 0, done.stdout + done.stderr
    assert "no issues found" in done.stdout


def test_ruff_finds_a_fault(tmp_path):
    """The check is live: an unused import is reported."""
    bad = tmp_path / "bad.py"
    bad.write_text("import os\n")
    done = run("ruff", "check", "--no-cache", "--config", str(CONFIG), str(bad))
    assert done.returncode == 1 and "F401" in done.stdout
