"""The report's figures, drawn with matplotlib from the report dict alone (report.json).

matplotlib because the figures need axes, tick labels and legends in both PNG and SVG, and a
hand-written PNG rasteriser would need its own font. Output is kept deterministic: the Agg
backend through Figure objects (no pyplot state), matplotlib's defaults (no user matplotlibrc),
a fixed `svg.hashsalt`, no dates or software tags in the metadata. The colour cells are
rasterised inside the SVG (one image per panel instead of thousands of paths); axes and text
stay vector.
"""
import functools
import gc
import io
import math
import re

import matplotlib
from matplotlib.backends.backend_agg import FigureCanvasAgg, RendererAgg
from matplotlib.collections import LineCollection
from matplotlib.colors import BoundaryNorm, ListedColormap
from matplotlib.figure import Figure
from matplotlib.font_manager import FontProperties
from matplotlib.lines import Line2D
from matplotlib.patches import Patch
from matplotlib.ticker import MaxNLocator
import numpy as np

from collsel.core.evaluate import probe_latency
from collsel.core.mpi import method_text
from collsel.sinks.report import probe_plot

DPI = 100
PANEL_W, PANEL_H = 4.6, 3.3    # inches per map panel; three panels per row fill the page
MAP_COLUMNS = 3
TICK_FONT = 8.5                # points
TICK_GAP_PX = 6                # least blank space between two tick labels
LOG_P_RATIO = 16               # a P axis spanning this factor or more is drawn in log scale
RC = {"svg.hashsalt": "collsel-report", "svg.fonttype": "path", "font.size": 9,
      "xtick.labelsize": TICK_FONT, "ytick.labelsize": TICK_FONT,
      "axes.titlesize": 10, "figure.dpi": DPI, "savefig.dpi": DPI}
# Thinning steps of the m axis, in powers of two between labels: 1, 4, 16 ... (2), 1, 1K, 1M (10).
M_TICK_STEPS = (1, 2, 4, 5, 10, 20, 30)


def _log_p(axis):
    """Whether the communicator-size axis is drawn in log scale (P spanning a wide range, as
    powers of two do, would otherwise squeeze the small P into a strip)."""
    v = axis["values"]
    return axis["kind"] != "category" and v[0] > 0 and v[-1] / v[0] >= LOG_P_RATIO


def _positions(axis, log=False):
    values = axis["values"]
    if axis["kind"] == "log2" or log:
        pos = [math.log2(v) if v > 0 else None for v in values]
        first = next((p for p in pos if p is not None), 0.0)
        pos = [first - 1.0 if p is None else p for p in pos]
    else:
        pos = [float(v) for v in values]
    return pos


def _edges(pos):
    if len(pos) == 1:
        return [pos[0] - 0.5, pos[0] + 0.5]
    mids = [(a + b) / 2 for a, b in zip(pos[:-1], pos[1:])]
    return [pos[0] - (mids[0] - pos[0])] + mids + [pos[-1] + (pos[-1] - mids[-1])]


def _slice(grid, k):
    """The [P][m] plane of a grid ([P][m] or [P][m][z])."""
    return grid if k is None else [[cell[k] for cell in row] for row in grid]


