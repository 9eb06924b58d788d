"""Is a tree worth deploying? A tree whose mean penalty out of sample is above the MPI's own
decision's is worse than doing nothing; above the best single fixed method's, worse than one
line of configuration. Pure: figures in, findings out."""

# Means closer than this (percentage points) are one figure computed two ways (a one-leaf tree
# of the best fixed method scores exactly as that method).
SAME = 1e-9


def worse_than(tree_mean, baselines, margins=None):
    """[(name, their mean)] of the baselines ({name: mean penalty in % or None}) whose mean the
    tree's mean penalty exceeds by more than the baseline's margin ({name: points}, default 0:
    core.evaluate.out_of_sample gives one standard error of the per-cell difference, so a tree is
    not called worse for a gap the measurements' noise explains, the rule model selection uses), in
    the given order; [] when the tree's mean is unknown."""
    if tree_mean is None:
        return []
    margins = margins or {}
    return [(name, mean) for name, mean in baselines.items()
            if mean is not None and tree_mean > mean + max(SAME, margins.get(name) or 0)]
