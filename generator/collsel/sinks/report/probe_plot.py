"""The paper's figure 2: probe latency against the collective's latency, one panel per message
size, one point per launch, coloured by the nominal load level (for the eye only)."""
import io

from matplotlib.figure import Figure

LEVEL_COLOURS = {"off": "#4477AA", "low": "#228833", "medium": "#CCBB44", "high": "#EE6677"}


def probe_latency_png(panels):
    """PNG bytes; `panels`: [(title, probe_us array, time_us array, level array)]."""
    fig = Figure(figsize=(4.2 * max(1, len(panels)), 3.6), dpi=100)
    for i, (title, x, y, levels) in enumerate(panels):
        ax = fig.add_subplot(1, len(panels), i + 1)
        for level, colour in LEVEL_COLOURS.items():
            sel = levels == level
            if sel.any():
                ax.scatter(x[sel], y[sel], s=14, color=colour, label=level)
        other = ~(levels[:, None] == list(LEVEL_COLOURS)).any(axis=1)
        if other.any():
            ax.scatter(x[other], y[other], s=14, color="#777777", label="?")
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("probe_us (launch median)")
        ax.set_ylabel("time_us (launch median)")
        ax.set_title(title, fontsize=9)
        ax.legend(fontsize=7, frameon=False)
    fig.tight_layout()
    out = io.BytesIO()
    fig.savefig(out, format="png", metadata={"Software": None})
    return out.getvalue()
