"""The recommendation's figures as records: what core.evaluate.model_selection measures and
core.evaluate.recommendation reports, written as stats.json's `recommendation` section (`to_json`)
and read back from it (`from_json`: build's printout, tune's summary).

A stats.json of an older collsel lacks some keys (no `fallback` nor `nesting`, a kind without
a nested figure, nested picks without their fields): from_json reads them as absent, and only
here, so no reader needs to guess at the file's shape.
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import Any, Optional

from collsel.core.evaluate.candidates import Candidate

Json = dict[str, Any]


@dataclass(frozen=True)
class KindFigures:
    """A candidate's cross-validated figures on one kind of fold, over its folds' pooled
    held-out cells (percent)."""
    capped: float
    mean: float
    max: float
    cells: int

    def to_json(self) -> Json:
        return {"capped": self.capped, "mean": self.mean, "max": self.max, "cells": self.cells}

    @classmethod
    def from_json(cls, data: Json) -> KindFigures:
        return cls(data["capped"], data["mean"], data["max"], data["cells"])


@dataclass(frozen=True)
class CandidateRow:
    """One candidate's figures: stats.json's `chosen`, `best` and each `compared` entry."""
    candidate: str                          # its label
    leaves: int
    criterion_capped: float                 # the criterion's figure
    kinds: Mapping[str, KindFigures]        # by kind of fold (stats.json's names)
    se: Optional[float] = None              # `chosen` and `best` only

    def to_json(self) -> Json:
        out: Json = {"candidate": self.candidate, "leaves": self.leaves,
                     "criterion_capped": self.criterion_capped,
                     "kinds": {k: v.to_json() for k, v in self.kinds.items()}}
        if self.se is not None:
            out["se"] = self.se
        return out

    @classmethod
    def from_json(cls, data: Json) -> CandidateRow:
        return cls(data["candidate"], data["leaves"], data["criterion_capped"],
                   {k: KindFigures.from_json(v) for k, v in data["kinds"].items()},
                   data.get("se"))


@dataclass(frozen=True)
class NestedFigures:
    """The nested figure of a kind of fold (each outer fold's pick scored on its held-out
    cells), or the `combined` entry averaging the kinds."""
    capped: float
    mean: float
    max: float
    cells: Optional[int] = None                     # a kind's
    picked: Optional[tuple[str, ...]] = None        # a kind's: each outer fold's pick, by label
    picked_fields: Optional[tuple[Candidate, ...]] = None   # the same picks (`nested` only)
    kinds: Optional[tuple[str, ...]] = None         # the combined entry's: the kinds averaged

    def to_json(self) -> Json:
        out: Json = {"capped": self.capped, "mean": self.mean, "max": self.max}
        if self.cells is not None:
            out["cells"] = self.cells
        if self.picked is not None:
            out["picked"] = list(self.picked)
        if self.picked_fields is not None:
            out["picked_fields"] = [c.to_json() for c in self.picked_fields]
        if self.kinds is not None:
            out["kinds"] = list(self.kinds)
        return out

    @classmethod
    def from_json(cls, data: Json) -> NestedFigures:
        def seq(key):
            return None if data.get(key) is None else tuple(data[key])
        fields = data.get("picked_fields")
        return cls(data["capped"], data["mean"], data["max"], data.get("cells"), seq("picked"),
                   None if fields is None else tuple(Candidate.from_json(f) for f in fields),
                   seq("kinds"))


@dataclass(frozen=True)
class Edge:
    """The largest P held out: the chosen candidate built without it against deferring to
    the MPI there, and what that decides beyond the measured P."""
    comm_size: int
    cells: int
    tree_capped: float
    tree_mean: float
    default_capped: Optional[float]     # None where the default is not measured there
    default_mean: Optional[float]
    default_cells: int
    beyond: str

    def to_json(self) -> Json:
        return asdict(self)

    @classmethod
    def from_json(cls, data: Json) -> Edge:
        return cls(**data)


@dataclass(frozen=True)
class Fallback:
    """The trivial candidate recommended instead of the tree cross-validation chose, with the
    nested figures on the same held-out cells that decided it: written by collsel before
    2026-11-30 (core.evaluate.model_selection says why no longer), read so that the figures of
    a tree it deployed stay that tree's."""
    to: str                     # "default" or "best_fixed"
    instead_of: str             # the tree's label
    tree_capped: float
    capped: float
    se: float                   # of the paired per-cell difference (recorded, not required)
    kinds: tuple[str, ...]

    def to_json(self) -> Json:
        return {**asdict(self), "kinds": list(self.kinds)}

    @classmethod
    def from_json(cls, data: Json) -> Fallback:
        return cls(**{**data, "kinds": tuple(data["kinds"])})