class _Frame:
    """Axes geometry shared by every map panel of one report."""

    def __init__(self, report):
        axes = report["data"]["axes"]
        self.log_p = _log_p(axes[0])
        self.p_values = axes[0]["values"]
        self.p_pos, self.m_pos = _positions(axes[0], self.log_p), _positions(axes[1])
        self.p_edges, self.m_edges = _edges(self.p_pos), _edges(self.m_pos)
        m_vals = axes[1]["values"]
        lo, hi = math.ceil(self.m_edges[0]), math.floor(self.m_edges[-1])
        self.m_candidates = [t for t in range(max(0, lo), hi + 1)]
        self.has_zero = bool(m_vals) and m_vals[0] == 0
        self.z = axes[2] if len(axes) == 3 else None

    def _m_ticks(self, ax):
        """m-axis ticks (powers of two) thinned until neighbouring labels have TICK_GAP_PX of
        space between them at this panel's width, measured with the font that draws them."""
        fig = ax.figure
        width_px = ax.get_position().width * fig.get_figwidth() * fig.dpi
        span = self.m_edges[-1] - self.m_edges[0]
        px = width_px / span                          # pixels per power of two
        for step in M_TICK_STEPS:
            ticks = [t for t in self.m_candidates if t % step == 0]
            labels = [method_text.size_text(2 ** t, compact=True) for t in ticks]
            widths = [_text_px(fig, lab) for lab in labels]
            if all((b - a) * px >= (wa + wb) / 2 + TICK_GAP_PX for a, b, wa, wb in
                   zip(ticks, ticks[1:], widths, widths[1:])):
                return ticks, labels
        return ticks[:1], labels[:1]

    def _p_ticks(self, ax):
        """Log-scale P axis: the measured values, every k-th, as many as fit vertically."""
        fig = ax.figure
        height_px = ax.get_position().height * fig.get_figheight() * fig.dpi
        px = height_px / (self.p_edges[-1] - self.p_edges[0])
        line = TICK_FONT * fig.dpi / 72 * 1.3
        step = 1
        while any((b - a) * px < line for a, b in
                  zip(self.p_pos[::step], self.p_pos[step::step])):
            step += 1
        return self.p_pos[::step], [str(v) for v in self.p_values[::step]]

    def panel(self, ax, codes, cmap, norm, title, leaf=None, xlabel=True, ylabel=True):
        mesh = ax.pcolormesh(self.m_edges, self.p_edges, codes, cmap=cmap, norm=norm,
                      shading="flat", rasterized=True)
        if leaf is not None:
            ax.add_collection(LineCollection(self._boundaries(leaf), colors="#303030",
                                             linewidths=0.35, alpha=0.7))
        ax.set_xlim(self.m_edges[0], self.m_edges[-1])
        ax.set_ylim(self.p_edges[0], self.p_edges[-1])
        ax.set_xticks(*self._m_ticks(ax))
        if self.log_p:
            ax.set_yticks(*self._p_ticks(ax))
        else:
            ax.yaxis.set_major_locator(MaxNLocator(nbins=7, integer=True))
        ax.set_title(title, **_fixed_title(ax))
        # Panels of one grid share their axes, so only the outer ones label them: fewer texts
        # to lay out and draw twice (PNG and SVG), the largest part of a report's time.
        ax.tick_params(labelbottom=xlabel, labelleft=ylabel)
        if xlabel:
            ax.set_xlabel("message size m (bytes, log scale)" + (", 0 at left" if self.has_zero
                                                                 else ""))
        if ylabel:
            ax.set_ylabel("communicator size P" + (" (log scale)" if self.log_p else ""))
        return mesh

    def _boundaries(self, leaf):
        """Leaf-block borders as few long segments (runs along each grid line merged)."""
        segs = []
        n_p, n_m = len(leaf), len(leaf[0])
        for j in range(n_m - 1):          # vertical lines between columns j and j+1
            run = None
            for i in range(n_p + 1):
                edge = i < n_p and leaf[i][j] != leaf[i][j + 1]
                if edge and run is None:
                    run = i
                elif not edge and run is not None:
                    x = self.m_edges[j + 1]
                    segs.append([(x, self.p_edges[run]), (x, self.p_edges[i])])
                    run = None
        for i in range(n_p - 1):          # horizontal lines between rows i and i+1
            run = None
            for j in range(n_m + 1):
                edge = j < n_m and leaf[i][j] != leaf[i + 1][j]
                if edge and run is None:
                    run = j
                elif not edge and run is not None:
                    y = self.p_edges[i + 1]
                    segs.append([(self.m_edges[run], y), (self.m_edges[j], y)])
                    run = None
        return segs

    def centre(self, i, j):
        return self.m_pos[j], self.p_pos[i]


def _fixed_title(ax):
    """set_title's `y` for a panel: its default height, 1.0, given, when matplotlib's own
    placement would keep it there, which is when no offset text ('+1e4') tops the P axis (the
    m ticks are below the panel). Given, matplotlib skips that placement, which measures every
    tick label at each of the two draws (PNG, SVG): a sixth of a map figure's time."""
    formatter = ax.yaxis.get_major_formatter()
    formatter.set_locs(ax.yaxis.get_majorticklocs())   # what drawing the axis sets again
    return {} if formatter.get_offset() else {"y": 1.0}


def _text_px(fig, text, size=TICK_FONT, weight="normal"):
    """Width in pixels of a text as the figure's renderer draws it."""
    return _text_width(fig.dpi, text, size, weight)


