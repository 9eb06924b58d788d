"""The package's layers are enforced: import-linter's contracts (pyproject.toml) hold, and an
import that breaks them makes the check fail."""
import pathlib
import shutil
import subprocess
import sys

import collsel

CONFIG = pathlib.Path(__file__).resolve().parents[2] / "pyproject.toml"


def lint_imports(*, pythonpath=None, cwd):
    env = None
    if pythonpath:
        import os
        env = {**os.environ, "PYTHONPATH": str(pythonpath)}
    return subprocess.run([sys.executable, "-c", "from importlinter.cli import lint_imports_command;"
                           " lint_imports_command()", "--config", str(CONFIG), "--no-cache"],
                          capture_output=True, text=True, cwd=cwd, env=env, timeout=300)


def test_contracts_hold(tmp_path):
    done = lint_imports(cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "5 kept, 0 broken" in done.stdout


def copy_package(tmp_path):
    pkg = pathlib.Path(collsel.__file__).resolve().parent
    copy = tmp_path / "site" / "collsel"
    shutil.copytree(pkg, copy, ignore=shutil.ignore_patterns("__pycache__"))
    return copy


def test_core_importing_a_sink_breaks_the_layers(tmp_path):
    copy = copy_package(tmp_path)
    module = copy / "core" / "trees" / "penalty.py"
    module.write_text(module.read_text() + "\nfrom collsel.sinks.emit import targets  # noqa\n")
    done = lint_imports(pythonpath=copy.parent, cwd=tmp_path)
    assert done.returncode != 0
    assert ("layers: cli > commands > pipeline | research > sources | sinks > cluster > core > "
            "errors BROKEN" in " ".join(done.stdout.split()))     # import-linter wraps at 80
    assert "collsel.core.trees.penalty -> collsel.sinks.emit.targets" in done.stdout


def test_a_source_importing_a_sink_breaks_the_layers(tmp_path):
    copy = copy_package(tmp_path)
    module = copy / "sources" / "sweep" / "plan.py"
    module.write_text(module.read_text() + "\nfrom collsel.sinks.report import compute  # noqa\n")
    done = lint_imports(pythonpath=copy.parent, cwd=tmp_path)
    assert done.returncode != 0 and "BROKEN" in done.stdout


def test_a_sink_reading_tables_breaks_its_contract(tmp_path):
    copy = copy_package(tmp_path)
    module = copy / "sinks" / "emit" / "blob.py"
    module.write_text(module.read_text() + "\nfrom collsel.core.maps import table  # noqa\n")
    done = lint_imports(pythonpath=copy.parent, cwd=tmp_path)
    assert done.returncode != 0
    assert "collsel.sinks.emit.blob -> collsel.core.maps.table" in done.stdout


def test_an_import_circle_breaks_its_contract(tmp_path):
    """Two modules of one package importing each other break the contract, even when one of
    the imports sits inside a function (grimp reads function bodies too)."""
    copy = copy_package(tmp_path)
    module = copy / "sinks" / "emit" / "targets.py"
    module.write_text(module.read_text() + "\n\ndef _circle():\n"
                      "    from collsel.sinks.emit import c_ladder  # noqa\n")
    done = lint_imports(pythonpath=copy.parent, cwd=tmp_path)
    assert done.returncode != 0
    assert "no import circles between the modules of any package BROKEN" in done.stdout
    assert ".targets -> .c_ladder" in done.stdout
    assert "4 kept, 1 broken" in done.stdout


def test_a_map_using_a_tree_breaks_the_order_of_core(tmp_path):
    """core's sub-packages follow the data (io -> mpi -> maps -> trees -> evaluate): an earlier
    one importing a later one breaks the contract."""
    copy = copy_package(tmp_path)
    module = copy / "core" / "maps" / "decision_map.py"
    module.write_text(module.read_text() + "\nfrom collsel.core.trees import tree  # noqa\n")
    done = lint_imports(pythonpath=copy.parent, cwd=tmp_path)
    assert done.returncode != 0
    assert "core's sub-packages follow the data: evaluate > trees > maps > mpi > io BROKEN" \
        in done.stdout
    assert "collsel.core.maps.decision_map -> collsel.core.trees.tree" in done.stdout


def test_the_product_path_using_research_breaks_the_layers(tmp_path):
    """Research features (the analytical models) sit beside the pipeline: neither the pipeline
    nor the sources below it may import them."""
    for where in (("pipeline", "building.py"), ("sources", "sweep", "engine.py")):
        copy = copy_package(tmp_path / where[-1])
        module = copy.joinpath(*where)
        module.write_text(module.read_text() + "\nfrom collsel.research.models import fit  # noqa"
                          "\n")
        done = lint_imports(pythonpath=copy.parent, cwd=tmp_path)
        assert done.returncode != 0 and "BROKEN" in done.stdout, where
