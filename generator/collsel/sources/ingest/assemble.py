"""Parsed points + per-file given values -> rows of the canonical table.

A value the file records and a value given for it must agree; a value neither supplies is an
error naming the flag that would (segsize only for algorithms that segment, since the others
ignore it; faninout defaults to the table's 0). ppn and nodes are optional: a column only when
the file or a given value says them.
"""
from collsel.core.maps import table
from collsel.core.mpi import algorithms
from collsel.core.io.sizes import parse_size
from collsel.errors import InputError, located
from collsel.sources.ingest import msgsize
from collsel.sources.ingest.common import printable
from collsel.sources.ingest.csvmap import LAYOUT, NO_SIZE_COLUMN
from collsel.sources.ingest.given import how_to_supply


def _resolve(path, key, values, convert):
    """One value from [(text, where)...]; conflicting sources are an error."""
    out = {}
    for text, where in values:
        try:
            out.setdefault(convert(text), []).append(where)
        except InputError as e:
            raise located(path, None, f"{where}: {printable(str(e))}") from None
    if len(out) > 1:
        said = "; ".join(f"{', '.join(w)} say {v}" for v, w in out.items())
        raise located(path, None, f"conflicting {key}: {said}")
    return next(iter(out)) if out else None


def _int(low, high, name):
    """A given value (flag, pattern, manifest) in the notation of every size (core.io.sizes)."""
    return lambda text: parse_size(text, "", low, high, name)


def select_collective(path, parsed, given, lenient=False):
    """Keep the points of one collective: the given one, else the only one the file holds."""
    want = _resolve(path, "collective", given["collective"], lambda t: t.strip().lower())
    present = sorted({p.collective for p in parsed.points if p.collective})
    if want:
        algorithms.check_collective(want)
        points = [p for p in parsed.points if p.collective in (None, want)]
        if not points:
            raise located(path, parsed.points[0].line, f"no {want} results: the file holds "
                          f"{', '.join(present)}, not the {want} that "
                          f"{given['collective'][0][1]} asks for; give each file its own "
                          "collective")
        parsed.skipped += [c for c in present if c != want]
        return points, [want]
    unnamed = [p for p in parsed.points if not p.collective]
    if unnamed:
        what = f"measurement '{unnamed[0].block}'" if unnamed[0].block else parsed.format
        if lenient:
            return parsed.points, present + ["?"]
        raise located(path, unnamed[0].line, f"{what} does not name the collective; "
                      + how_to_supply("collective"))
    known = [c for c in present if c in algorithms.ALGORITHMS]
    parsed.skipped += [c for c in present if c not in algorithms.ALGORITHMS]
    if not known:
        raise located(path, parsed.points[0].line, f"no collective collsel knows (the file holds: "
                      f"{', '.join(present)}; known: {', '.join(algorithms.collectives())})")
    if len(known) > 1 and not lenient:
        raise located(path, parsed.points[0].line, f"holds several collectives "
                      f"({', '.join(known)}); choose one with --collective")
    return [p for p in parsed.points if p.collective in known], known


