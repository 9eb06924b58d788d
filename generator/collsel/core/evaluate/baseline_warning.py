"""The plain warning a tree earns when it loses out of sample to what needs no tree at all: the
MPI's own default (algorithm 0) or the best single fixed method.

One text for every place that shows a tree's out-of-sample figures (`collsel build`, `collsel
stats`, the report): it reads the `out_of_sample` block of stats.json
(core.evaluate.out_of_sample.tree_figures); whether a tree is worse is core.evaluate.verdict's rule.
"""
from collsel.core.evaluate import out_of_sample, verdict
from collsel.core.mpi.method_text import default_name


def _verdicts(block):
    """(figures of a kind, worse than the default?, worse than the best fixed method?) of every
    out-of-sample kind the tree was scored on."""
    for kind in out_of_sample.KINDS:
        f = (block or {}).get(kind)
        if not f or f["tree"]["mean"] is None:
            continue
        on_default = f["tree"].get("on_default_cells") or f["tree"]
        se = f["tree"].get("se_vs") or {}
        yield (f, bool(verdict.worse_than(on_default["mean"], {"default": f["default"]["mean"]},
                                          {"default": se.get("default")})),
               bool(verdict.worse_than(f["tree"]["mean"], {"best fixed": f["best_fixed"]["mean"]},
                                       {"best fixed": se.get("best_fixed")})))


def beaten_by(block):
    """Which baselines beat the tree on some out-of-sample kind: a subset of ("default",
    "best fixed"), in that order."""
    verdicts = list(_verdicts(block))
    return tuple(name for name, i in (("default", 1), ("best fixed", 2))
                 if any(v[i] for v in verdicts))


def worse_than_baselines(block, family):
    """[message] with one message per out-of-sample kind (across launches, leave-one-P-out,
    leave-one-m-out) where the tree's mean penalty is higher than the default's (on the cells
    where the default was measured) or than the best fixed method's; each message names both
    figures. [] when the tree is at least as good as both everywhere it was scored."""
    messages = []
    for f, worse_default, worse_fixed in _verdicts(block):
        if not (worse_default or worse_fixed):
            continue
        tree, on_default = f["tree"], f["tree"].get("on_default_cells") or f["tree"]
        figure = f"{tree['mean']:.2f} % {f['label']}"
        if worse_default and on_default["cells"] != tree["cells"]:
            figure += (f" ({on_default['mean']:.2f} % on the {on_default['cells']} cells where "
                       "the default was measured)")
        against = ([f"{default_name(family)} {f['default']['mean']:.2f} %"] if worse_default
                   else []) \
            + ([f"the best fixed method {f['best_fixed']['mean']:.2f} % (one method "
                "everywhere, chosen on each training fold)"] if worse_fixed else [])
        what = "worse than doing nothing" if worse_default else \
            "worse than one fixed method everywhere"
        messages.append(f"this tree is {what}: {figure} vs {' and '.join(against)}")
    return messages
