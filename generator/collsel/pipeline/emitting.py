"""Render trees for an emit target and write them: `collsel emit`'s steps, and `collsel tune`'s
blob and deployment file."""
from __future__ import annotations

from collections.abc import Sequence

from collsel.core.io import values
from collsel.core.trees import treefile
from collsel.core.io.files import write_directory, write_file
from collsel.sinks.emit import mpich_json, ompi_rules, targets


def mpich_base(target: str, path: str | None = None) -> tuple[dict | None, str]:
    """(parsed base, where it came from) for --target mpich-json: the file `path`, else the
    selection compiled into the installed MPICH (collsel.sources.measure.mpich_base); (None,
    "") for the other targets."""
    if target != "mpich-json":
        return None, ""
    if path:
        return mpich_json.load_base(path), path
    from collsel.sources.measure import mpich_base as installed
    text, where = installed.installed_selection()
    return mpich_json.parse_base(text, where), where


def emit_options(target: str, trees: Sequence[str], *, prefix: str | None = None,
                 node_width: int | None = None, array_name: str | None = None,
                 ompi_comm_sizes: str | None = None, ompi_rules_version: int = 1,
                 mpich_base_file: str | None = None, mpich_map: str = "") -> targets.EmitOptions:
    """The typed options of `collsel emit`'s flags (as their text), checked; input files are
    read only for their target. The defaults are the command line's."""
    base, base_name = mpich_base(target, mpich_base_file)
    return targets.EmitOptions(
        prefix=None if prefix is None else values.identifier(prefix, "--prefix"),
        node_width=node_width,
        array_name=None if array_name is None else values.identifier(array_name, "--array-name"),
        ompi_comm_sizes=ompi_rules.parse_comm_sizes(ompi_comm_sizes),
        ompi_rules_version=ompi_rules_version,
        mpich_base=base, mpich_base_name=base_name,
        mpich_map=mpich_json.parse_map(mpich_map, sorted(mpich_json.MPICH_NAMES)),
        tree_names=tuple(trees))


def emit(target: str, trees: Sequence[str], *,
         options: targets.EmitOptions | None = None) -> targets.Emitted:
    """The files of `target` for the tree.json files `trees`, in memory, and the target's notes
    (write_emitted() writes them); `options`: emit_options(), the command line's by default."""
    options = options or emit_options(target, trees)
    return targets.emit(target, [treefile.load(path) for path in trees], options)


def write_emitted(out: str, files: dict) -> None:
    """One file to the file `out`, several into the directory `out`."""
    if len(files) == 1:
        (data,) = files.values()
        values.output_file(out)
        write_file(out, data)
    else:
        values.output_directory(out)
        write_directory(out, files)
