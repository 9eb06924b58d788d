"""--raw FILE: every repetition of a paired sweep in ReproMPI's per-repetition layout.

Each launch's benchmark writes its own raw file (its --raw) into FILE.parts/ beside FILE, named
after P (and NODESxPPN), the launch number and the attempt; they stay there, so a resumed sweep
keeps the launches of earlier runs. At the end FILE is rebuilt from all parts atomically
(core.io.files.write_file): per launch a block of `#@` lines (P, nodes and ppn when explicit,
launch, attempt, then the benchmark's own header, seed included) and its repetition lines.
"""
import os
import re

from collsel.core.io.files import write_file

_PART = re.compile(r"P(\d+)(?:-N(\d+)x(\d+))?-L(\d+)-a(\d+)\.raw")


def parts_dir(raw):
    return raw + ".parts"


def part_path(raw, shape, k, attempt, create=True):
    """Where launch k of `shape` (sweep/shapes.py; its `attempt`-th run) writes its
    repetitions; `create` makes the directory (not for a dry run)."""
    if create:
        os.makedirs(parts_dir(raw), exist_ok=True)
    where = f"P{shape.p}-N{shape.nodes}x{shape.ppn}" if shape.explicit else f"P{shape.p}"
    return os.path.join(os.path.abspath(parts_dir(raw)), f"{where}-L{k}-a{attempt}.raw")


def collect(raw, collective):
    """Rebuild FILE from the parts (in P, launch, attempt order)."""
    found = []
    for name in os.listdir(parts_dir(raw)) if os.path.isdir(parts_dir(raw)) else []:
        match = _PART.fullmatch(name)
        if match:
            found.append((tuple(int(x or 0) for x in match.groups()), name))
    blocks = [f"#@source=collsel sweep --raw (ReproMPI per-repetition layout, one block per "
              f"launch)\n#@collective={collective}\n"]
    for (p, nodes, ppn, k, attempt), name in sorted(found):
        with open(os.path.join(parts_dir(raw), name), encoding="utf-8",
                  errors="replace") as f:
            text = f.read()
        if text and not text.endswith("\n"):
            text = text[:text.rfind("\n") + 1]      # a launch killed while writing
        shape = f"#@nodes={nodes}\n#@ppn={ppn}\n" if nodes else ""
        blocks.append(f"#@comm_size={p}\n{shape}#@launch={k}\n#@attempt={attempt}\n{text}")
    write_file(raw, "".join(blocks))
