"""Did a launch run its ranks where the sweep's mapping says? The benchmark reports every rank's
MPI_Get_processor_name (`#@rank_hosts=h0,h1,...`, rank order); the launcher says what it expects
(`Expected`: how many nodes, how many ranks on each, and on which hosts when it knows them).

A launch placed otherwise measured something else than its rows would claim (a 2 x 2 point
that really ran 4 ranks on one node), so the sweep stops with one line instead of recording it.
Host names are compared by their first label, case-folded (`n1` = `N1.cluster`), as
processor names and hostfile entries often differ only there.
"""
from collections import Counter
from dataclasses import dataclass

from collsel.errors import CollselError


class PlacementError(CollselError):
    """A launch's ranks are not where the mapping says (exit status 1)."""


@dataclass(frozen=True)
class Expected:
    nodes: int = 0              # distinct hosts; 0: any number
    ppn: int = 0                # ranks on every host; 0: any
    hosts: tuple = ()           # the hosts allowed (short names); (): any
    what: str = ""              # the mapping in words, for the error line


def short(host):
    return host.strip().split(".")[0].lower()


def parse(text):
    """The hosts of a `#@rank_hosts=` value, rank order."""
    return [h for h in text.strip().split(",")] if text and text.strip() else []


def problem(hosts, nprocs, expected):
    """Why `hosts` (rank order) is not the placement `expected` of nprocs ranks, or None."""
    if len(hosts) != nprocs:
        return f"{len(hosts)} ranks reported their host, the launch has {nprocs}"
    per_host = Counter(short(h) for h in hosts)
    if expected.hosts:
        allowed = {short(h) for h in expected.hosts}
        stray = sorted(h for h in per_host if h not in allowed)
        if stray:
            return f"ranks on {','.join(stray)}, not one of {','.join(expected.hosts)}"
    if expected.nodes and len(per_host) != expected.nodes:
        return f"ranks on {len(per_host)} host{'s' if len(per_host) != 1 else ''}, not " \
               f"{expected.nodes}"
    if expected.ppn:
        wrong = sorted(h for h, n in per_host.items() if n != expected.ppn)
        if wrong:
            return f"{' '.join(f'{h}:{per_host[h]}' for h in wrong)} ranks, not " \
                   f"{expected.ppn} per node"
    return None


def summary(hosts):
    """host:count in order of first rank, e.g. `n1:2,n2:2` (for progress and errors)."""
    per_host = Counter(hosts)
    return ",".join(f"{h}:{per_host[h]}" for h in dict.fromkeys(hosts))


def check(meta, nprocs, expected, label, required):
    """The launch's rank hosts (from its `#@` header items `meta`), checked; raises
    PlacementError naming the launch `label`. A benchmark that does not report them (another
    program given as --bench) passes unless `required` (an explicit mapping), returning []."""
    if "rank_hosts" not in meta:
        if required:
            raise PlacementError(f"{label}: the benchmark did not report where "
                                 "its ranks ran (no '#@rank_hosts=' header line), so the "
                                 f"mapping ({expected.what}) cannot be checked; use the "
                                 "shipped collsel_bench")
        return []
    hosts = parse(meta["rank_hosts"])
    why = problem(hosts, nprocs, expected)
    if why:
        raise PlacementError(f"{label}: ranks ran on {summary(hosts)[:300]}, "
                             f"not as the mapping says ({expected.what}): {why}; the launcher "
                             "placed them otherwise (check the hostfile, the allocation, "
                             "--launcher-args)")
    return hosts
