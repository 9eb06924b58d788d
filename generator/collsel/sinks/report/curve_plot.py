"""Anytime curves as SVG: the measuring cost spent (% of the full table's) against the held-out
penalty of the tree built from what was measured (interior leave-one-P-out and leave-one-m-out,
pipeline/tune/curve.py), one line per series, beside the full table's own tree (dashed) and the
band 0.5 points above it (issue 40's target). Drawn by `collsel tune --replay` (each
collective's curve.svg) and by speed/replay/compare_strategies.py (both strategies per table).
Deterministic bytes: the report's matplotlib settings (sinks/report/plots.RC)."""
from __future__ import annotations

import io
import itertools
from collections.abc import Sequence
from dataclasses import dataclass

PROTOCOLS = (("P_mean", "leave-one-P-out"), ("m_mean", "leave-one-m-out"))
TARGET_GAP = 0.5        # points above the full table's tree
COLOURS = ("#4477AA", "#EE6677", "#228833", "#CCBB44")


@dataclass(frozen=True)
class Series:
    """One curve: its points' cost (% of the full table's) and figures by protocol key."""
    label: str
    cost_pct: Sequence[float]
    figures: dict[str, Sequence[float | None]]   # "P_mean", "m_mean" -> one value a point


def preload() -> None:
    """Import what figure_svg draws with (half a second), e.g. in a thread while the curve's
    points are being scored by other processes."""
    import matplotlib.backends.backend_svg  # noqa: F401
    import matplotlib.figure  # noqa: F401
    import matplotlib.ticker  # noqa: F401


def figure_svg(title: str, series: Sequence[Series],
               full: dict[str, float | None] | None = None) -> bytes:
    """Two panels (leave-one-P-out, leave-one-m-out) of every series; `full`: the full
    table's tree's figures by protocol key (dashed, with the target band)."""
    import matplotlib
    from matplotlib.figure import Figure
    from matplotlib.ticker import FuncFormatter

    from collsel.sinks.report import plots

    with matplotlib.rc_context():
        matplotlib.rcdefaults()
        matplotlib.rcParams.update(plots.RC)
        fig = Figure(figsize=(8.4, 3.0), dpi=plots.DPI)
        for i, (key, name) in enumerate(PROTOCOLS):
            ax = fig.add_subplot(1, len(PROTOCOLS), i + 1)
            for colour, s in zip(itertools.cycle(COLOURS), series):
                points = [(c, v) for c, v in zip(s.cost_pct, s.figures[key]) if v is not None]
                if points:
                    ax.plot(*zip(*points), marker="o", markersize=3.5, linewidth=1.2,
                            color=colour, label=s.label)
            level = (full or {}).get(key)
            if level is not None:
                ax.axhline(level, color="#303030", linestyle="--", linewidth=0.9,
                           label="full table's tree")
                ax.axhspan(level, level + TARGET_GAP, color="#303030", alpha=0.12,
                           linewidth=0, label=f"within {TARGET_GAP:g} points")
            ax.set_xscale("log")
            plain = FuncFormatter(lambda v, _: f"{v:g}")     # 20, not 2 x 10^1
            ax.xaxis.set_major_formatter(plain)
            ax.xaxis.set_minor_formatter(plain)
            ax.tick_params(axis="x", which="minor", labelsize=6.5)
            ax.set_xlabel("measuring cost (% of the full table's, log scale)")
            ax.set_ylabel(f"mean penalty, {name} (%)")
            ax.set_title(f"{title}: {name}", fontsize=9)
            ax.grid(True, linewidth=0.3, alpha=0.5)
            if i == 0:
                ax.legend(fontsize=7, loc="upper right")
        fig.tight_layout()
        out = io.BytesIO()
        fig.savefig(out, format="svg", metadata={"Date": None, "Creator": None})
    return out.getvalue()


def curve_series(label: str, rows: Sequence[dict]) -> Series:
    """A Series of pipeline/tune/curve.py's rows (one replayed tune's checkpoints)."""
    return Series(label, [r["cost_pct"] for r in rows],
                  {key: [r.get(key) for r in rows] for key, _ in PROTOCOLS})
