"""One build configuration, and the tree it makes from a table: the one path from a table to a
deployable tree that `collsel build` and `collsel evaluate` (core.evaluate.held_out) share, so what
is evaluated is what is built.

A Config is what `collsel build`'s flags say: the map settings (core.maps.decision_map.MapSettings),
the tree options, `--recommend` with its criterion, and `--beyond`.
"""
from dataclasses import dataclass
from typing import Optional

from collsel.core.evaluate import recommend, recommendation
from collsel.core.maps import decision_map
from collsel.core.trees import tree, treefile
from collsel.core.evaluate.recommendation_figures import Recommendation


@dataclass(frozen=True)
class Config:
    label: str
    options: tree.BuildOptions
    settings: decision_map.MapSettings = decision_map.MapSettings()
    recommend: bool = False
    criterion: str = "combined"
    beyond: Optional[str] = None


@dataclass
class Built:
    dmap: object            # DecisionMap
    tree: object            # TreeArrays
    options: object         # the BuildOptions tree.json records
    figures: Optional[Recommendation]   # the recommendation's (None without --recommend)
    beyond: str             # "defer" or "keep" beyond the largest measured P

    def document(self) -> dict:
        return treefile.tree_document(self.dmap, self.tree, self.options,
                                      treefile.beyond_of(self.dmap, self.beyond))

    def loaded(self) -> treefile.LoadedTree:
        """The tree as `collsel query` reads it back (its cuts, `beyond`, the refusals)."""
        return treefile.LoadedTree(self.document(), "tree.json", schema=False)


def build(table, config, dmap=None, launch_tables=None, workers=None,
          nested=True) -> Built:
    """The Built tree of `table` (one collective) under `config`; `dmap`: its map, when made
    already; `launch_tables`, `workers` and `nested` as core.evaluate.recommend.recommend takes
    them (without `nested` the tree is the same, its figures lack the nested ones)."""
    dmap = config.settings.build(table) if dmap is None else dmap
    options = config.options
    figures: Optional[Recommendation] = None
    if config.recommend:
        t, dmap, figures = recommend.recommend(dmap, options, launch_tables, config.settings,
                                               config.criterion, workers, nested)
        options = recommend.recorded_options(recommend.chosen_options(options, figures), t)
    else:
        t = tree.build_tree(dmap, options)
    return Built(dmap, t, options, figures,
                 recommendation.beyond_decision(config.beyond, figures))
