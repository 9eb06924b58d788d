#!/usr/bin/env python3
"""Build a private coll/tuned component from the patched Open MPI build, with other functions.

    component.py PATCHED_DIR OUT_DIR NAME=FILE [NAME=FILE ...]

PATCHED_DIR is what build.sh made (src/, obj/, install/). The original
coll_tuned_decision_fixed.c (src/.../coll_tuned_decision_fixed.c.orig, with scan and exscan's
decisions appended: tuned_sources.base_text) is spliced with the given definitions (splice.py: NAME=FILE, e.g. ompi_coll_tuned_bcast_intra_dec_fixed=bcast.c)
into OUT_DIR/coll_tuned_decision_fixed.c, compiled with the exact command the build used for
that file, and linked with the build's other coll/tuned objects by the build's own link command
into OUT_DIR/components/mca_coll_tuned.so. Both commands come from obj/coll_tuned_commands.txt
(build.sh keeps them), else from the last obj/make.out.

So a second set of decision functions (e.g. ppn-aware ones: `make ompi-patched-ppn`) costs one
compile and one link (seconds), not a second Open MPI build (minutes). Run a program with it:

    mpirun --mca mca_base_component_path OUT_DIR/components:PATCHED_DIR/install/lib/openmpi ...

Open MPI then opens this mca_coll_tuned.so instead of the installed one (the first directory
that has a component wins). Any failure exits 1 with one line (and the compiler's tail).
Standard library only, like splice.py.
"""
import os
import shlex
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import splice  # noqa: E402
import tuned_sources  # noqa: E402

TUNED = "ompi/mca/coll/tuned"
SOURCE = "coll_tuned_decision_fixed.c"


class ComponentError(Exception):
    pass


def logged_command(patched, prefix, must_contain):
    """The command after `prefix` holding `must_contain`, as an argument list, from the lines
    build.sh keeps or from make.out (libtool logs every compile and link it runs)."""
    for log in ("coll_tuned_commands.txt", "make.out"):
        path = os.path.join(patched, "obj", log)
        if not os.path.exists(path):
            continue
        with open(path) as f:
            for line in f:
                if line.startswith(prefix) and must_contain in line:
                    return shlex.split(line[len(prefix):])
    raise ComponentError(f"{patched}/obj: no '{prefix}... {must_contain}' line logged; "
                         f"rm {patched}/.installed and rebuild it (make ompi-patched)")


def _run(cmd, cwd, what):
    r = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True)
    if r.returncode != 0:
        raise ComponentError(f"{what} failed (exit {r.returncode}):\n{r.stderr[-3000:]}")


def build(patched, out, replacements):
    """OUT/components/mca_coll_tuned.so with `replacements` ({name: text}) spliced in."""
    patched, out = os.path.abspath(patched), os.path.abspath(out)
    src = os.path.join(patched, "src")
    text = splice.splice(tuned_sources.base_text(src), replacements,
                         where=os.path.join(src, TUNED, SOURCE + ".base"))
    os.makedirs(os.path.join(out, "components"), exist_ok=True)
    spliced, obj = os.path.join(out, SOURCE), os.path.join(out, "coll_tuned_decision_fixed.o")
    with open(spliced, "w") as f:
        f.write(text)
    compile_cmd = [a for a in logged_command(patched, "libtool: compile: ", SOURCE)
                   if not a.startswith(("-M", "$depbase", ".deps/"))
                   and a != "coll_tuned_decision_fixed.lo"]
    compile_cmd[compile_cmd.index("-o") + 1] = obj
    compile_cmd = [spliced if a.endswith("/" + SOURCE) else a for a in compile_cmd]
    cwd = os.path.join(patched, "obj", TUNED)
    _run(compile_cmd, cwd, f"compiling {spliced}")
    link = logged_command(patched, "libtool: link: ", "-o .libs/mca_coll_tuned.so")
    link = [obj if a == ".libs/coll_tuned_decision_fixed.o" else a for a in link]
    target = os.path.join(out, "components", "mca_coll_tuned.so")
    link[link.index("-o") + 1] = target
    _run(link, cwd, f"linking {target}")
    return target


def main(argv):
    if len(argv) < 3 or any("=" not in a for a in argv[2:]):
        print(__doc__.strip().splitlines()[2].strip(), file=sys.stderr)
        return 2
    try:
        replacements = {}
        for arg in argv[2:]:
            name, path = arg.split("=", 1)
            with open(path) as f:
                replacements[name] = f.read()
        target = build(argv[0], argv[1], replacements)
    except (OSError, splice.SpliceError, ComponentError) as e:
        print(f"component.py: error: {e}", file=sys.stderr)
        return 1
    print(f"component.py: {target}: " + ", ".join(sorted(replacements)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
