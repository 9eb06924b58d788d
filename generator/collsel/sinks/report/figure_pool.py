"""The report's figures drawn by two processes (matplotlib is most of a report's time and the
machines collsel runs on have at least two cores). The pool is started before the long work,
so the workers load matplotlib while the parent selects the recommended tree; the parent never
imports matplotlib itself. Each figure group is drawn whole by one process, so the bytes are
those a single process draws."""
import functools

from collsel.core import parallel

PAGE_ORDER = ("maps", "robust", "penalty", "baselines", "tradeoff", "probe")
# Groups in the order they are handed out: the slowest first, so the two processes finish
# together (maps and penalty panels take about twice as long as the others).
SCHEDULE = ("maps", "penalty", "robust", "tradeoff", "baselines", "probe")


def _start_worker():
    from collsel.sinks.report import plots
    plots.warm_up()


def pool():
    """core.parallel's pool, its workers loading matplotlib as they start (or None)."""
    return parallel.pool(_start_worker)


def _draw(report, group):
    from collsel.sinks.report import plots
    return plots.render_group(report, group)


def render_all(report, workers=None):
    """[(name, caption, png bytes, svg bytes)] of every figure, in PAGE_ORDER."""
    draw = functools.partial(_draw, report)
    if workers is None:
        drawn = dict(zip(SCHEDULE, map(draw, SCHEDULE)))
    else:
        drawn = dict(zip(SCHEDULE, workers.map(draw, SCHEDULE, chunksize=1)))
    return [fig for group in PAGE_ORDER for fig in drawn[group]]
