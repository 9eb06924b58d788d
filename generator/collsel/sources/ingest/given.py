"""Values a file does not record, supplied per file by flags, a file-name pattern or a manifest.

Every value remembers where it came from, so that a missing one can name the flag that would
supply it and two sources that disagree are an error rather than a silent choice.
"""
import os
import re

from collsel.core.io import csvfile
from collsel.errors import InputError, located
from collsel.sources.ingest.common import check_regular, parse_relabel

# ppn and nodes: where the ranks ran (table columns of the same names; `build --z ppn`).
KEYS = ("collective", "comm_size", "algorithm", "segsize", "faninout", "ppn", "nodes")
NUMERIC = ("comm_size", "segsize", "faninout", "ppn", "nodes")
FLAGS = {"collective": "--collective", "comm_size": "--comm-size", "algorithm": "--algorithm",
         "segsize": "--segsize", "faninout": "--faninout", "ppn": "--ppn", "nodes": "--nodes"}


def how_to_supply(key):
    return (f"give {FLAGS[key]}, a --pattern with {{{key}}} or a --manifest "
            f"column '{key}'")


def compile_pattern(pattern):
    """'osu-broadcast-{algorithm}.txt' -> a regex with one named group per field."""
    parts, pos = [], 0
    for m in re.finditer(r"\{(\w+)\}", pattern):
        if m.group(1) not in KEYS:
            raise InputError(f"--pattern: unknown field {{{m.group(1)}}} "
                             f"(fields: {', '.join('{%s}' % k for k in KEYS)})")
        parts.append(re.escape(pattern[pos:m.start()]))
        numeric = m.group(1) in NUMERIC
        parts.append(f"(?P<{m.group(1)}>{'[0-9]+' if numeric else '.+?'})")
        pos = m.end()
    parts.append(re.escape(pattern[pos:]))
    try:
        return re.compile("".join(parts) + "$")
    except re.error:
        raise InputError(f"--pattern '{pattern}': a field appears twice") from None


def read_manifest(path):
    """CSV with a `file` column and any of KEYS; file names relative to the manifest."""
    check_regular(path, "a manifest")
    doc = csvfile.read(path, "a manifest")
    if doc.header is None or "file" not in doc.header:
        raise located(path, doc.header_line or 1, "manifest needs a header with a 'file' column "
                      "and any of " + ", ".join(KEYS))
    header = doc.header
    unknown = [c for c in header if c != "file" and c not in KEYS]
    if unknown:
        raise located(path, doc.header_line, f"unknown manifest column(s) {', '.join(unknown)}")
    base = os.path.dirname(os.path.abspath(path))
    entries, lines = {}, {}
    for lineno, row in doc.rows:
        if not any(c.strip() for c in row):
            continue
        if len(row) != len(header):
            raise located(path, lineno, f"{len(row)} fields, the header has {len(header)}")
        values = dict(zip(header, (c.strip() for c in row)))
        name = os.path.normpath(os.path.join(base, values.pop("file")))
        if name in lines:
            raise located(path, lineno, f"file {row[header.index('file')].strip()} listed "
                          f"again (first at line {lines[name]}); one line per file")
        lines[name] = lineno
        entries[name] = {k: (v, f"manifest {path}:{lineno}") for k, v in values.items() if v}
    return entries


def for_file(path, opts, pattern, manifest):
    """{key: [(text, where), ...]} for one input file; `opts` an IngestOptions."""
    found = {k: [] for k in KEYS}
    for key in KEYS:
        value = getattr(opts, key)
        if value is not None:
            found[key].append((str(value), FLAGS[key]))
    if pattern is not None:
        target = path if "/" in opts.pattern else os.path.basename(path)
        m = pattern.search(target)
        if not m:
            raise located(path, None, f"file name does not match --pattern '{opts.pattern}'")
        # a file name's {algorithm} is the dataset's own label, as a column's value is
        relabel = parse_relabel(opts.relabel) if opts.relabel else {}
        for key, value in m.groupdict().items():
            where = f"--pattern {opts.pattern}"
            if key == "algorithm" and value in relabel:
                value, where = relabel[value], f"{where} and --relabel {value}={relabel[value]}"
            found[key].append((value, where))
    if manifest is not None:
        entry = manifest.get(os.path.normpath(os.path.abspath(path)))
        if entry is None:
            raise located(path, None, "not listed in the --manifest")
        for key, value in entry.items():
            found[key].append(value)
    return found
