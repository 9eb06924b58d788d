"""A program's collective profile (`collsel profile`): the census files libcollsel's ranks write
(COLLSEL_CENSUS=PREFIX, runtime/libcollsel/census.c, one PREFIX.<rank>.json each) merged into one
profile, and a profile read back. Both kinds of file are checked against their schema
(schemas/census.schema.json, schemas/profile.schema.json) and the rules a schema cannot state,
each refusal one located line (InputError, exit 2).

A profile's point is (collective, comm_size, m, ppn): m is the byte count libcollsel queries trees
with (its pmpi.c, the same for every rank of a call), ppn the communicator's processes per node.
Per point: `calls` summed over the ranks, `calls_per_rank` the most of one rank, `time_s` summed
over the ranks, `median_us` the median of one call's time over all of them (from the ranks'
merged log-bucket histograms: a bucket's midpoint), `share` = time_s / the ranks' wall time
summed (MPI_Init to MPI_Finalize).
"""
import json
import os
import re
from collections import namedtuple

from collsel.core import schemas
from collsel.core.io import jsonfile
from collsel.errors import InputError

FORMAT = "collsel-profile"
VERSION = 1
CENSUS_SUFFIX = ".json"
_RANK_FILE = re.compile(r"\.(\d+)\.json")

Point = namedtuple("Point", "collective comm_size m ppn")


def point_of(entry):
    return Point(entry["collective"], entry["comm_size"], entry["m"], entry["ppn"])


def _no_repeats(entries, path, what="entries"):
    seen = {}
    for i, entry in enumerate(entries):
        key = point_of(entry)
        if key in seen:
            raise InputError(f"{path}: {what}[{i}]: the point {_point_text(key)} again "
                             f"(first at {what}[{seen[key]}])")
        seen[key] = i


def _point_text(point):
    return (f"{point.collective} P={point.comm_size} m={point.m} "
            f"ppn={point.ppn if point.ppn >= 0 else 'inter'}")


# ---- the ranks' census files -------------------------------------------------------------------

def census_files(prefix):
    """{rank: path} of the census files PREFIX.<rank>.json (none: {})."""
    directory, stem = os.path.split(os.path.abspath(prefix))
    try:
        names = os.listdir(directory)
    except OSError as e:
        raise InputError(f"{directory}: cannot read: {e.strerror}") from None
    found = {}
    for name in names:
        if name.startswith(stem):
            match = _RANK_FILE.fullmatch(name[len(stem):])
            if match:
                found[int(match.group(1))] = os.path.join(directory, name)
    return found


def read_census(path):
    """One rank's census file, checked."""
    doc = jsonfile.read(path)
    schemas.check(doc, "census", path)
    if doc["rank"] >= doc["size"]:
        raise InputError(f"{path}: rank: {doc['rank']} is not below size {doc['size']}")
    histogram = doc["histogram"]
    buckets = histogram["octaves"] * histogram["steps_per_octave"]
    for i, entry in enumerate(doc["entries"]):
        for j, (bucket, _) in enumerate(entry["buckets"]):
            if bucket >= buckets:
                raise InputError(f"{path}: entries[{i}].buckets[{j}]: bucket {bucket} is beyond "
                                 f"the histogram's {buckets}")
        counted = sum(n for _, n in entry["buckets"])
        if counted != entry["calls"]:
            raise InputError(f"{path}: entries[{i}].buckets: {counted} calls in the buckets, "
                             f"{entry['calls']} in calls")
    _no_repeats(doc["entries"], path)
    return doc


def bucket_midpoint_ns(bucket, histogram):
    """The middle of bucket `bucket` of `histogram` (a census file's "histogram") in ns."""
    steps = histogram["steps_per_octave"]
    octave, step = histogram["first_octave"] + bucket // steps, bucket % steps
    return 2.0 ** octave * (1 + (step + 0.5) / steps)


def median_ns(counts, histogram):
    """The lower median of a histogram {bucket: calls}, as its bucket's midpoint."""
    wanted, seen = (sum(counts.values()) + 1) // 2, 0
    for bucket in sorted(counts):
        seen += counts[bucket]
        if seen >= wanted:
            return bucket_midpoint_ns(bucket, histogram)
    raise ValueError("an empty histogram has no median")


