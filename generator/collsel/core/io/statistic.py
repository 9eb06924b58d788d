"""What a table's `time_us` means: one small vocabulary, written by every source of tables and
read by every command that combines them.

A table says it in its `# statistic=` metadata line, as three parts:

    ranks:R reps:S launches:L

  R, over the ranks of one repetition:  max  (the slowest rank: the maximum of the ranks' own
                                              durations, or latest end minus earliest start)
                                        mean (the mean over ranks), min (the fastest rank)
  S, over the repetitions of a launch:  median, mean, min, max
  L, over launches:                     mean (of the launches' values), one (a single launch)

A part a source cannot tell is `?`. Two more values stand alone: `model` (an analytical
prediction, not a measurement) and `unknown` (the table does not say). `mixed` marks a table
made from inputs of different kinds.

Tables written before this vocabulary carry a sentence or an ingest kind instead; `parse` maps
those to the vocabulary, so old tables keep working and are compared correctly.
"""
RANKS = ("max", "mean", "min")
REPETITIONS = ("median", "mean", "min", "max")
LAUNCHES = ("mean", "one")
PART = "?"
MODEL, UNKNOWN, MIXED = "model", "unknown", "mixed"

# The forms written before the vocabulary existed (every one collsel ever wrote).
_LEGACY_PREFIXES = (
    ("time_us = mean over launches of each launch's median", ("max", "median", "mean")),
    ("time_us = median over timed repetitions", ("max", "median", "one")),
    ("time_us = model prediction", MODEL),
)
_LEGACY_INGEST = {"rank-mean": ("mean", PART, "one"), "rank-max": ("max", PART, "one"),
                  "rank-min": ("min", PART, "one"), "unknown": UNKNOWN}


def kind(ranks=PART, reps=PART, launches=PART):
    """The canonical text of a statistic; each part from its list or `?`."""
    for value, allowed, name in ((ranks, RANKS, "ranks"), (reps, REPETITIONS, "reps"),
                                 (launches, LAUNCHES, "launches")):
        if value != PART and value not in allowed:
            raise ValueError(f"{name}:{value} is not in the statistic vocabulary "
                             f"({', '.join(allowed)} or ?)")
    return f"ranks:{ranks} reps:{reps} launches:{launches}"


def parse(text):
    """The canonical statistic of a `# statistic=` value (or None: the table does not say)."""
    if text is None:
        return UNKNOWN
    text = " ".join(str(text).split())
    if text in (MODEL, UNKNOWN, MIXED) or text.startswith(MIXED + ":"):
        return MIXED if text.startswith(MIXED) else text
    parts = dict(p.partition(":")[::2] for p in text.split(" "))
    if set(parts) == {"ranks", "reps", "launches"}:
        try:
            return kind(parts["ranks"], parts["reps"], parts["launches"])
        except ValueError:
            return UNKNOWN
    for prefix, value in _LEGACY_PREFIXES:
        if text.startswith(prefix):
            return value if value == MODEL else kind(*value)
    legacy = _LEGACY_INGEST.get(text)
    if legacy is not None:
        return legacy if legacy == UNKNOWN else kind(*legacy)
    return UNKNOWN


def combined(kinds):
    """The statistic of a table made from inputs of these kinds."""
    kinds = set(kinds)
    return kinds.pop() if len(kinds) == 1 else MIXED


def mismatch_warning(sources):
    """One warning line when `sources` ([(file, statistic text)]) measure different things."""
    by_kind = {}
    for path, text in sources:
        by_kind.setdefault(parse(text), []).append(str(path))
    if len(by_kind) < 2:
        return None
    parts = "; ".join(f"{k}: {', '.join(v)}" for k, v in sorted(by_kind.items()))
    return ("the tables measure different statistics (" + parts + "); a decision over them "
            "compares unlike times (the mean over ranks is lower than the slowest rank's time, "
            "one launch varies more than a mean over launches)")
