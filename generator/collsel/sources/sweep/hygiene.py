"""Is the machine idle? The load average and the other busy processes, sampled from /proc at the
start and end of each launch, recorded with the launch; one warning per run (the first time the
machine is not idle), and the busy commands of the whole run listed at its end.

A process counts as busy when it used more than BUSY_SHARE of one CPU over a SAMPLE_S sample;
the sweep's own process tree (this process and its descendants: a launch still ending) is not
counted. The 1-min load average alone cannot tell: right after a launch it is the launch's own
load, so a warning needs a busy process too.
"""
import os
import time

SAMPLE_S = 0.25
BUSY_SHARE = 0.05
LOAD_LIMIT = 0.5


def _stat(pid):
    """(parent PID, CPU ticks used, command name) of a process, or None if it is gone."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            raw = f.read().decode("utf-8", "replace")
    except OSError:
        return None
    name = raw[raw.find("(") + 1:raw.rfind(")")]
    rest = raw[raw.rfind(")") + 2:].split()
    return int(rest[1]), int(rest[11]) + int(rest[12]), name


def _snapshot():
    out = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            got = _stat(int(entry))
            if got:
                out[int(entry)] = got
    return out


def _own_tree(snapshot):
    mine, parents = {os.getpid()}, {pid: s[0] for pid, s in snapshot.items()}
    grew = True
    while grew:                         # descendants, level by level (no recursion)
        new = {pid for pid, parent in parents.items() if parent in mine} - mine
        mine |= new
        grew = bool(new)
    return mine


def loadavg_1min():
    try:
        with open("/proc/loadavg") as f:
            return float(f.read().split()[0])
    except (OSError, ValueError, IndexError):
        return None


def busy_processes(sample_s=SAMPLE_S):
    """[(pid, command, CPU share)] of the other processes busy during a short sample, busiest
    first; [] where /proc cannot tell."""
    if not os.path.isdir("/proc"):
        return []
    try:
        hz = os.sysconf("SC_CLK_TCK")
    except (ValueError, OSError):
        hz = 100
    first = _snapshot()
    time.sleep(sample_s)
    second = _snapshot()
    mine = _own_tree(second) | _own_tree(first)
    busy = []
    for pid, (_, ticks, name) in second.items():
        if pid in mine or pid not in first:
            continue
        share = (ticks - first[pid][1]) / hz / sample_s
        if share > BUSY_SHARE:
            busy.append((pid, name, share))
    return sorted(busy, key=lambda b: -b[2])


def describe(load, busy):
    """One metadata value: load average and busy processes."""
    listed = ", ".join(f"{name}[{pid}] {share:.0%}" for pid, name, share in busy[:8])
    return f"loadavg {load if load is not None else '?'}; busy: {listed or 'none'}"


class Watch:
    """Samples before/after launches; says once when the machine is not idle, and collects the
    busy command names (`warned`)."""

    def __init__(self):
        self.warned = set()

    def sample(self):
        """(metadata text, warning line or None)."""
        load, busy = loadavg_1min(), busy_processes()
        text = describe(load, busy)
        names = {name for _, name, _ in busy}
        if load is None or load <= LOAD_LIMIT or not names:
            return text, None
        first = not self.warned
        self.warned |= names
        return text, (f"collsel sweep: warning: the machine is not idle ({text}); measurements "
                      "made now are noisy (said once; the table's run.N.not_idle line lists "
                      "every busy command)" if first else None)