def _nested_json(nested: Mapping[str, Optional[NestedFigures]]) -> Json:
    return {k: None if v is None else v.to_json() for k, v in nested.items()}


def _nested_of(data: Json) -> dict[str, Optional[NestedFigures]]:
    return {k: None if v is None else NestedFigures.from_json(v) for k, v in data.items()}


@dataclass(frozen=True)
class Selected:
    """What cross-validation chose among the candidates, and the figures it is judged by."""
    scored_by: str              # the criterion's label (with the kinds it averages)
    statistic: str
    se_over: str
    rule: str
    candidates: int             # how many were compared
    chosen: CandidateRow
    choice: Candidate           # the chosen candidate (stats.json's chosen `fields`)
    best: CandidateRow
    compared: Mapping[str, CandidateRow]        # the MPI's default, best fixed, exact, ...
    nested: Mapping[str, Optional[NestedFigures]]       # by kind, and "combined"
    nested_best: Mapping[str, Optional[NestedFigures]]  # the same taking the best candidate
    edge: Optional[Edge] = None
    fallback: Optional[Fallback] = None
    nesting: Optional[str] = None       # how the nested figure nests (absent in older files)


@dataclass(frozen=True)
class Recommendation:
    """stats.json's `recommendation`: the criterion, why the tree is recommended and, when
    there were folds to choose on, what was chosen (`selection`)."""
    criterion: str
    kinds: tuple[str, ...]      # the kinds of fold the criterion averages (stats.json names)
    why: str
    deferred: bool = False      # the recommendation defers to the MPI everywhere
    deferral_advised: bool = False
    selection: Optional[Selected] = None    # None without any fold: the exact tree
    command: Optional[str] = None           # the `collsel build` line (stats.json's only)

    def nested_figure(self) -> Optional[NestedFigures]:
        """The nested figure of the criterion (None without one)."""
        if self.selection is None:
            return None
        return self.selection.nested.get(self.criterion)

    @property
    def scored_by(self) -> Optional[str]:
        return None if self.selection is None else self.selection.scored_by

    @property
    def edge(self) -> Optional[Edge]:
        return None if self.selection is None else self.selection.edge

    def to_json(self) -> Json:
        out: Json = {"criterion": self.criterion, "kinds": list(self.kinds)}
        s = self.selection
        if s is not None:
            out.update(
                scored_by=s.scored_by, kind=self.criterion, statistic=s.statistic,
                se_over=s.se_over, rule=s.rule, candidates=s.candidates,
                chosen={**s.chosen.to_json(), "fields": s.choice.to_json()},
                best=s.best.to_json(),
                compared={k: v.to_json() for k, v in s.compared.items()},
                nested=_nested_json(s.nested), nested_best=_nested_json(s.nested_best),
                edge=None if s.edge is None else s.edge.to_json())
        out.update(deferred=self.deferred, deferral_advised=self.deferral_advised)
        if s is not None:
            out["fallback"] = None if s.fallback is None else s.fallback.to_json()
            if s.nesting is not None:
                out["nesting"] = s.nesting
        out.update(why=self.why, budget=None)   # budget: kept; the one-SE rule decides
        if self.command is not None:
            out["command"] = self.command
        return out

    @classmethod
    def from_json(cls, data: Json) -> Recommendation:
        selection = None
        if "chosen" in data:
            selection = Selected(
                data["scored_by"], data["statistic"], data["se_over"], data["rule"],
                data["candidates"], CandidateRow.from_json(data["chosen"]),
                Candidate.from_json(data["chosen"]["fields"]), CandidateRow.from_json(data["best"]),
                {k: CandidateRow.from_json(v) for k, v in data["compared"].items()},
                _nested_of(data["nested"]), _nested_of(data["nested_best"]),
                None if data.get("edge") is None else Edge.from_json(data["edge"]),
                None if data.get("fallback") is None else Fallback.from_json(data["fallback"]),
                data.get("nesting"))
        return cls(data["criterion"], tuple(data["kinds"]), data["why"], data["deferred"],
                   data["deferral_advised"], selection, data.get("command"))

