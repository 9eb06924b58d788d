"""Intel MPI Benchmarks, IMB-MPI1: one block per (benchmark, P), several P in one file.

    # Benchmarking Bcast
    # #processes = 42
    #----------------------------------------------------------------
           #bytes #repetitions  t_min[usec]  t_max[usec]  t_avg[usec]
                0         1000         0.02         0.03         0.02

t_min/t_max/t_avg are taken across ranks of each rank's mean time per call. Barrier blocks have
no #bytes column (their rows get size 0). Blocks without per-rank spread (PingPong) or with -multi
groups are listed as skipped. #bytes means something else per benchmark: sources.ingest.msgsize
turns it into m once P is known.

IMB ends every block's rows with a blank line and the run with `# All processes entering
MPI_Finalize`. A file that ends inside a block's rows, or without that last line (cut between
two blocks), was cut off (a killed run, a copy cut at a row or block boundary): an error, since
what comes before the cut looks complete, unless --partial says to read it.
"""
import re

from collsel.errors import located
from collsel.sources.ingest.common import (RANK_STATISTICS, Parsed, Point, check_order,
                                           collective_name, parse_int, parse_time, rank_statistic,
                                           unit_factor)

_BLOCK = re.compile(r"#\s*Benchmarking\s+(\S+)")
_PROCS = re.compile(r"#\s*#processes\s*=\s*(\S+)")
_TIME = re.compile(r"t_(min|max|avg)\[(\w+)\]$")
_FINALIZE = re.compile(r"#\s*All processes entering MPI_Finalize")
_REDUCTION_TYPE = re.compile(r"#\s*MPI_Datatype for reductions\s*:\s*(\S+)")


def parse(path, lines, opts):
    statistic = rank_statistic(path, opts, "IMB")
    points, skipped, info = [], [], {}
    name = procs = header = last_block = None
    finalized = False
    for lineno, text in enumerate(lines, 1):
        stripped = text.strip()
        if stripped:     # the run's last words, unless something follows them
            finalized = bool(_FINALIZE.match(stripped))
        version = re.search(r"Intel ?\(R\) MPI Benchmarks ([^,]+)", stripped)
        if version:     # '4.1', '2019 Update 1', '2021.11'
            info["imb_version"] = version.group(1).strip()
        reduction_type = _REDUCTION_TYPE.match(stripped)
        if reduction_type:     # what Reduce_scatter's #bytes count (sources.ingest.msgsize)
            info["datatype"] = reduction_type.group(1)
        block = _BLOCK.match(stripped)
        if block:
            name, procs, header = block.group(1), None, None
            last_block = name
            continue
        if name is None:
            if stripped[:1].isdigit():
                raise located(path, lineno, "data row outside a '# Benchmarking' block: "
                              "missing header?")
            continue
        found = _PROCS.match(stripped)
        if found:
            procs = parse_int(found.group(1), path, lineno, "#processes", 1, 2**31 - 1)
        elif re.match(r"#(bytes|repetitions)\b", stripped) or " #bytes " in f" {stripped} ":
            header = _header(path, lineno, stripped, name, procs, statistic, skipped)
        elif not stripped or stripped.startswith("#"):
            if header is not None:     # a blank or comment line ends the block's rows
                _end(path, lineno, header, name)
                name = header = None
        elif header is None:
            raise located(path, lineno, f"data row in '{name}' block without a "
                          "'#bytes #repetitions t_min[usec] ...' header: missing header?")
        elif not header["skip"]:
            header["rows"] += 1
            points.append(_row(path, lineno, stripped, header, name, procs))
    if header is not None:
        _end(path, len(lines), header, name)
        if not header["skip"] and not opts.partial:
            last = points[-1]
            raise located(path, len(lines), f"the '{name}' block (P={procs}) ends with the file "
                          f"after {header['rows']} row(s), at {last.msg_size} bytes, without the "
                          "blank line IMB writes after every block: truncated output? "
                          "--partial reads the rows before the cut")
        if not header["skip"]:
            info["truncated_block"] = f"{name} (P={procs}) after {header['rows']} rows, read " \
                "with --partial"
    if not points:
        found = f" (only {', '.join(skipped)})" if skipped else ""
        raise located(path, len(lines), "no '# Benchmarking' block of a collective with "
                      f"message sizes{found}")
    if not finalized and header is None:
        if not opts.partial:
            end = max((i for i, t in enumerate(lines, 1) if t.strip()), default=len(lines))
            raise located(path, end, f"the run ends after the '{last_block}' block without "
                          "IMB's last line '# All processes entering MPI_Finalize': truncated "
                          "output (a killed run, a partial copy)? --partial reads the blocks "
                          "before the cut")
        info["truncated_run"] = f"after the '{last_block}' block, read with --partial"
    kind, words = RANK_STATISTICS[statistic]
    words = f"t_{statistic}: {words}"
    return Parsed("imb", points, kind, f"IMB {words}", info, skipped)


def _end(path, lineno, header, name):
    if not header["skip"] and not header["rows"]:
        raise located(path, lineno, f"'{name}' block has no data rows (truncated?)")


def _header(path, lineno, text, name, procs, statistic, skipped):
    names = text.split()
    if "#bytes" in names[1:]:
        raise located(path, lineno, f"IMB header '{text}': '#bytes' is not the first column: "
                      "columns out of order?")
    if procs is None:
        raise located(path, lineno, f"'{name}' block has no '# #processes = P' line")
    times = {}
    for i, column in enumerate(names):
        m = _TIME.match(column)
        if m:
            times[m.group(1)] = (i, unit_factor(m.group(2), path, lineno))
    sizeless = names[0] == "#repetitions"      # Barrier: no message size
    if names[0] not in ("#bytes", "#repetitions") or set(times) != {"min", "max", "avg"} \
            or name.startswith("Multi-"):
        skipped.append(f"{name} (P={procs})")
        return {"skip": True}
    if not sizeless and names[1] != "#repetitions":
        raise located(path, lineno, f"IMB header '{text}': expected '#bytes #repetitions' "
                      "first: columns out of order?")
    return {"names": names, "times": times, "pick": statistic, "rows": 0, "skip": False,
            "sized": not sizeless}


def _row(path, lineno, text, header, name, procs):
    fields = text.split()
    if len(fields) != len(header["names"]):
        raise located(path, lineno, f"{len(fields)} fields, the IMB header has "
                      f"{len(header['names'])}: truncated line?")
    sized = header["sized"]
    size = parse_int(fields[0], path, lineno, "#bytes") if sized else 0
    reps = parse_int(fields[int(sized)], path, lineno, "#repetitions", 1, 2**62)
    t = {k: parse_time(fields[i], path, lineno, f"t_{k}", f) for k, (i, f) in
         header["times"].items()}
    check_order(path, lineno, t["min"], t["avg"], t["max"], ("t_min", "t_avg", "t_max"))
    return Point(lineno, size, t[header["pick"]], {"n": reps}, comm_size=procs,
                 collective=collective_name(name))