def rows(path, parsed, given, lenient=False):
    """Table rows (dicts) for one file; in lenient mode (--check) missing values stay None
    and the keys that would be needed are returned."""
    points, colls = select_collective(path, parsed, given, lenient)
    if parsed.info.get("msg_size_is") == NO_SIZE_COLUMN and set(colls) - {"barrier", "?"}:
        raise located(path, None, f"--map has no msg_size, but {'/'.join(colls)} has message "
                      "sizes (only barrier has none); map msg_size=COLUMN")
    bounds = {"comm_size": (1, table.MAX_COMM_SIZE), "segsize": (0, 2**31 - 1),
              "faninout": (0, 2**31 - 1), **{k: (1, table.MAX_COMM_SIZE) for k in LAYOUT}}
    file_value = {key: _resolve(path, key, given[key], _int(*bounds[key], key)) for key in bounds}
    want = _resolve(path, "collective", given["collective"], lambda t: t.strip().lower())
    out, needs, algs, dropped = [], set(), {}, []
    for p in points:
        coll = (p.collective or want or "").lower() or None
        row = {"collective": coll}
        for key in bounds:
            mine = p.columns.get(key) if key in LAYOUT else getattr(p, key)
            theirs = file_value[key]
            if mine is not None and theirs is not None and mine != theirs:
                raise located(path, p.line, f"{key} {mine} in the file, but "
                              f"{given[key][0][1]} says {theirs}")
            row[key] = mine if mine is not None else theirs
        for key in LAYOUT:          # optional: a column only when the file or a flag says it
            if row[key] is None:
                del row[key]
        if coll is None:
            needs.add("collective")
        row["algorithm"] = _algorithm(path, p, coll, given, algs) if coll else None
        if row["algorithm"] is None:
            needs.add("algorithm")
        if row["comm_size"] is None:
            needs.add("comm_size")
        if row["segsize"] is None:
            if row["algorithm"] is not None and algorithms.segments(coll, row["algorithm"]):
                needs.add("segsize")
            elif row["algorithm"] is not None:
                row["segsize"] = 0   # this algorithm ignores the segment size
        if row["segsize"] and row["algorithm"] is not None:
            try:
                algorithms.check_segsize(coll, row["algorithm"], row["segsize"])
            except InputError as e:
                told = "" if p.segsize is not None else f" (from {given['segsize'][0][1]})"
                raise located(path, p.line, f"{e}{told}") from None
        if row["faninout"] is None:
            row["faninout"] = 0
        if needs and not lenient:
            key = sorted(needs)[0]
            fmt = {"csv": "this CSV"}.get(parsed.format, f"{parsed.format} output")
            raise located(path, p.line, f"{key.replace('_', ' ')} is not recorded in {fmt}; "
                          + how_to_supply(key))
        row.update({k: v for k, v in p.columns.items() if k not in LAYOUT})   # --carry
        m = _m(path, parsed, p, coll, row["comm_size"])
        if m is None:
            dropped.append(p.msg_size)
            continue
        row.update(msg_size=m, time_us=p.time_us, origin=f"{path}:{p.line}")
        row.update(p.stats)
        out.append(row)
    if dropped:
        parsed.info["m_zero_rows"] = f"{len(dropped)} row(s) whose call moves no data " \
            f"(sizes {', '.join(map(str, sorted(set(dropped))))} B below one element per rank)"
    return out, needs


def _m(path, parsed, point, coll, procs):
    """The row's m: the file's size converted for IMB and OSU (sources.ingest.msgsize); None
    for a row whose call moves no data although the file printed a size."""
    if not coll or not msgsize.converts(parsed.format, coll):
        return point.msg_size
    words, to_m = msgsize.conversion(path, parsed.format, coll, parsed.info)
    parsed.info["msg_size_is"] = words
    if procs is None:      # --check without P: shown as printed
        return point.msg_size
    elem = msgsize.element_size(path, parsed.info.get("datatype")) \
        if coll.startswith("reduce_scatter") else 1
    m = to_m(point.msg_size, procs, elem)
    return None if m == 0 and point.msg_size > 0 and coll != "barrier" else m


def _algorithm(path, point, coll, given, cache):
    if point.algorithm is not None:
        if (coll, point.algorithm) not in cache:
            try:
                cache[coll, point.algorithm] = algorithms.algorithm_id(coll, point.algorithm)
            except InputError as e:
                raise located(path, point.line, printable(str(e))) from None
        mine = cache[coll, point.algorithm]
        if given["algorithm"]:
            theirs = _resolve(path, "algorithm", given["algorithm"],
                              lambda t: algorithms.algorithm_id(coll, t))
            if theirs != mine:
                raise located(path, point.line, f"algorithm {point.algorithm} in the file, "
                              f"but {given['algorithm'][0][1]} says {theirs}")
        return mine
    if coll not in cache:
        cache[coll] = _resolve(path, "algorithm", given["algorithm"],
                               lambda t: algorithms.algorithm_id(coll, t))
    return cache[coll]
