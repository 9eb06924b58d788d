"""Model parameter files (JSON): what `collsel model fit` writes and `collsel model predict` reads.

Format (version 1; every time in microseconds, every size in bytes):

    {
      "format": "collsel-model-params", "version": 1,
      "name": "gros",                        # free text
      "source": "...",                       # where the numbers come from (a paper, a fit run)
      "platform": {
        "ranks_per_node": 18,                # null: all ranks on one node (this machine)
        "Q": 12,                             # T1/T0 channel ratio at the segment size; null: one node
        "gamma0": {"2": 1.0, "3": 1.0},      # NBFT parallelization factor, shared memory, by P
        "gamma1": {"2": 1.0, "3": 1.084},    # ... network; sizes past the table use its last value
        "chain_fanout": 4,                   # chains of forced bcast 'chain' (Open MPI default)
        "knomial_radix": 4,                  # Open MPI default
        "unit_size": 8192                    # optional: parameters hold for transfers of this
                                             # size; a larger unsegmented one costs ceil(s/unit)
      },
      "methods": [                           # one tau-Lop parameter set per (algorithm, segsize)
        {"collective": "bcast", "algorithm": 6, "segsize": 8192,
         "tlop": {"o0": 0, "o1": 19.0, "L0": 8.0, "L0p": 0, "L1": 19.0, "L1p": 0}}
      ],
      "hockney": {"alpha": 12.0, "beta": 0.0004},   # optional: one (alpha, beta) for all methods
      "fit": {...}                           # optional: how the fit was made (experiments, counts)
    }

tau-Lop: T0(s) = o0 + 2 (L0 + s L0p), T1(s) = o1 + 2 (L0 + s L0p) + L1 + s L1p (see bcast.py).
"""
import json
from importlib import resources
from pathlib import Path

from collsel.errors import InputError
from collsel.core.algorithms import ALGORITHMS
from collsel.sources.models.bcast import TLOP_PARAMS, Platform

FORMAT = "collsel-model-params"
VERSION = 1
PRESETS = ("grisou", "gros", "marenostrum4")


class Params:
    def __init__(self, doc, path):
        self.doc = doc
        self.path = str(path)
        plat = doc["platform"]
        self.platform = Platform(plat.get("gamma0"), plat.get("gamma1"), plat.get("Q"),
                                 plat.get("ranks_per_node"), plat.get("chain_fanout", 4),
                                 plat.get("knomial_radix", 4), plat.get("unit_size"))
        self.methods = {}
        for i, entry in enumerate(doc["methods"]):
            key = (entry["collective"], int(entry["algorithm"]), int(entry["segsize"]))
            self.methods[key] = [float(entry["tlop"].get(p, 0.0)) for p in TLOP_PARAMS]
        self.hockney = doc.get("hockney")

    @property
    def name(self):
        return self.doc.get("name", Path(self.path).stem)


def preset_path(name):
    key = name.lower().replace("-", "").replace("_", "")
    if key not in PRESETS:
        raise InputError(f"unknown preset '{name}' (known: {', '.join(PRESETS)})")
    return Path(str(resources.files(__package__).joinpath("presets", f"{key}.json")))


def _need(cond, path, what):
    if not cond:
        raise InputError(f"{path}: {what}")


def load(path):
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as e:
        raise InputError(f"{path}: cannot read: {e.strerror}") from None
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as e:
        raise InputError(f"{path}:{e.lineno}: not JSON: {e.msg}") from None
    _need(isinstance(doc, dict) and doc.get("format") == FORMAT, path,
          f"not a model parameter file (\"format\": \"{FORMAT}\" missing)")
    _need(doc.get("version") == VERSION, path, f"unsupported version {doc.get('version')!r} "
          f"(this collsel reads version {VERSION})")
    _need(isinstance(doc.get("platform"), dict), path, "no \"platform\" object")
    _need(isinstance(doc.get("methods"), list) and doc["methods"], path, "no \"methods\" list")
    for i, e in enumerate(doc["methods"]):
        where = f"methods[{i}]"
        _need(isinstance(e, dict) and {"collective", "algorithm", "segsize", "tlop"} <= set(e),
              path, f"{where} needs collective, algorithm, segsize and tlop")
        _need(e["collective"] in ALGORITHMS and e["algorithm"] in ALGORITHMS[e["collective"]],
              path, f"{where}: unknown {e['collective']} algorithm {e['algorithm']!r}")
        for k, v in e["tlop"].items():
            _need(k in TLOP_PARAMS and isinstance(v, (int, float)) and v >= 0, path,
                  f"{where}: tlop key '{k}' must be one of {', '.join(TLOP_PARAMS)} "
                  "with a number >= 0")
    plat = doc["platform"]
    for key in ("gamma0", "gamma1"):
        table = plat.get(key) or {}
        _need(isinstance(table, dict) and all(str(k).isdigit() and int(k) >= 2 and
                                              isinstance(v, (int, float)) and v > 0
                                              for k, v in table.items()),
              path, f"platform.{key} must map process counts >= 2 to positive factors")
    ppn = plat.get("ranks_per_node")
    _need(ppn is None or (isinstance(ppn, int) and ppn >= 1), path,
          "platform.ranks_per_node must be null or an integer >= 1")
    return Params(doc, path)


def dumps(doc):
    """Deterministic text of a parameter file."""
    return json.dumps(doc, indent=1, sort_keys=False) + "\n"
