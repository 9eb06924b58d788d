"""report.json and index.html (with the figures embedded) from the Report (compute.py)."""
import base64
import json

from collsel.core.mpi import method_text
from collsel.core.trees import tree
from collsel.errors import CollselError
from collsel.sinks.emit import load, render
from collsel.sinks.report import compute, figure_pool


def dumps(document):
    """The JSON text of `document` (Report.to_json() and the figures: report.json; or the
    overview's): strict JSON, never NaN or Infinity (a number that is not finite is a collsel
    bug, reported as one line, exit status 1)."""
    try:
        return json.dumps(document, indent=1, allow_nan=False, ensure_ascii=False) + "\n"
    except ValueError as e:
        raise CollselError(f"report: a number is not finite ({e}); nothing written") from None


RECOMMENDED_TREE = "recommended-tree.json"


def render_files(report, progress=None, tree_json=None, workers=None, png=False):
    """{file name: bytes} of a Report: report.json, index.html, every plot as SVG (and as
    PNG with `png`), and the recommended tree's tree.json (`tree_json`, as `collsel build
    --recommend` writes it); the plots drawn by `workers` (figure_pool.pool()) when given."""
    document = report.to_json()
    figures = figure_pool.render_all(json.loads(dumps(document)), workers, png,
                                     meanwhile=lambda: load("report.html.j2"))
    if progress:
        progress(f"{len(figures)} figures drawn")
    document = dict(document, figures=[{"name": n, "caption": c, "svg": f"{n}.svg",
                                        "png": None if raster is None else f"{n}.png",
                                        "width_px": width}
                                       for n, c, width, raster, _ in figures])
    text = dumps(document)
    data = json.loads(text)          # the page sees exactly what report.json holds
    images = {n: "data:image/svg+xml;base64," + base64.b64encode(svg).decode("ascii")
              for n, _, _, _, svg in figures}
    html = render("report.html.j2", r=data, images=images, fmt=Format)
    files = {"report.json": text.encode("utf-8"), "index.html": html.encode("utf-8")}
    if tree_json is not None:
        files[RECOMMENDED_TREE] = tree_json
    for name, _, _, raster, svg in figures:
        if raster is not None:
            files[f"{name}.png"] = raster
        files[f"{name}.svg"] = svg
    return files


class Format:
    """Number formatting for the page (the numbers themselves come from report.json)."""

    count = staticmethod(compute.count)

    @staticmethod
    def pct(v, digits=2):
        return "–" if v is None else f"{v:.{digits}f} %"

    @staticmethod
    def num(v, digits=2):
        return "–" if v is None else f"{v:.{digits}f}"

    @staticmethod
    def us(v):
        return "–" if v is None else (f"{v:.3g} µs" if v < 100 else f"{v:,.0f} µs")

    size = staticmethod(method_text.size_text)

    @staticmethod
    def g(v):
        return f"{v:g}"

    @staticmethod
    def share(v):
        return "–" if v is None else f"{100 * v:.1f} %"

    @staticmethod
    def limit(value, limit):
        return tree.limit_flag(limit, value) or "none (exact)"

    @staticmethod
    def limit_words(limit, value):
        """A limit as a reader says it: 'max depth 3', 'accuracy threshold 60 %', 'none'."""
        if limit == "depth":
            return f"max depth {value}"
        return f"accuracy threshold {value:g} %" if limit == "threshold" else "none (exact tree)"

    @staticmethod
    def limit_short(limit, value):
        """A limit in a narrow table column: 'depth 3', 'accuracy 60 %', 'exact'."""
        if limit == "depth":
            return f"depth {value}"
        return f"accuracy {value:g} %" if limit == "threshold" else "exact"

    @classmethod
    def pct_us(cls, pct, us, below_resolution):
        """A difference as a percentage, with its absolute size first when the data cannot
        resolve it (e.g. '0.3 µs (12 %)')."""
        if pct is None:
            return "–"
        if below_resolution:
            return f"{us:.2g} µs ({pct:.0f} %)" if abs(us) < 1 else f"{cls.us(us)} ({pct:.0f} %)"
        return f"{pct:.1f} % ({cls.us(us)})"
