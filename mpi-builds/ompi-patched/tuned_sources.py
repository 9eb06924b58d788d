#!/usr/bin/env python3
"""The coll/tuned sources the generated decisions are spliced into, for all 14 collectives.

    tuned_sources.py SRC_DIR

Open MPI 4.1.4 has a fixed decision for 12 collectives; scan and exscan it leaves to coll/basic
(coll_tuned_module.c sets them NULL). So that every collective has an original a generated
function replaces and defers to:

- `base_text` is the text splice.py takes as the original coll_tuned_decision_fixed.c: the
  unpacked file (kept as coll_tuned_decision_fixed.c.orig by build.sh) followed by scan_fixed.c
  (scan and exscan decisions that run what coll/basic runs: the linear algorithms); the command
  writes it to coll_tuned_decision_fixed.c.base for splice.py;
- `hook_module` points coll/tuned's module at them: coll_tuned_module.c, rewritten from its
  pristine copy (.orig, made on first use) with the two NULL assignments of the fixed path
  replaced, and only when its text changes (make then recompiles only what changed).

Standard library only, like splice.py.
"""
import os
import shutil
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
TUNED = "ompi/mca/coll/tuned"
DECISION = "coll_tuned_decision_fixed.c"
MODULE = "coll_tuned_module.c"
# coll_tuned_module.c of 4.1.4, ompi_coll_tuned_comm_query (:106, :112): line -> replacement
HOOKS = {
    "    tuned_module->super.coll_exscan     = NULL;\n":
        "    tuned_module->super.coll_exscan     = ompi_coll_tuned_exscan_intra_dec_fixed;"
        "  /* collsel */\n",
    "    tuned_module->super.coll_scan       = NULL;\n":
        "    tuned_module->super.coll_scan       = ompi_coll_tuned_scan_intra_dec_fixed;"
        "  /* collsel */\n",
}


class SourceError(Exception):
    pass


def base_text(src):
    """The original decision file plus scan_fixed.c: what splice.py replaces definitions in."""
    with open(os.path.join(src, TUNED, DECISION + ".orig")) as f:
        text = f.read()
    with open(os.path.join(HERE, "scan_fixed.c")) as f:
        return text + f.read()


def hooked_module(text):
    """coll_tuned_module.c's text with scan and exscan given to coll/tuned's fixed decisions."""
    for line, new in HOOKS.items():
        if text.count(line) != 1:
            raise SourceError(f"{MODULE}: expected the line '{line.strip()}' once, found "
                              f"{text.count(line)}: not Open MPI 4.1.4's file")
        text = text.replace(line, new)
    return text


def hook_module(src):
    """Rewrite coll_tuned_module.c from its pristine copy when its hooked text differs."""
    path = os.path.join(src, TUNED, MODULE)
    if not os.path.exists(path + ".orig"):
        shutil.copy2(path, path + ".orig")
    with open(path + ".orig") as f:
        text = hooked_module(f.read())
    with open(path) as f:
        if f.read() == text:
            return False
    with open(path + ".tmp", "w") as f:
        f.write(text)
    os.replace(path + ".tmp", path)
    return True


def write_base(src):
    """coll_tuned_decision_fixed.c.base: base_text, for splice.py's command line."""
    path = os.path.join(src, TUNED, DECISION + ".base")
    with open(path + ".tmp", "w") as f:
        f.write(base_text(src))
    os.replace(path + ".tmp", path)


def main(argv):
    if len(argv) != 1:
        print(__doc__.strip().splitlines()[2].strip(), file=sys.stderr)
        return 2
    try:
        write_base(argv[0])
        changed = hook_module(argv[0])
    except (OSError, SourceError) as e:
        print(f"tuned_sources.py: error: {e}", file=sys.stderr)
        return 1
    print(f"tuned_sources.py: {MODULE} {'hooked' if changed else 'unchanged'}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
