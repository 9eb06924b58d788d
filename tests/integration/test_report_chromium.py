"""The report page in headless Chromium: no failed resource loads, no console errors, every image
rendered, and a full-page screenshot (kept in build/report-screenshot.png for people to look at).

Chromium is driven over the DevTools protocol (websocket-client): console messages, uncaught
exceptions, log entries ("Failed to load resource") and Network.loadingFailed arrive as events,
which is more reliable than scraping --enable-logging output. A control page with a broken image
and a console error proves the checks can fail.
"""
import base64
import io
import json
import os
import pathlib
import re
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.request

import pytest

import websocket  # websocket-client, in the [test] extras

REPO = pathlib.Path(__file__).resolve().parents[2]
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
WIDTH = 1600
NARROW = 1280          # the page must fit this width without horizontal scrolling


class Browser:
    """One headless Chromium with one page, talking CDP over a websocket."""

    def __init__(self):
        self.profile = tempfile.mkdtemp(prefix="collsel-chromium-")
        self.proc = subprocess.Popen(
            [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu",
             "--disable-background-networking", "--remote-debugging-port=0",
             "--remote-allow-origins=*", f"--user-data-dir={self.profile}",
             f"--window-size={WIDTH},1000", "--hide-scrollbars", "about:blank"],
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        port = None
        deadline = time.monotonic() + 60
        while port is None and time.monotonic() < deadline:
            line = self.proc.stderr.readline()
            if not line and self.proc.poll() is not None:
                raise RuntimeError(f"chromium exited with {self.proc.returncode}")
            m = re.search(r"DevTools listening on ws://[^:]+:(\d+)/", line)
            port = int(m.group(1)) if m else None
        assert port, "chromium did not report its DevTools port"
        targets = json.load(urllib.request.urlopen(f"http://127.0.0.1:{port}/json/list",
                                                   timeout=10))
        page = next(t for t in targets if t["type"] == "page")
        self.ws = websocket.create_connection(page["webSocketDebuggerUrl"], timeout=60,
                                              suppress_origin=True)
        self.next_id = 0
        self.events = []
        for domain in ("Runtime", "Log", "Network", "Page"):
            self.call(f"{domain}.enable")

    def call(self, method, **params):
        self.next_id += 1
        self.ws.send(json.dumps({"id": self.next_id, "method": method, "params": params}))
        while True:
            msg = json.loads(self.ws.recv())
            if msg.get("id") == self.next_id:
                if "error" in msg:
                    raise RuntimeError(f"{method}: {msg['error']}")
                return msg.get("result", {})
            self.events.append(msg)

    def wait_event(self, name, timeout=60):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if any(e.get("method") == name for e in self.events):
                return
            self.ws.settimeout(max(0.1, deadline - time.monotonic()))
            self.events.append(json.loads(self.ws.recv()))
        raise TimeoutError(name)

    def drain(self, seconds):
        self.ws.settimeout(seconds)
        try:
            while True:
                self.events.append(json.loads(self.ws.recv()))
        except websocket.WebSocketTimeoutException:
            pass
        finally:
            self.ws.settimeout(60)

    def load(self, path):
        """Open a file; return (console errors, failed loads) seen while it loaded."""
        self.events = []
        self.call("Page.navigate", url=pathlib.Path(path).resolve().as_uri())
        self.wait_event("Page.loadEventFired")
        self.drain(1.0)
        errors, failed = [], []
        urls = {}
        for e in self.events:
            m, p = e.get("method"), e.get("params", {})
            if m == "Network.requestWillBeSent":
                urls[p["requestId"]] = p["request"]["url"]
            elif m == "Network.loadingFailed":
                failed.append((urls.get(p["requestId"], "?"), p.get("errorText")))
            elif m == "Network.responseReceived" and p["response"].get("status", 200) >= 400:
                failed.append((p["response"]["url"], p["response"]["status"]))
            elif m == "Runtime.consoleAPICalled" and p["type"] in ("error", "assert"):
                errors.append(" ".join(str(a.get("value", a.get("description")))
                                       for a in p["args"]))
            elif m == "Runtime.exceptionThrown":
                d = p["exceptionDetails"]
                errors.append(f"{d.get('text', 'exception')} "
                              f"{d.get('exception', {}).get('description', '')}")
            elif m == "Log.entryAdded" and p["entry"]["level"] == "error":
                errors.append(p["entry"]["text"])
        return errors, failed

    def evaluate(self, expression):
        return self.call("Runtime.evaluate", expression=expression,
                         returnByValue=True)["result"]["value"]

    def resize(self, width, height=1000):
        self.call("Emulation.setDeviceMetricsOverride", width=width, height=height,
                  deviceScaleFactor=1, mobile=False)

    def screenshot(self, max_height=20000):
        height = min(max_height, int(self.evaluate("document.documentElement.scrollHeight")))
        self.call("Emulation.setDeviceMetricsOverride", width=WIDTH, height=height,
                  deviceScaleFactor=1, mobile=False)
        data = self.call("Page.captureScreenshot", format="png", captureBeyondViewport=True)
        return base64.b64decode(data["data"])

    def close(self):
        try:
            self.ws.close()
        finally:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
            shutil.rmtree(self.profile, ignore_errors=True)


# Per axes group of a matplotlib SVG, the pairs of x (or y) tick labels whose boxes overlap.
OVERLAPPING_TICKS = """
Array.from(document.querySelectorAll('g[id^="axes_"]')).flatMap(ax =>
  ['xtick_', 'ytick_'].flatMap(kind => {
    const boxes = Array.from(ax.querySelectorAll(`g[id^="${kind}"] > g[id^="text_"]`))
      .map(t => t.getBoundingClientRect()).filter(b => b.width > 0);
    return boxes.slice(1).flatMap((b, i) => {
      const a = boxes[i];
      const hit = a.left < b.right && b.left < a.right && a.top < b.bottom && b.top < a.bottom;
      return hit ? [[ax.id, kind, i]] : [];
    });
  }))
"""


# What scrolls sideways: the page itself, then every table and <pre> wider than its container
# (every <details> opened first, so the tables inside are laid out too).
OVERFLOW = """
(() => {
  document.querySelectorAll('details').forEach(d => d.open = true);
  const page = document.scrollingElement;
  const out = page.scrollWidth > page.clientWidth
    ? [['page', page.scrollWidth, page.clientWidth]] : [];
  document.querySelectorAll('table, pre').forEach((e, i) => {
    const box = e.parentElement.clientWidth;
    if (e.scrollWidth > box || e.scrollWidth > e.clientWidth + 1)
      out.push([e.tagName + '#' + (e.id || i), e.scrollWidth, box]);
  });
  return out;
})()
"""

# In a matplotlib SVG: the legend's box and the union of the panels' (axes') boxes.
LEGEND_AND_PANELS = """
(() => {
  const box = e => e.getBoundingClientRect();
  const legends = Array.from(document.querySelectorAll('g[id^="legend_"]')).map(box);
  const panels = Array.from(document.querySelectorAll('g[id^="axes_"]')).map(box);
  return {legends: legends.map(b => [b.left, b.top, b.right, b.bottom]),
          right: Math.max(...panels.map(b => b.right)),
          top: Math.min(...panels.map(b => b.top)),
          bottom: Math.max(...panels.map(b => b.bottom))};
})()
"""

# Per panel (axes group) of a matplotlib SVG, the texts it draws: with svg.fonttype 'path'
# each text is written as glyph paths after an XML comment holding the text.
PANEL_TEXTS = """
Array.from(document.querySelectorAll('g[id^="axes_"]')).map(ax => {
  const walk = document.createTreeWalker(ax, NodeFilter.SHOW_COMMENT);
  const texts = [];
  while (walk.nextNode()) texts.push(walk.currentNode.nodeValue.trim());
  return texts;
})
"""


def legend_beside_panels(geometry):
    """Every legend starts right of the panels' right edge and beside them (its top above
    the panels' bottom), not below the last row."""
    return geometry["legends"] and all(
        left >= geometry["right"] - 1 and top < geometry["bottom"]
        for left, top, _, _ in geometry["legends"])


@pytest.fixture(scope="module")
def browser():
    if not os.access(CHROMIUM, os.X_OK):
        pytest.fail(f"{CHROMIUM} not found (make setup installs chromium)")
    b = Browser()
    yield b
    b.close()


def test_checks_can_fail(browser, tmp_path):
    """A page with a broken image, a console error and an exception is caught by each check."""
    bad = tmp_path / "bad.html"
    bad.write_text('<!DOCTYPE html><html><body><img src="missing.png" alt="x">'
                   '<script>console.error("deliberate console error");'
                   'throw new Error("deliberate exception");</script></body></html>')
    errors, failed = browser.load(bad)
    assert any("missing.png" in url for url, _ in failed), failed
    assert any("deliberate console error" in e for e in errors), errors
    assert any("deliberate exception" in e for e in errors), errors
    assert browser.evaluate("Array.from(document.images).every(i => i.complete && "
                            "i.naturalWidth > 0)") is False
    # the overflow check finds a page and a table wider than their containers
    wide = tmp_path / "wide.html"
    wide.write_text('<!DOCTYPE html><html><body><table id="t"><tr><td style="white-space: '
                    'nowrap">' + "wide " * 600 + '</td></tr></table></body></html>')
    browser.resize(NARROW)
    browser.load(wide)
    found = browser.evaluate(OVERFLOW)
    assert found[0][0] == "page" and found[1][0] == "TABLE#t", found
    browser.resize(WIDTH)
    # the legend check fails for a legend below the panels
    below = tmp_path / "below.svg"
    below.write_text('<svg xmlns="http://www.w3.org/2000/svg" width="300" height="300">'
                     '<g id="axes_1"><rect x="10" y="10" width="200" height="100"/></g>'
                     '<g id="legend_1"><rect x="10" y="150" width="100" height="50"/></g></svg>')
    browser.load(below)
    assert not legend_beside_panels(browser.evaluate(LEGEND_AND_PANELS))
    # the overlap check finds two tick labels drawn on top of each other
    crowded = tmp_path / "crowded.svg"
    crowded.write_text('<svg xmlns="http://www.w3.org/2000/svg" width="200" height="50">'
                       '<g id="axes_1"><g id="xtick_1"><g id="text_1"><text x="10" y="20">'
                       '16K</text></g></g><g id="xtick_2"><g id="text_2"><text x="22" y="20">'
                       '64K</text></g></g></g></svg>')
    browser.load(crowded)
    assert browser.evaluate(OVERLAPPING_TICKS) == [["axes_1", "xtick_", 0]]


def test_report_page_in_chromium(browser, tmp_path):
    out = tmp_path / "report"
    start = time.monotonic()
    r = subprocess.run([sys.executable, "-m", "collsel.cli", "report",
                        str(REPO / "bench-data" / "bcast-sweep.csv"), "--collective", "bcast",
                        "--out", str(out)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    print(f"report generation: {time.monotonic() - start:.1f} s (not a timing test)")
    errors, failed = browser.load(out / "index.html")
    assert not failed, failed
    assert not errors, errors
    images = browser.evaluate("Array.from(document.images).map(i => [i.complete, i.naturalWidth,"
                              " i.getBoundingClientRect().width])")
    report = json.loads((out / "report.json").read_text())
    assert len(images) == len(report["figures"]) >= 4
    assert all(done and natural > 0 and shown > 500 for done, natural, shown in images), images
    # the robust-decision sections render: the recommendation box with its build command, the
    # in-sample / out-of-sample table with a row per choice, the confidence figure
    sections = browser.evaluate(
        "['recommended-tree', 'oos-table', 'robust', 'stats-table'].map(id => {"
        " const e = document.getElementById(id); return e ? e.getBoundingClientRect().height"
        " : -1; })")
    assert all(h > 20 for h in sections), sections
    assert browser.evaluate("document.querySelectorAll('#oos-table tr').length") == 5
    assert browser.evaluate("document.getElementById('recommended-tree').innerText"
                            ".includes('--recommend')")
    assert any(f["name"].startswith("robust") for f in report["figures"])
    png = browser.screenshot()
    from PIL import Image
    img = Image.open(io.BytesIO(png)).convert("RGB")
    assert img.width == WIDTH and img.height > 3000
    colours = img.resize((200, 400)).getcolors(maxcolors=200 * 400)
    assert len(colours) > 200          # plots, not a blank page
    keep = REPO / "build" / "report-screenshot.png"
    keep.parent.mkdir(exist_ok=True)
    keep.write_bytes(png)
    print(f"screenshot: {keep} ({img.width}x{img.height})")
    # at 1280 px nothing scrolls sideways: not the page, no table, no command
    browser.resize(NARROW)
    browser.load(out / "index.html")
    assert browser.evaluate(OVERFLOW) == [], f"wider than {NARROW} px"
    browser.resize(WIDTH)
    # tick labels inside every SVG (matplotlib groups each tick's label): none overlap
    for f in report["figures"]:
        errors, failed = browser.load(out / f["svg"])
        assert not errors and not failed, (f["svg"], errors, failed)
        assert browser.evaluate(OVERLAPPING_TICKS) == [], f["svg"]
        if f["name"].startswith(("maps", "penalty", "baselines")):
            geometry = browser.evaluate(LEGEND_AND_PANELS)
            assert legend_beside_panels(geometry), (f["svg"], geometry)
        if f["name"].startswith(("penalty", "baselines")):
            for texts in browser.evaluate(PANEL_TEXTS):
                # negative where the default beats every forced method (core.maps.cell_cost)
                means = [t for t in texts
                         if re.fullmatch(r"mean -?\d+\.\d\d %, max -?\d+\.\d\d %", t)]
                assert len(means) == 1, (f["svg"], texts)
                if means[0].endswith("max 0.00 %"):
                    assert "0 % everywhere" in texts, (f["svg"], texts)
    print("legend beside the panels, penalty panels titled with their mean, no overflow at "
          f"{NARROW} px")
