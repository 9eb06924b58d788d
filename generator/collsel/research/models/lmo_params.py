"""LMO parameter files (JSON): what `collsel model lmo-fit` writes and `collsel model predict` /
`lmo-mapping` read. The format is the JSON Schema collsel/core/schemas/lmo-params.schema.json
(format "collsel-lmo-params", version 1): processors (host of each), lmo (C_us, t_us_per_byte,
inv_beta_us_per_byte, beta_bytes_per_us), spread (the redundant estimates), thresholds (S, M1,
M2, kappa1, kappa2), hockney_hetero (alpha_us, beta_us_per_byte per pair), hockney (the
homogeneous average) and fit (how it was made: counts, wall times, machine). `load` checks the
schema, then what it cannot say: sizes, symmetry, zero diagonals.
"""
import json
from pathlib import Path

import numpy as np

from collsel.core import schemas
from collsel.core.io import jsonfile
from collsel.errors import InputError
from collsel.research.models.lmo_predict import HockneyModel, LmoModel

FORMAT = "collsel-lmo-params"
VERSION = 1


def is_lmo_file(path):
    """Whether `path` holds an LMO parameter file (a JSON object whose format says so)."""
    doc = jsonfile.read(path)
    return isinstance(doc, dict) and doc.get("format") == FORMAT


class LmoParams:
    def __init__(self, doc, path):
        self.doc, self.path = doc, str(path)
        self.processors = list(doc["processors"])
        lmo, th = doc["lmo"], doc["thresholds"]
        h, hom = doc["hockney_hetero"], doc["hockney"]
        n = len(self.processors)
        self.models = {
            "lmo": LmoModel(lmo["C_us"], lmo["t_us_per_byte"], lmo["inv_beta_us_per_byte"],
                            th["scatter_S"], th["gather_M1"], th["gather_M2"],
                            th["kappa1_us_per_byte"], th["kappa2_us_per_byte"]),
            "hockney-hetero": HockneyModel(h["alpha_us"], h["beta_us_per_byte"]),
            "hockney": HockneyModel.homogeneous(hom["alpha"], hom["beta"], n)}

    @property
    def n(self):
        return len(self.processors)

    @property
    def name(self):
        return self.doc.get("name", Path(self.path).stem)


_MATRICES = (("lmo", "inv_beta_us_per_byte"), ("lmo", "beta_bytes_per_us"),
             ("hockney_hetero", "alpha_us"), ("hockney_hetero", "beta_us_per_byte"))


def check_shapes(doc, path):
    """Vectors of n entries, n x n symmetric matrices with a zero (beta: null) diagonal."""
    n = len(doc["processors"])
    for key in ("C_us", "t_us_per_byte"):
        if len(doc["lmo"][key]) != n:
            raise InputError(f"{path}: lmo.{key}: {len(doc['lmo'][key])} entries, expected {n} "
                             "(one per processor)")
    for part, key in _MATRICES:
        if key not in doc[part]:
            continue
        rows = doc[part][key]
        if len(rows) != n or any(len(r) != n for r in rows):
            raise InputError(f"{path}: {part}.{key}: not {n} x {n} (one row and column per "
                             "processor)")
        m = np.array([[np.nan if x is None else x for x in r] for r in rows], dtype=np.float64)
        diag = np.diag(m)
        if key == "beta_bytes_per_us":
            if not np.isnan(diag).all():
                raise InputError(f"{path}: {part}.{key}: the diagonal must be null")
        elif np.isnan(m).any() or (diag != 0).any():
            raise InputError(f"{path}: {part}.{key}: the diagonal must be 0 and no other entry "
                             "null")
        if not np.array_equal(np.isnan(m), np.isnan(m.T)) or \
                (np.nan_to_num(m) != np.nan_to_num(m.T)).any():
            i, j = np.argwhere(np.nan_to_num(m) != np.nan_to_num(m.T))[0]
            raise InputError(f"{path}: {part}.{key}[{i}][{j}] differs from [{j}][{i}] (links "
                             "are symmetric)")


def load(path):
    """Read and check an LMO parameter file; every problem is one InputError naming the file
    and the JSON location (exit status 2)."""
    doc = jsonfile.read(path)
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        raise InputError(f"{path}: not an LMO parameter file (\"format\": \"{FORMAT}\" missing)")
    if doc.get("version") != VERSION:
        raise InputError(f"{path}: version {doc.get('version')!r} unsupported "
                         f"(this collsel reads version {VERSION})")
    check_document(doc, path)
    return LmoParams(doc, path)


def check_document(doc, path):
    """The schema, then check_shapes (also run on what lmo-fit writes, before writing it)."""
    schemas.check(doc, "lmo-params", path)
    check_shapes(doc, path)


def dumps(doc):
    """Deterministic text of a parameter file (matrices one row a line)."""
    return json.dumps(doc, indent=1) + "\n"
