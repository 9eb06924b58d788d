"""The report's figures drawn by two processes (matplotlib is most of a report's time and the
machines collsel runs on have at least two cores). The pool is started before the long work:
its workers first compute the recommended tree's fold costs (core.evaluate.model_selection), then
load matplotlib (warm) while the parent scores the trees the report shows, then draw; the parent
never imports matplotlib itself. Each figure group is drawn whole by one process, so the bytes
are those a single process draws."""
import functools

from collsel.core.evaluate import parallel

PAGE_ORDER = ("maps", "robust", "penalty", "baselines", "tradeoff", "probe")
# Groups in the order they are handed out: the slowest first, so the two processes finish
# together (maps and penalty panels take about twice as long as the others).
SCHEDULE = ("maps", "penalty", "robust", "tradeoff", "baselines", "probe")

# Shared by the workers (forked from the process that made it): warm's tasks meet here, so that
# each worker takes one of them.
_meeting = None


def pool():
    """core.evaluate.parallel's pool (or None on a machine with fewer cores). Its workers load
    matplotlib only when told (warm): loading it as they start (0.3-0.5 s of CPU each) delayed the
    fold costs the parent waits for, and took the cores the parent's own work needed."""
    global _meeting
    import multiprocessing
    _meeting = multiprocessing.get_context("fork").Barrier(parallel.WORKERS)
    return parallel.pool()


def _load_matplotlib(_):
    import os
    from collsel.sinks.report import plots
    plots.warm_up()
    _meeting.wait(timeout=120)    # the other worker takes the other task
    return os.getpid()


def warm(workers):
    """Each worker loads matplotlib now, in the background: call it when the parent has work
    of its own for about as long (scoring the report's trees), so that the figures start at
    once. Returns the tasks' AsyncResult (the workers' pids), or None without workers. A
    worker it failed in loads matplotlib with its first figure."""
    if workers is None:
        return None
    return workers.map_async(_load_matplotlib, range(parallel.WORKERS), chunksize=1)


def _draw(report, png, group):
    from collsel.sinks.report import plots
    return plots.render_group(report, group, png)


def render_all(report, workers=None, png=False, meanwhile=None):
    """[(name, caption, width in pixels, png bytes or None, svg bytes)] of every figure, in
    PAGE_ORDER (plots.render_group; the PNG only with `png`); `meanwhile()`, the caller's own
    work, runs while the workers draw."""
    draw = functools.partial(_draw, report, png)
    if workers is None:
        drawn = dict(zip(SCHEDULE, map(draw, SCHEDULE)))
        if meanwhile:
            meanwhile()
    else:
        pending = workers.map_async(draw, SCHEDULE, chunksize=1)
        if meanwhile:
            meanwhile()
        drawn = dict(zip(SCHEDULE, pending.get()))
    return [fig for group in PAGE_ORDER for fig in drawn[group]]
