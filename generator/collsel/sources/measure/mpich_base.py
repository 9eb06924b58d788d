"""MPICH's default MPIR collective selection, read from the installed library.

MPICH compiles maint/tuning/coll/mpir/generic.json into libmpich as the C string
MPII_coll_generic_json (maint/tuning/coll/json_gen.sh: the file with its white space removed),
and that string is the selection MPICH uses when no MPIR_CVAR_COLL_SELECTION_TUNING_JSON_FILE is
set. So the installed library holds exactly the base `collsel emit --target mpich-json` completes,
for the installed version: no source package, no network. The library also holds the ch4 and
posix selections (MPIDI_... leaves); the MPIR one is the string whose leaves are MPIR_ algorithms.

    python -m collsel.sources.measure.mpich_base OUT.json    (what `make mpich-base` runs)
"""
import glob
import json
import os
import re
import sys
import sysconfig

from collsel.errors import InputError

LIBRARY = "libmpich.so"
# MPICH 5 names its library libmpi.so.12 (Open MPI's is libmpi.so.40): looked for after
# libmpich.so in each directory, e.g. LD_LIBRARY_PATH=build/mpis/mpich5/lib.
LIBRARIES = (LIBRARY, "libmpi.so.12")
# A NUL-terminated JSON object whose first key is a collective: the selection strings.
_SELECTION = re.compile(rb'\{"collective=[^\x00]{1,4000000}\x00')
_MPIR_LEAF = b'"algorithm=MPIR_'
INSTALL_HINT = ("install MPICH (Debian: apt-get install libmpich-dev, which `make setup` does), "
                "or give --mpich-base FILE (MPICH's maint/tuning/coll/mpir/generic.json)")


def library_dirs():
    """Where the dynamic linker would look, in its order: LD_LIBRARY_PATH, then the usual
    system directories (Debian's multiarch one included)."""
    dirs = [d for d in os.environ.get("LD_LIBRARY_PATH", "").split(":") if d]
    arch = sysconfig.get_config_var("MULTIARCH")
    dirs += ["/usr/local/lib"] + ([f"/usr/lib/{arch}"] if arch else []) + ["/usr/lib64",
                                                                           "/usr/lib"]
    return list(dict.fromkeys(dirs))


def find_library(dirs=None):
    """The real file of the first libmpich.so* (else libmpi.so.12*) found, or None."""
    for d in library_dirs() if dirs is None else dirs:
        for name in LIBRARIES:
            found = sorted(glob.glob(os.path.join(d, name + "*")))
            if found:
                return os.path.realpath(found[0])
    return None


def selection_text(library):
    """The MPIR selection JSON text compiled into `library`, or None when it holds none."""
    try:
        with open(library, "rb") as f:
            data = f.read()
    except OSError as e:
        raise InputError(f"{library}: cannot read MPICH's library: {e.strerror}; "
                         f"{INSTALL_HINT}") from None
    for match in _SELECTION.finditer(data):
        text = match.group()[:-1]
        if _MPIR_LEAF in text:
            return text.decode("utf-8", "replace")
    return None


def installed_selection(dirs=None):
    """(JSON text, where it came from) of the installed MPICH's default selection; an
    InputError saying exactly what to do when there is none."""
    library = find_library(dirs)
    if library is None:
        searched = ", ".join(library_dirs() if dirs is None else dirs)
        raise InputError(f"--target mpich-json needs MPICH's default selection and found no "
                         f"{LIBRARY} in {searched}: {INSTALL_HINT}")
    text = selection_text(library)
    if text is None:
        raise InputError(f"{library}: no built-in MPIR selection (MPII_coll_generic_json, "
                         f"MPICH >= 3.4) in it: {INSTALL_HINT}")
    return text, f"MPICH's built-in selection in {library}"


def main(argv):
    """Write the installed selection to argv[1], indented (`make mpich-base`)."""
    if len(argv) != 2:
        sys.exit("usage: python -m collsel.sources.measure.mpich_base OUT.json")
    try:
        text, where = installed_selection()
    except InputError as e:
        sys.exit(f"collsel: error: {e}")
    out = argv[1]
    os.makedirs(os.path.dirname(out) or ".", exist_ok=True)
    with open(out + ".tmp", "w", encoding="utf-8") as f:
        f.write(json.dumps(json.loads(text), indent=2) + "\n")
    os.replace(out + ".tmp", out)
    print(f"{out}: {where}")


if __name__ == "__main__":
    main(sys.argv)
