"""The wall time a dry run announces, from a simple cost model:

    launches x start-up  +  (size, method) points x the time one point takes

Start-up is a constant per launcher (STARTUP_S, measured on this project's machine). A point's
time is calibrated on the sweep's own journal when one exists (a resumed sweep's launches: their
wall time less the start-up, per point, per shape, else over all shapes); without one it is the
--time-cap, the budget of a point, which is about what points of the shipped sweeps cost on
average (bench-data/paired: 0.3 x the cap at P=2 to 1.4 x at P=16, 0.9 x over a whole sweep).
"""
# Seconds a paired launch of collsel_bench takes beyond its measuring, as measured here
# (2026-11-25, 2 cores, other work running): mpirun -np 2 or 4 with 2 methods 0.36-0.46 s, with
# 6 methods (MPI_T set-up, a communicator each, warm-up) 0.8-1.0 s for 12 points at a 5 ms cap;
# on the emulated 3-node cluster srun 1.1 s with 2 methods, 1.6-2.1 s for 14 points at 30 ms
# (P=2), mpirun --host n1:2,n2:2,n3:2 1.1-1.5 s with 2 methods. The sweep's own start (Python,
# the table) adds a second or two once.
# A replayed launch (sweep/replay.py) is charged what one launch of collsel_bench costs beyond
# its measuring, measured here (2026-11-29, 2 cores shared with other work, load average
# 1.4-1.7): Open MPI 4.1.4 mpirun.openmpi, 2 methods x 1 size at --time-cap 0.001 (about 1 ms of
# measuring), wall times (/usr/bin/time) P=2: 0.58 0.57 0.53 0.53 0.56 0.58 s, P=4: 0.66 0.64
# 0.63 0.64 0.64 s; the mean of the 11 runs, 0.596 s. (The local 0.8 s adds MPI_T set-up and a
# communicator per method of a 6-method launch; those are in the recorded times a replay adds.)
STARTUP_S = {"local": 0.8, "hostfile": 1.5, "srun": 1.5, "replay": 0.6}


def per_point(observed, startup_s):
    """{shape mark: seconds per point} and the rate over all shapes (None without data) from
    `observed` launches (mark, points, wall_s)."""
    spent, points = {}, {}
    for mark, n, wall_s in observed:
        if n > 0:
            spent[mark] = spent.get(mark, 0.0) + max(wall_s - startup_s, 0.0)
            points[mark] = points.get(mark, 0) + n
    rates = {mark: spent[mark] / points[mark] for mark in points}
    overall = sum(spent.values()) / sum(points.values()) if points else None
    return rates, overall


def startup(launcher_name):
    return STARTUP_S.get(launcher_name, max(STARTUP_S.values()))


def wall_seconds(planned, launcher_name, time_cap, observed=()):
    """The estimated wall time, in seconds, of the `planned` launches ((shape mark, points)
    each), as `estimate` announces it (collsel tune fits its grids with it)."""
    startup_s = startup(launcher_name)
    rates, overall = per_point(observed, startup_s)
    fallback = overall if overall is not None else time_cap
    return sum(startup_s + n * rates.get(mark, fallback) for mark, n in planned)


def estimate(planned, launcher_name, time_cap, observed=(), journal=None):
    """One line: the estimated wall time of the `planned` launches ((shape mark, points) each)
    and how it was made; `observed`: the journal's launches (mark, points, wall_s)."""
    startup_s = startup(launcher_name)
    rates, overall = per_point(observed, startup_s)
    fallback = overall if overall is not None else time_cap
    seconds = wall_seconds(planned, launcher_name, time_cap, observed)
    points = sum(n for _, n in planned)
    used = sorted({rates.get(mark, fallback) for mark, _ in planned}) or [fallback]
    each = (f"{1e3 * used[0]:.3g} ms" if len(used) == 1
            else f"{1e3 * used[0]:.3g}-{1e3 * used[-1]:.3g} ms")
    if overall is None:
        how = ("a point costs its --time-cap, about what points cost on average in "
               "bench-data/paired; a resumed paired sweep calibrates it on its journal")
    else:
        how = (f"calibrated on the {len(observed)} launches in {journal}, per shape where "
               "it has them")
    return (f"estimate: about {duration(seconds)} of wall time = {len(planned)} launches x "
            f"{startup_s:g} s start-up ({launcher_name}) + {points} (size, method) points x "
            f"{each} ({how})")


def duration(seconds):
    if seconds < 90:
        return f"{seconds:.0f} s"
    if seconds < 90 * 60:
        return f"{seconds / 60:.0f} min"
    hours, rest = divmod(round(seconds / 60), 60)
    return f"{hours} h {rest:02d} min"
