"""The paper's figure 2: probe latency against the collective's latency, one panel per (P, m)
(core.evaluate.probe_latency.panels), one point per launch, coloured by the nominal load level (for
the eye only). Drawn by `collsel stats --probe-latency --plot` and in `collsel report`."""
import io

import numpy as np
from matplotlib.figure import Figure

LEVEL_COLOURS = {"off": "#4477AA", "low": "#228833", "medium": "#CCBB44", "high": "#EE6677"}


def title(collective, panel):
    """'bcast P=4 m=4096' and what is drawn, with the default's coefficients."""
    r = panel.row
    what = (f"default: Pearson {r['pearson']:.2f}, Spearman {r['spearman']:.2f}"
            if r is not None else "every method")
    return f"{collective} P={panel.comm_size} m={panel.msg_size}\n{what}"


def probe_latency_figure(collective, panels):
    """A matplotlib Figure; `panels`: [core.evaluate.probe_latency.Panel]."""
    fig = Figure(figsize=(4.2 * max(1, len(panels)), 3.6), dpi=100)
    for i, panel in enumerate(panels):
        ax = fig.add_subplot(1, len(panels), i + 1)
        x, y = np.asarray(panel.probe_us, float), np.asarray(panel.time_us, float)
        levels = np.asarray(panel.level, dtype=object)
        for level, colour in LEVEL_COLOURS.items():
            sel = levels == level
            if sel.any():
                ax.scatter(x[sel], y[sel], s=14, color=colour, label=level)
        other = ~np.isin(levels, list(LEVEL_COLOURS))
        if other.any():
            ax.scatter(x[other], y[other], s=14, color="#777777", label="?")
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("probe_us (launch median)")
        ax.set_ylabel("time_us (launch median)")
        ax.set_title(title(collective, panel), fontsize=9)
        ax.legend(fontsize=7, frameon=False)
    fig.tight_layout()
    return fig


def probe_latency_png(collective, panels):
    """PNG bytes of probe_latency_figure."""
    out = io.BytesIO()
    probe_latency_figure(collective, panels).savefig(out, format="png",
                                                     metadata={"Software": None})
    return out.getvalue()
