"""Model parameter files (JSON): what `collsel model fit` writes and `collsel model predict` reads.

Format (version 1; every time in microseconds, every size in bytes):

    {
      "format": "collsel-model-params", "version": 1,
      "name": "gros",                        # free text
      "source": "...",                       # where the numbers come from (a paper, a fit run)
      "platform": {
        "ranks_per_node": 18,                # null: all ranks on one node (this machine)
        "Q": 12,                             # T1/T0 channel ratio at the segment size; null:
                                             # one node
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
      "fit": {...}                           # optional: how the fit was made (experiments,
                                             # counts; a fit across nodes: "channels",
                                             # "placements" NODESxPPN,
                                             # "channel_ratio_by_segsize", "cluster")
    }

A fit on one node has Q null and gamma1 {}: it predicts one node only. A fit across the nodes of
the emulated cluster (`collsel model fit --cluster`) has both channels; its ranks_per_node stays
null, the mapping of a prediction coming from `--ranks-per-node` or, in `model validate`, from
each measured row's ppn column.

tau-Lop: T0(s) = o0 + 2 (L0 + s L0p), T1(s) = o1 + 2 (L0 + s L0p) + L1 + s L1p (see bcast.py).

`load` checks every file against the JSON Schema collsel/core/schemas/model-params.schema.json.
"""
import json
from importlib import resources
from pathlib import Path

from collsel.core import schemas
from collsel.core.io import jsonfile
from collsel.errors import InputError
from collsel.research.models.bcast import TLOP_PARAMS, Platform

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


def load(path):
    """Read and check a parameter file: schemas/model-params.schema.json, then duplicates.

    Every problem is one InputError naming the file and the JSON location (exit status 2)."""
    doc = jsonfile.read(path)
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        raise InputError(f"{path}: not a model parameter file (\"format\": \"{FORMAT}\" missing)")
    if doc.get("version") != VERSION:
        raise InputError(f"{path}: version {doc.get('version')!r} unsupported "
                         f"(this collsel reads version {VERSION})")
    schemas.check(doc, "model-params", path)
    seen = {}
    for i, e in enumerate(doc["methods"]):
        key = (e["collective"], e["algorithm"], e["segsize"])
        if key in seen:
            raise InputError(f"{path}: methods[{i}]: {e['collective']} algorithm {e['algorithm']} "
                             f"segsize {e['segsize']} again (as methods[{seen[key]}])")
        seen[key] = i
    return Params(doc, path)


def dumps(doc):
    """Deterministic text of a parameter file."""
    return json.dumps(doc, indent=1, sort_keys=False) + "\n"
