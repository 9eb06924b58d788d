"""The one headline figure of a recommended tree and of the MPI's default beside it: what tune's
summary, build's printout, the report's recommendation box and `make demo` print as "this tree"
and "Open MPI's default".

One definition, from the figures `build --recommend` records (stats.json's `recommendation`,
the report's recommended figures): out of sample, the mean penalty on the folds of the
nested cross-validation (core.evaluate.recommendation.recommended_on_nested_folds for the tree,
baseline_on_nested_folds for the default on the same folds). A tree that defers everywhere IS
the default once deployed, so it is scored as the default, not by the nested figure of a
procedure that picked other trees in some folds (which once showed 4.30 % against the
default's 3.91 % for a deployed file that was the default). Without a nested figure (one
launch, too few P and m to hold any out), the in-sample means, said so.
"""
from dataclasses import dataclass
from typing import Optional

from collsel.core.evaluate import recommendation
from collsel.core.mpi import algorithms
from collsel.core.evaluate.recommendation_figures import Recommendation

KIND_LABELS = {"launches": "across launches", "leave_one_P_out": "leave-one-P-out",
               "leave_one_m_out": "leave-one-m-out"}


@dataclass(frozen=True)
class Headline:
    tree: Optional[float] = None      # % (None: not scorable)
    default: Optional[float] = None   # %, on the same cells or folds
    out_of_sample: bool = True
    kinds: tuple = ()           # the fold kinds the out-of-sample figures average
    defers: bool = False        # the tree defers to the MPI everywhere

    def basis(self) -> str:
        """'out of sample (nested, mean; across launches, leave-one-m-out)' or
        'in sample (mean)'."""
        if not self.out_of_sample:
            return "in sample (mean penalty on the cells it was built from)"
        kinds = ", ".join(KIND_LABELS.get(k, k) for k in self.kinds)
        return ("out of sample (nested cross-validation, mean penalty"
                + (f"; {kinds}" if kinds else "") + ")")

    def short_basis(self) -> str:
        return "oos" if self.out_of_sample else "in sample"


def defers_everywhere(leaf_methods) -> bool:
    """True when every leaf defers (stats.json's `leaf_methods`, dicts with `algorithm`)."""
    return bool(leaf_methods) and all(m["algorithm"] == algorithms.BASELINE_ALGORITHM
                                      for m in leaf_methods)


def headline(figures: Optional[Recommendation], defers: bool,
             in_sample=(None, None)) -> Headline:
    """The Headline of a tree: `figures` is stats.json's `recommendation` (or None: a tree not
    built by --recommend), `defers` whether it defers everywhere, `in_sample` its and the
    default's in-sample mean penalty (stats.json's penalty_mean, baseline_penalty_mean), used
    when there is no out-of-sample figure."""
    if figures is not None:
        default = recommendation.baseline_on_nested_folds(figures)
        tree = recommendation.recommended_on_nested_folds(figures)
        nested = figures.nested_figure()
        if nested is not None and default is not None and tree is not None:
            kinds = nested.kinds or (figures.criterion,)
            return Headline(default if defers else tree, default, True, kinds, defers)
    tree, default = in_sample
    return Headline(default if defers and default is not None else tree, default, False, (),
                    defers)


def of_stats(stats: dict) -> Headline:
    """The Headline of a stats.json (as a dict)."""
    recorded = stats.get("recommendation")
    return headline(Recommendation.from_json(recorded) if recorded else None,
                    defers_everywhere(stats.get("leaf_methods")),
                    (stats.get("penalty_mean"), stats.get("baseline_penalty_mean")))


def percent(value) -> str:
    return "n/a" if value is None else f"{value:.2f}%"
