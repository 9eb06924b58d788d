"""The anytime curves' SVG (sinks/report/curve_plot.py): deterministic bytes, every series in
the legend, a protocol's panel per protocol, and points without a figure left out."""
import re

from collsel.sinks.report import curve_plot

A = curve_plot.Series("coarse-refine", [1, 2, 4], {"P_mean": [3, 2, 1], "m_mean": [3, 2, 1]})
B = curve_plot.Series("adaptive", [1, 2, 4], {"P_mean": [3, None, 1], "m_mean": [3, 2, 1]})


def test_same_input_same_bytes_and_both_panels():
    one = curve_plot.figure_svg("bcast", [A, B], {"P_mean": 1.0, "m_mean": 0.5})
    assert one == curve_plot.figure_svg("bcast", [A, B], {"P_mean": 1.0, "m_mean": 0.5})
    text = one.decode()
    assert text.startswith("<?xml") and "</svg>" in text
    for words in ("bcast: leave-one-P-out", "bcast: leave-one-m-out", "coarse-refine",
                  "adaptive", "full table's tree", "within 0.5 points"):
        assert f"<!-- {words} -->" in text


def test_a_point_without_figure_is_not_drawn():
    # B lacks its second P figure: its P line has two points where A's has three
    with_gap = curve_plot.figure_svg("t", [B]).decode()
    full = curve_plot.figure_svg("t", [A]).decode()
    assert with_gap != full
    assert _segments(full, "#4477aa") == [2, 2]          # P and m panels: 3 points each
    assert _segments(with_gap, "#4477aa") == [1, 2]      # P: 2 points, one segment


def _segments(svg, colour):
    """The line segments of each data line drawn in `colour` (clipped to its axes: the
    legend's sample line is not)."""
    return [d.count("L ") for d, style in re.findall(
        r'<path d="([^"]*)" clip-path="[^"]*" style="([^"]*)"', svg)
        if f"stroke: {colour}" in style]


def test_no_full_table_no_reference_line():
    text = curve_plot.figure_svg("t", [A]).decode()
    assert "full table's tree" not in text


def test_curve_rows_become_a_series():
    rows = [{"cost_pct": 5.0, "P_mean": 2.0, "m_mean": None},
            {"cost_pct": 9.0, "P_mean": 1.0, "m_mean": 1.5}]
    s = curve_plot.curve_series("x", rows)
    assert s.cost_pct == [5.0, 9.0] and s.figures == {"P_mean": [2.0, 1.0], "m_mean": [None, 1.5]}
