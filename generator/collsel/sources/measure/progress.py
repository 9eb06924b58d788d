"""Progress on stderr: a redrawn bar on a terminal, plain periodic lines otherwise (logs)."""
import sys
import time


def _clock(seconds):
    if seconds != seconds or seconds == float("inf"):
        return "?"
    seconds = int(seconds)
    h, rest = divmod(seconds, 3600)
    m, s = divmod(rest, 60)
    return f"{h}:{m:02d}:{s:02d}" if h else f"{m}:{s:02d}"


class Progress:
    def __init__(self, total, done=0, stream=None, interval=30.0, width=30):
        self.total, self.done, self.skipped = total, done, done
        self.stream = stream or sys.stderr
        self.tty = hasattr(self.stream, "isatty") and self.stream.isatty()
        self.interval, self.width = interval, width
        self.start = self.last = time.monotonic()
        self.label = ""
        self.shown = None   # `done` at the last plain line, so the final line is not repeated

    def line(self):
        elapsed = time.monotonic() - self.start
        measured = self.done - self.skipped
        rate = measured / elapsed if elapsed > 0 else 0.0
        # nothing left is 0:00 (a resumed sweep with nothing to measure has no rate: it once
        # ended at 'ETA ?')
        eta = (0.0 if self.done >= self.total else
               (self.total - self.done) / rate if rate > 0 else float("nan"))
        frac = self.done / self.total if self.total else 1.0
        bar = "#" * int(frac * self.width)
        return (f"[{bar:<{self.width}}] {self.done}/{self.total} points {frac:4.0%} "
                f"{rate:.1f} pt/s elapsed {_clock(elapsed)} ETA {_clock(eta)} {self.label}")

    def advance(self, n=1, label=None):
        self.done += n
        if label is not None:
            self.label = label
        self.show()

    def show(self, force=False):
        now = time.monotonic()
        if self.tty:
            if force or now - self.last >= 0.2:
                self.stream.write("\r\033[K" + self.line())
                self.stream.flush()
                self.last = now
        elif (force and self.done != self.shown) or now - self.last >= self.interval:
            self.shown = self.done
            self.stream.write("collsel sweep: " + self.line() + "\n")
            self.stream.flush()
            self.last = now

    def message(self, text):
        """A line that must not be overdrawn by the bar."""
        if self.tty:
            self.stream.write("\r\033[K")
        self.stream.write(text + "\n")
        self.stream.flush()
        self.show(force=self.tty)

    def finish(self):
        self.show(force=True)
        if self.tty:
            self.stream.write("\n")
            self.stream.flush()
