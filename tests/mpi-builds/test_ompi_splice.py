"""mpi-builds/ompi-patched/splice.py: replace one C function definition by generated text."""
import pathlib
import subprocess
import sys

REPO = pathlib.Path(__file__).resolve().parents[2]
SPLICE = REPO / "mpi-builds" / "ompi-patched" / "splice.py"

ORIGINAL = """\
#include "x.h"
int f(int a, int b);              /* a declaration: not replaced */
static const char *s = "int f(int a) { }";  // nor this string

/* f: { unbalanced in a comment */
int f(int a,
      int b)
{
    if (a) { return b; }          /* } */
    return '}';
}

int
g(void)
{
    return f(1, 2);
}
"""
NEW_F = "static int helper(void) { return 7; }\nint f(int a, int b)\n{\n    return helper();\n}\n"
NEW_G = "int g(void) { return 0; }\n"


def splice(tmp_path, original, **replacements):
    src, dst = tmp_path / "orig.c", tmp_path / "out.c"
    src.write_text(original)
    args = []
    for name, text in replacements.items():
        (tmp_path / f"{name}.c").write_text(text)
        args.append(f"{name}={tmp_path / f'{name}.c'}")
    r = subprocess.run([sys.executable, str(SPLICE), str(src), str(dst), *args],
                       capture_output=True, text=True)
    return r, dst


def test_replaces_exactly_the_definitions(tmp_path):
    r, dst = splice(tmp_path, ORIGINAL, f=NEW_F, g=NEW_G)
    assert r.returncode == 0, r.stderr
    out = dst.read_text()
    assert "int f(int a, int b);              /* a declaration" in out
    assert '"int f(int a) { }"' in out and "/* f: { unbalanced in a comment */" in out
    assert out.count("int f(int a, int b)\n{\n    return helper();\n}") == 1
    assert out.endswith("int g(void) { return 0; }\n")
    # The originals stay, renamed, in front of their replacements (the generated function calls
    # its original where the tree defers to the MPI): the return-type line goes with the name.
    assert out.count("return '}'") == 1 and out.count("return f(1, 2)") == 1
    assert "\nint collsel_original_f(int a,\n      int b)\n{\n    if (a)" in out
    assert "\nint\ncollsel_original_g(void)\n{\n    return f(1, 2);\n}" in out
    assert out.index("collsel_original_f(int a") < out.index("static int helper(void)")
    assert "\nint\ng(void)" not in out and "int f(int a,\n" not in out


def test_original_names_of_open_mpi_functions():
    sys.path.insert(0, str(SPLICE.parent))
    import splice as module
    assert (module.original_name("ompi_coll_tuned_bcast_intra_dec_fixed")
            == "collsel_ompi_original_bcast_intra_dec_fixed")


def test_unchanged_output_is_not_rewritten(tmp_path):
    r, dst = splice(tmp_path, ORIGINAL, f=NEW_F)
    mtime = dst.stat().st_mtime_ns
    r, dst = splice(tmp_path, ORIGINAL, f=NEW_F)
    assert r.returncode == 0 and "unchanged" in r.stdout and dst.stat().st_mtime_ns == mtime


def test_missing_or_duplicate_definition_fails_loudly(tmp_path):
    r, dst = splice(tmp_path, ORIGINAL, h=NEW_G.replace("g(", "h("))
    assert r.returncode == 1 and "exactly one definition of h, found 0" in r.stderr
    assert not dst.exists()
    r, _ = splice(tmp_path, ORIGINAL + "\nint g(void)\n{\n    return 2;\n}\n", g=NEW_G)
    assert r.returncode == 1 and "exactly one definition of g, found 2" in r.stderr
    r, _ = splice(tmp_path, ORIGINAL, g=NEW_F)
    assert r.returncode == 1 and "does not define g once" in r.stderr