def merge(docs, command, where):
    """The profile of one launch from its ranks' census documents {path: doc} (read_census);
    `where` names the files in a refusal (a missing rank, ranks of different launches)."""
    if not docs:
        raise InputError(f"{where}: no census file: did the program run under libcollsel and "
                         f"reach MPI_Finalize?")
    first_path, first = next(iter(docs.items()))
    size = first["size"]
    ranks = {}
    for path, doc in docs.items():
        for key in ("size", "histogram"):
            if doc[key] != first[key]:
                raise InputError(f"{path}: {key} {json.dumps(doc[key])} differs from "
                                 f"{first_path}'s {json.dumps(first[key])} (another launch?)")
        if doc["rank"] in ranks:
            raise InputError(f"{path}: rank {doc['rank']} again ({ranks[doc['rank']]})")
        ranks[doc["rank"]] = path
    missing = sorted(set(range(size)) - set(ranks))
    if missing:
        raise InputError(f"{where}: no census file of rank {missing[0]} of {size} "
                         f"({len(missing)} missing): did every rank reach MPI_Finalize?")
    histogram = first["histogram"]
    points = {}
    for doc in docs.values():
        for entry in doc["entries"]:
            p = points.setdefault(point_of(entry), {"ranks": 0, "calls": 0, "calls_per_rank": 0,
                                                    "ns": 0, "buckets": {}})
            p["ranks"] += 1
            p["calls"] += entry["calls"]
            p["calls_per_rank"] = max(p["calls_per_rank"], entry["calls"])
            p["ns"] += entry["ns"]
            for bucket, n in entry["buckets"]:
                p["buckets"][bucket] = p["buckets"].get(bucket, 0) + n
    wall = [doc["wall_ns"] for doc in docs.values()]
    wall_sum = sum(wall)
    entries = [{"collective": k.collective, "comm_size": k.comm_size, "m": k.m, "ppn": k.ppn,
                "ranks": p["ranks"], "calls": p["calls"], "calls_per_rank": p["calls_per_rank"],
                "time_s": p["ns"] / 1e9,
                "median_us": round(median_ns(p["buckets"], histogram) / 1e3, 3),
                "share": min(1.0, p["ns"] / wall_sum) if wall_sum else 0.0}
               for k, p in points.items()]
    entries.sort(key=lambda e: (-e["time_s"], e["collective"], e["comm_size"], e["m"], e["ppn"]))
    return {"format": FORMAT, "version": VERSION, "command": [str(w) for w in command],
            "library": docs[ranks[0]]["library"], "ranks": size,
            "hosts": len({doc["host"] for doc in docs.values()}),
            "wall_time_s": {"mean": wall_sum / len(wall) / 1e9, "max": max(wall) / 1e9},
            "dropped_calls": sum(doc["dropped"]["calls"] for doc in docs.values()),
            "entries": entries}


def merge_prefix(prefix, command):
    """The profile of the census files PREFIX.<rank>.json."""
    files = census_files(prefix)
    return merge({files[r]: read_census(files[r]) for r in sorted(files)}, command,
                 f"{prefix}.*.json")


def dumps(profile):
    """A profile as its file's text (checked first: collsel writes nothing it would refuse)."""
    schemas.check(profile, "profile", "the profile")
    return json.dumps(profile, indent=1) + "\n"


# ---- a profile read back -----------------------------------------------------------------------

def read(path):
    """A profile file, checked: its schema, no point twice, calls_per_rank <= calls and ranks
    <= the profile's ranks."""
    doc = jsonfile.read(path)
    schemas.check(doc, "profile", path)
    _no_repeats(doc["entries"], path)
    for i, entry in enumerate(doc["entries"]):
        if entry["calls_per_rank"] > entry["calls"]:
            raise InputError(f"{path}: entries[{i}].calls_per_rank: {entry['calls_per_rank']} is "
                             f"above calls {entry['calls']}")
        if entry["ranks"] > doc["ranks"]:
            raise InputError(f"{path}: entries[{i}].ranks: {entry['ranks']} is above the "
                             f"profile's ranks {doc['ranks']}")
    return doc


def by_collective(profile):
    """[(collective, share, time_s, calls, [entries by time])] largest share first."""
    groups = {}
    for entry in profile["entries"]:
        groups.setdefault(entry["collective"], []).append(entry)
    rows = [(c, sum(e["share"] for e in es), sum(e["time_s"] for e in es),
             sum(e["calls"] for e in es), sorted(es, key=lambda e: -e["time_s"]))
            for c, es in groups.items()]
    return sorted(rows, key=lambda row: (-row[2], row[0]))
