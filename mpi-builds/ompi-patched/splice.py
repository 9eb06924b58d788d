#!/usr/bin/env python3
"""Replace C function definitions in a source file with generated text.

    splice.py ORIGINAL OUTPUT NAME=FILE [NAME=FILE ...]

For each NAME, the definition `int NAME(...) { ... }` in ORIGINAL (the line holding its return
type through its closing brace) is replaced by the whole text of FILE (collsel's
`--target ompi-dec-fixed` output: helper functions and the new definition of NAME). The original
definition stays in front of it, renamed `original_name(NAME)` (ompi_coll_tuned_X ->
collsel_ompi_original_X): the generated function calls it where the tree defers to Open MPI's
own decision (algorithm 0). It must not call NAME itself, nor `*_do_this` with algorithm 0, which
calls NAME: that would recurse without end. Each NAME
must have exactly one definition (a declaration `...);` does not count), FILE must define NAME,
and the result is written to OUTPUT only when it differs from OUTPUT's current text (so `make`
recompiles only a changed file). Any mismatch exits 1 with one line naming the file and name.

Comments, string and character literals are skipped when matching parentheses and braces.
Standard library only: this runs before the collsel package may be importable.
"""
import os
import re
import sys


class SpliceError(Exception):
    pass


def _code_mask(text):
    """A copy of text with comments and string/char literals replaced by spaces (same length)."""
    out = list(text)
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
        elif text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
        elif c in "\"'":
            j = i + 1
            while j < n and text[j] != c:
                j += 2 if text[j] == "\\" else 1
            j += 1
        else:
            i += 1
            continue
        for k in range(i, min(j, n)):
            if out[k] != "\n":
                out[k] = " "
        i = j
    return "".join(out)


def _matching(code, start, open_c, close_c):
    """Index just past the bracket matching code[start] (== open_c)."""
    depth = 0
    for i in range(start, len(code)):
        if code[i] == open_c:
            depth += 1
        elif code[i] == close_c:
            depth -= 1
            if depth == 0:
                return i + 1
    return -1


def definitions(text, name):
    """[(start, end)] of every definition of `name` in text: start = beginning of the line of
    its return type, end = just past the closing brace of its body."""
    code = _code_mask(text)
    found = []
    for m in re.finditer(r"\b%s\s*\(" % re.escape(name), code):
        close = _matching(code, m.end() - 1, "(", ")")
        if close < 0:
            continue
        rest = re.match(r"\s*\{", code[close:])
        if not rest:
            continue  # a declaration or a call
        brace = close + rest.end() - 1
        end = _matching(code, brace, "{", "}")
        if end < 0:
            raise SpliceError(f"unbalanced braces in the body of {name}")
        # The return type: back over the previous line when the name starts its own line.
        line = code.rfind("\n", 0, m.start()) + 1
        if not code[line:m.start()].strip():
            line = code.rfind("\n", 0, max(line - 1, 0)) + 1
        found.append((line, end))
    return found


def original_name(name):
    """The name the original definition of `name` keeps in the spliced file."""
    prefix = "ompi_coll_tuned_"
    return ("collsel_ompi_original_" + name[len(prefix):] if name.startswith(prefix)
            else "collsel_original_" + name)


def _renamed(definition, name):
    """The original definition text with its own name (the first occurrence) renamed."""
    code = _code_mask(definition)
    m = re.search(r"\b%s\s*\(" % re.escape(name), code)
    return definition[:m.start()] + original_name(name) + definition[m.start() + len(name):]


def splice(original, replacements, where="input"):
    """original text with each {name: new text} definition replaced."""
    spans = []
    for name, new in replacements.items():
        defs = definitions(original, name)
        if len(defs) != 1:
            raise SpliceError(f"{where}: expected exactly one definition of {name}, "
                              f"found {len(defs)}")
        if len(definitions(new, name)) != 1:
            raise SpliceError(f"{where}: the replacement text does not define {name} once")
        spans.append((defs[0][0], defs[0][1], name, new))
    spans.sort()
    for (_, end_a, a, _), (start_b, _, b, _) in zip(spans, spans[1:]):
        if start_b < end_a:
            raise SpliceError(f"{where}: definitions of {a} and {b} overlap")
    pieces, pos = [], 0
    for start, end, name, new in spans:
        pieces += [original[pos:start],
                   f"/* collsel: Open MPI's original {name}, renamed: the generated definition "
                   f"below calls it where the tree defers to Open MPI's own decision */\n",
                   _renamed(original[start:end], name), "\n\n",
                   f"/* collsel: generated definition of {name} (replaces the original) */\n",
                   new.rstrip("\n")]                 # the original's newline follows
        pos = end
    pieces.append(original[pos:])
    return "".join(pieces)


def main(argv):
    if len(argv) < 3 or any("=" not in a for a in argv[2:]):
        print(__doc__.strip().splitlines()[2].strip(), file=sys.stderr)
        return 2
    src, dst = argv[0], argv[1]
    try:
        with open(src) as f:
            original = f.read()
        replacements = {}
        for arg in argv[2:]:
            name, path = arg.split("=", 1)
            with open(path) as f:
                replacements[name] = f.read()
        text = splice(original, replacements, where=src)
    except (OSError, SpliceError) as e:
        print(f"splice.py: error: {e}", file=sys.stderr)
        return 1
    try:
        with open(dst) as f:
            if f.read() == text:
                print(f"splice.py: {dst} unchanged")
                return 0
    except OSError:
        pass
    tmp = dst + ".tmp"
    with open(tmp, "w") as f:
        f.write(text)
    os.replace(tmp, dst)
    print(f"splice.py: {dst}: replaced " + ", ".join(sorted(replacements)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