@functools.lru_cache(maxsize=None)
def _text_width(dpi, text, size, weight):
    """The width of a text at `dpi`, measured once per process: every panel measures the same
    tick labels (and a figure's own renderer is a canvas of its size, allocated to measure)."""
    w, _, _ = RendererAgg(1, 1, dpi).get_text_width_height_descent(
        text, FontProperties(size=size, weight=weight), ismath=False)
    return w


LEGEND_FONT = 9                # points
LEGEND_ROW_IN = 0.21           # inches per legend row (font and label spacing)


def _grid_figure(n_panels, legend_rows=0, ncols=MAP_COLUMNS, min_cols=1, wspace=0.28, side=0.0):
    """A figure of map panels in a grid, with `legend_rows` rows of legend below the panels or
    a column `side` inches wide on their right (placed by _side_legend; the panels narrow to
    make room, so the figure keeps its width on the page). Returns the figure, its axes and,
    per axes, which axis labels it draws (only the outer panels')."""
    ncols = max(min_cols, min(ncols, n_panels))
    nrows = -(-n_panels // ncols)
    legend_h = 0.22 * legend_rows + 0.5 if legend_rows else 0.45
    height = PANEL_H * nrows + legend_h + 0.5
    width = PANEL_W * ncols + 0.4 + max(0.0, side - 0.25 * PANEL_W * ncols)
    fig = Figure(figsize=(width, height), dpi=DPI)
    FigureCanvasAgg(fig)
    top = 1 - 1.0 / height            # room for the title and two-line panel titles
    bottom = (legend_h + 0.1) / height
    grid = fig.add_gridspec(nrows, ncols, left=0.75 / width, right=1 - (0.6 + side) / width,
                            top=top, bottom=bottom, wspace=wspace, hspace=0.6)
    axs = [fig.add_subplot(grid[k // ncols, k % ncols]) for k in range(n_panels)]
    labels = [{"xlabel": k + ncols >= n_panels, "ylabel": k % ncols == 0}
              for k in range(n_panels)]
    return fig, axs, labels


def _side_legend(fig, side, handles, labels, headers=(), title=None):
    """A legend in the right-hand column of a _grid_figure (`side` inches wide), from the top;
    labels whose index is in `headers` are group headings, in bold."""
    width, height = fig.get_figwidth(), fig.get_figheight()
    ncol = max(1, math.ceil(len(labels) * LEGEND_ROW_IN / (height - 1.0)))
    legend = fig.legend(handles, labels, loc="upper left", ncol=ncol, frameon=False,
                        bbox_to_anchor=(1 - (side + 0.15) / width, 1 - 0.95 / height),
                        fontsize=LEGEND_FONT, handlelength=1.3, handletextpad=0.5,
                        labelspacing=0.45, columnspacing=1.0, borderaxespad=0.0, title=title,
                        title_fontsize=LEGEND_FONT + 0.5, alignment="left")
    for k, text in enumerate(legend.get_texts()):
        if k in headers:
            text.set_fontweight("bold")
    return legend


def _side_width(labels, rows_per_in):
    """Inches of a right-hand legend column holding `labels` (measured with the legend's font
    on a scratch figure), in as many columns as the height `rows_per_in` needs."""
    scratch = Figure(dpi=DPI)
    FigureCanvasAgg(scratch)
    text_in = max((_text_px(scratch, line, LEGEND_FONT, "bold") for lab in labels
                   for line in lab.split("\n")), default=0) / DPI
    ncol = max(1, math.ceil(len(labels) * LEGEND_ROW_IN / rows_per_in))
    return ncol * (text_in + 0.45) + 0.3


def _method_legend_items(report, shown):
    """Legend rows of the methods in `shown` (indices), grouped by algorithm: an algorithm with
    one method shown is one row with its name; one with several is a heading, then a row per
    variant (segment size, fan-in/out), dark to light as drawn."""
    groups = {}
    for m in report["data"]["methods"]:
        if m["index"] in shown:
            groups.setdefault(m["algorithm"], []).append(m)
    handles, labels, headers = [], [], []
    for alg in sorted(groups):
        group = groups[alg]
        if len(group) > 1:
            headers.append(len(labels))
            handles.append(Patch(alpha=0))
            labels.append(group[0]["algorithm_name"])
        for m in group:
            handles.append(Patch(facecolor=m["colour"], edgecolor="#444444", lw=0.3))
            labels.append(m["variant"] if len(group) > 1 else
                          "defer to the MPI" if m["defer"] else m["name"])
    return handles, labels, headers


def _penalty_codes(report, grid, measured):
    """Per cell: 0 not measured, 1 choice not measured, 2 + bin index."""
    bins = report["penalty_bins"]
    out = []
    for prow, mrow in zip(grid, measured):
        row = []
        for v, meas in zip(prow, mrow):
            if not meas:
                row.append(0)
            elif v is None:
                row.append(1)
            else:
                k = next(b for b, x in enumerate(bins)
                         if (x["low"] is None or v >= x["low"])
                         and (x["high"] is None or v < x["high"]))
                row.append(2 + k)
        out.append(row)
    return out


def _penalty_cmap(report):
    colours = [report["not_measured"]["colour"], report["unscored"]["colour"]] + [
        b["colour"] for b in report["penalty_bins"]]
    n = len(colours)
    return ListedColormap(colours), BoundaryNorm([k - 0.5 for k in range(n + 1)], n)


def _penalty_items(report, extra=()):
    items = [(b["colour"], b["label"]) for b in report["penalty_bins"]] + [
        (report["not_measured"]["colour"], report["not_measured"]["label"]),
        (report["unscored"]["colour"], report["unscored"]["label"])]
    handles = [Patch(facecolor=c, edgecolor="#444444", lw=0.4) for c, _ in items]
    labels = [lab for _, lab in items]
    for h, lab in extra:
        handles.append(h)
        labels.append(lab)
    return handles, labels


PENALTY_TITLE = "penalty against\nthe exact map"


def _penalty_panel(frame, ax, report, grid, measured, title, summary, labels):
    """A penalty panel titled with its mean and max; a panel all in the lowest bin says so in
    the panel (an all-white panel looks like a drawing that failed)."""
    mean, top = summary["mean"], summary["max"]
    figures = ("no scored cell" if mean is None
               else f"mean {mean:.2f} %, max {top:.2f} %")
    frame.panel(ax, _penalty_codes(report, grid, measured), *_penalty_cmap(report),
                f"{title}\n{figures}", **labels)
    low = report["penalty_bins"][1]["high"]
    if top is not None and 0 <= top < low:
        text = ("0 % everywhere" if top == 0 else
                f"every cell < {low:g} %\n(max {top:.2f} %)")
        ax.text(0.5, 0.5, text, transform=ax.transAxes, ha="center", va="center",
                fontsize=13, color="#333333",
                bbox={"boxstyle": "round,pad=0.4", "fc": "#F4F4F4", "ec": "#999999",
                      "lw": 0.6})


def _z_slices(frame):
    if frame.z is None:
        return [(None, "", "")]
    return [(k, f" ({frame.z['name']} = {lab})", f"-z{re.sub(r'[^A-Za-z0-9_.-]', '_', lab)}")
            for k, lab in enumerate(frame.z["labels"])]


def _panel_title(p):
    """A pictured tree's panel title in words."""
    if p["limit"] == "depth":
        return f"max depth {p['label'].split()[-1]}"
    if p["limit"] == "threshold":
        return f"accuracy threshold {p['label'].rstrip('%')} %"
    return "exact tree (leaf blocks)"


def map_figures(report, frame):
    methods = report["data"]["methods"]
    cmap = ListedColormap([m["colour"] for m in methods])
    norm = BoundaryNorm([k - 0.5 for k in range(len(methods) + 1)], len(methods))
    pictured = report["pictured"]
    opts = report["options"]
    out = []
    for k, title_z, suffix in _z_slices(frame):
        panels = [("exact decision map", _slice(report["data"]["exact"], k), None)] + [
            (_panel_title(p), _slice(p["choice"], k), _slice(p["leaf"], k)) for p in pictured]
        shown = {v for _, grid, _ in panels for row in grid for v in row}
        handles, labels, headers = _method_legend_items(report, shown)
        rows = -(-len(panels) // MAP_COLUMNS)
        side = _side_width(labels, PANEL_H * rows - 0.5)
        fig, axs, outer = _grid_figure(len(panels), side=side)
        for ax, (title, grid, leaf), lab in zip(axs, panels, outer):
            frame.panel(ax, grid, cmap, norm, title, leaf, **lab)
        _side_legend(fig, side, handles, labels, headers, title="method")
        fig.suptitle(f"{report['collective']}: exact map and trees ({opts['pictured_split']} "
                     f"split, {opts['pictured_leaf']} leaves){title_z}", fontsize=10)
        out.append((f"maps{suffix}", fig,
                    f"Decision maps{title_z}: the exact map, then trees limited by depth and by "
                    f"accuracy threshold; thin lines are leaf-block borders. One hue per "
                    f"algorithm, darker for smaller segments; the legend lists the methods "
                    f"these panels show"))
    return out


def penalty_figures(report, frame):
    measured = report["data"]["measured"]
    restricted = [p for p in report["pictured"] if p["limit"] != "exact"]
    out = []
    if not restricted:
        return out
    handles, labels = _penalty_items(report)
    rows = -(-len(restricted) // MAP_COLUMNS)
    side = _side_width(labels, PANEL_H * rows - 0.5)
    for k, title_z, suffix in _z_slices(frame):
        fig, axs, outer = _grid_figure(len(restricted), side=side)
        for ax, p, lab in zip(axs, restricted, outer):
            _penalty_panel(frame, ax, report, _slice(p["penalty"], k), _slice(measured, k),
                           _panel_title(p), p["panels"][k or 0], lab)
        _side_legend(fig, side, handles, labels, title=PENALTY_TITLE)
        fig.suptitle(f"{report['collective']}: penalty of each restricted tree{title_z}",
                     fontsize=10)
        out.append((f"penalty{suffix}", fig, f"Penalty maps{title_z} of the restricted trees, "
                    f"each titled with its mean and largest penalty over measured cells"))
    return out


def baseline_figures(report, frame):
    rec = report["recommendation"]
    base = report["baselines"]
    if rec is None or not base:
        return []
    measured = report["data"]["measured"]
    mark = Line2D([], [], marker="x", color="#0044AA", lw=0, markersize=5)
    handles, labels = _penalty_items(report, [(mark, "recommended tree\nslower than this "
                                                     "choice")])
    side = _side_width(labels, PANEL_H - 0.5)
    out = []
    for k, title_z, suffix in _z_slices(frame):
        panels = [(b["short"], b["penalty"], b["panels"], b.get("losses", []))
                  for b in base.values()]
        panels.append((f"recommended tree ({rec['label']})", rec["penalty"], rec["panels"], []))
        fig, axs, outer = _grid_figure(len(panels), ncols=3, min_cols=3, side=side)
        for ax, (title, grid, summary, losses), lab in zip(axs, panels, outer):
            _penalty_panel(frame, ax, report, _slice(grid, k), _slice(measured, k), title,
                           summary[k or 0], lab)
            pts = [frame.centre(*loss["cell"][:2]) for loss in losses
                   if k is None or loss["cell"][2] == k]
            if pts:
                ax.scatter([x for x, _ in pts], [y for _, y in pts], marker="x", s=10,
                           linewidths=0.8, color="#0044AA", rasterized=False)
        _side_legend(fig, side, handles, labels, title=PENALTY_TITLE)
        fig.suptitle(f"{report['collective']}: baselines and the recommended tree on the same "
                     f"cells{title_z}", fontsize=10)
        out.append((f"baselines{suffix}", fig, f"Baselines{title_z}"))
    return out


def _count_panel(frame, fig, ax, grid, k, top, title, cmap_name, label):
    """A panel of small integer counts 0..top (0 = not measured, grey) with its colour bar."""
    import matplotlib as mpl
    base = mpl.colormaps[cmap_name]
    colours = ["#9A9A9A"] + [base(0.15 + 0.85 * i / max(top - 1, 1)) for i in range(top)]
    cmap = ListedColormap(colours)
    norm = BoundaryNorm([v - 0.5 for v in range(len(colours) + 1)], len(colours))
    mesh = frame.panel(ax, _slice(grid, k), cmap, norm, title)
    step = max(1, top // 6)
    # the regular ticks, less one too close to `top` for both labels to fit
    ticks = sorted({0, 1, top} | {t for t in range(0, top + 1, step) if top - t >= step / 2
                                  or t == top})
    bar = fig.colorbar(mesh, ax=ax, ticks=ticks, fraction=0.06, pad=0.03)
    bar.ax.set_yticklabels(["none" if t == 0 else str(t) for t in ticks])
    bar.set_label(label)


def robust_figures(report, frame):
    """Tie-set size, decision confidence and candidates per cell, one row of panels per z."""
    rb = report["robust"]
    rec = report["recommendation"]
    out = []
    for k, title_z, suffix in _z_slices(frame):
        fig, axs, _ = _grid_figure(3, 1, wspace=0.6)
        _count_panel(frame, fig, axs[0], rb["tie_size"], k, max(rb["tie_max"], 1),
                     "tie-set size (methods as fast as the best)", "YlOrRd",
                     "methods in the tie set")
        if rb["confidence"] is not None:
            import matplotlib as mpl
            cmap = mpl.colormaps["viridis"].with_extremes(bad="#9A9A9A")
            conf = [[float("nan") if v is None else v for v in row]
                    for row in _slice(rb["confidence"], k)]
            mesh = frame.panel(axs[1], conf, cmap, matplotlib.colors.Normalize(0, 1),
                               "decision confidence (largest p_best)")
            fig.colorbar(mesh, ax=axs[1], fraction=0.06, pad=0.03).set_label(
                "probability the chosen method is fastest")
        else:
            frame.panel(axs[1], [[0] * len(frame.m_pos) for _ in frame.p_pos],
                        ListedColormap(["#EEEEEE"]), BoundaryNorm([-0.5, 0.5], 1),
                        "decision confidence")
            axs[1].text(0.5, 0.5, "no p_best in this data\n(the paired sweep writes it)",
                        transform=axs[1].transAxes, ha="center", va="center", fontsize=10)
        _count_panel(frame, fig, axs[2], rb["candidates"], k, rb["methods"],
                     "candidates measured per cell", "Blues", "methods measured")
        pts = [frame.centre(i, j) for i, row in enumerate(_slice(rec["imputed_choice"], k))
               for j, v in enumerate(row) if v]
        if pts:
            axs[2].scatter([x for x, _ in pts], [y for _, y in pts], marker="x", s=14,
                           linewidths=0.9, color="#C8261E")
        fig.legend([Patch(facecolor="#9A9A9A", edgecolor="#444444", lw=0.4),
                    Line2D([], [], marker="x", color="#C8261E", lw=0, markersize=6)],
                   ["not measured (no data in the cell)",
                    "recommended tree's choice not measured here (scored at an imputed time)"],
                   loc="lower center", ncol=2, frameon=False, fontsize=8.5)
        fig.suptitle(f"{report['collective']}: how sure each decision is{title_z}", fontsize=10)
        out.append((f"robust{suffix}", fig, f"Tie-set size, decision confidence and candidates "
                    f"per cell{title_z}"))
    return out


FAMILY_STYLE = {("balanced", "majority"): "#4477AA", ("balanced", "penalty"): "#EE6677",
                ("replicate", "majority"): "#228833", ("replicate", "penalty"): "#CCBB44",
                ("balanced", "robust"): "#66CCEE", ("replicate", "robust"): "#AA3377"}
LIMIT_MARKER = {"depth": "o", "threshold": "^", "exact": "s"}


def tradeoff_figure(report):
    rows = [r for r in report["stats"] if r["penalty_mean"] is not None]
    fig = Figure(figsize=(11, 4.4), dpi=DPI)
    FigureCanvasAgg(fig)
    axs = fig.subplots(1, 2, gridspec_kw={"left": 0.07, "right": 0.99, "top": 0.88,
                                          "bottom": 0.26, "wspace": 0.22})
    rec = report["recommendation"]
    by_id = {r["id"]: r for r in report["stats"]}
    for ax, key, xlabel, front in ((axs[0], "mean_depth", "mean tree depth (cells weighted "
                                    "equally)", report["pareto"]["mean_depth"]),
                                   (axs[1], "nodes", "tree size (nodes, log scale)",
                                    report["pareto"]["nodes"])):
        for fam, colour in FAMILY_STYLE.items():
            for limit, marker in LIMIT_MARKER.items():
                sel = [r for r in rows if (r["split"], r["leaf"]) == fam and r["limit"] == limit]
                if sel:
                    ax.scatter([r[key] for r in sel], [r["penalty_mean"] for r in sel],
                               color=colour, marker=marker, s=22, alpha=0.85, lw=0)
        fx = [by_id[i][key] for i in front]
        fy = [by_id[i]["penalty_mean"] for i in front]
        ax.step(fx, fy, where="post", color="black", lw=1.0)
        ax.scatter(fx, fy, facecolors="none", edgecolors="black", s=60, lw=1.0)
        ax.axhline(report["options"]["budget"], color="#888888", ls="--", lw=0.8)
        if rec is not None:
            ax.scatter([rec[key]], [rec["penalty_mean"]], marker="*", s=180,
                       facecolors="none", edgecolors="#AA3377", lw=1.2)
        if key == "nodes":
            ax.set_xscale("log")
        ax.set_xlabel(xlabel)
        ax.set_ylabel("mean penalty (%)")
        ax.grid(True, lw=0.3, color="#DDDDDD")
    axs[0].set_title("mean penalty vs mean depth")
    axs[1].set_title("mean penalty vs tree size")
    handles = [Line2D([], [], marker="s", color=c, lw=0, markersize=6) for c in
               FAMILY_STYLE.values()]
    shown = {(r["split"], r["leaf"]) for r in rows}
    handles = [h for h, fam in zip(handles, FAMILY_STYLE) if fam in shown]
    labels = [f"{s} split, {lf} leaves" for s, lf in FAMILY_STYLE if (s, lf) in shown]
    handles += [Line2D([], [], marker=m, color="#666666", lw=0, markersize=6) for m in
                LIMIT_MARKER.values()]
    labels += [f"limit: {lim}" for lim in LIMIT_MARKER]
    handles += [Line2D([], [], marker="o", markerfacecolor="none", color="black", lw=1.0),
                Line2D([], [], color="#888888", ls="--", lw=0.8),
                Line2D([], [], marker="*", markerfacecolor="none", color="#AA3377", lw=0,
                       markersize=10)]
    labels += ["Pareto front", f"budget {report['options']['budget']:g} %", "recommended tree"]
    fig.legend(handles, labels, loc="lower center", ncol=5, frameon=False, fontsize=8)
    fig.suptitle(f"{report['collective']}: trade-off of every tree in the statistics table",
                 fontsize=10)
    return ("tradeoff", fig, "Trade-off: mean penalty against mean depth and against tree size; "
            "circled points form the Pareto front")


def probe_figures(report):
    """The probe-vs-latency plot (the paper's figure 2) when the report has the pairs."""
    section = report.get("probe_latency")
    if not section or not section["panels"]:
        return []
    panels = [probe_latency.Panel(p["comm_size"], p["msg_size"], p["default"],
                                  np.asarray(p["probe_us"], float),
                                  np.asarray(p["time_us"], float),
                                  np.asarray(p["level"], dtype=object))
              for p in section["panels"]]
    return [("probe-latency", probe_plot.probe_latency_figure(report["collective"], panels),
             "Probe latency against the collective's latency, one point per launch (Open MPI's "
             "default where measured), coloured by the nominal load level")]


def _group_figures(report, group):
    frame = _Frame(report)
    if group == "maps":
        return map_figures(report, frame)
    if group == "robust":
        return robust_figures(report, frame)
    if group == "penalty":
        return penalty_figures(report, frame)
    if group == "baselines":
        return baseline_figures(report, frame)
    if group == "tradeoff":
        return [tradeoff_figure(report)]
    return probe_figures(report)


def render_group(report, group, png=False):
    """[(name, caption, width in pixels, png bytes or None, svg bytes)] of the figures of one
    group (maps, robust, penalty, baselines, tradeoff, probe), drawn whole by one process
    (sinks/report/figure_pool). The PNG only when asked: the page embeds the SVG, and drawing a
    figure again with Agg is a third of a report's figure time."""
    out = []
    with matplotlib.rc_context():
        matplotlib.rcdefaults()
        matplotlib.rcParams.update(RC)
        for name, fig, caption in _group_figures(report, group):
            raster = None
            if png:
                buffer = io.BytesIO()
                fig.savefig(buffer, format="png", metadata={"Software": None})
                raster = buffer.getvalue()
            svg = io.BytesIO()
            fig.savefig(svg, format="svg", metadata={"Date": None, "Creator": None})
            # the PNG's width (Agg's canvas: the figure's box at its dpi, truncated)
            out.append((name, caption, int(fig.bbox.width), raster, svg.getvalue()))
    return out


def warm_up():
    """Load what every figure needs (fonts, the Agg text cache) before the first one is drawn,
    then put matplotlib's own objects out of the cyclic collector's sight (cli.main does so for
    the rest): drawing allocates enough to run it often."""
    fig = Figure(dpi=DPI)
    FigureCanvasAgg(fig)
    _text_px(fig, "0123456789")
    gc.freeze()
