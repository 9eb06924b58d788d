"""Where a tree's decisions were measured and where they are extrapolated, in one text for
`build`, `query`, `report`, the emitted files' comments and tune's plan.

A tree decides every P: outside the measured P the edge cell extends (core.maps.decision_map), so
data measured at one P is applied at every P, and a query at P = 64 of a tree measured up to
16 answers with P = 16's decision. Both are extrapolations and are said, never silent.
tree.json's `beyond` (defer to the MPI above a P) is not: there the MPI decides.
"""


def p_text(p_values):
    """'P = 4' or 'P = 2-16' (the measured P values, ascending)."""
    lo, hi = p_values[0], p_values[-1]
    return f"P = {lo}" if lo == hi else f"P = {lo}-{hi}"


def one_p(p_values):
    return len(p_values) == 1


def tree_note(p_values, beyond_above=None):
    """One sentence on the measured P and what the tree does outside them."""
    lo, hi = p_values[0], p_values[-1]
    if one_p(p_values):
        return (f"measured at P = {lo} only: every P gets the decisions measured there "
                f"(extrapolated; measure more P to know)")
    above = (f"above P = {beyond_above} it defers to the MPI's default" if beyond_above
             is not None else f"above P = {hi} the decisions at P = {hi} are extrapolated")
    below = f", below P = {lo} those at P = {lo}" if lo > 1 else ""
    return f"measured at {p_text(p_values)}: {above}{below}"


def query_note(p, p_values, beyond_above=None):
    """Why the decision at P = `p` is extrapolated, or None (measured range, or deferred by
    tree.json's `beyond`)."""
    lo, hi = p_values[0], p_values[-1]
    if beyond_above is not None and p > beyond_above:
        return None
    if one_p(p_values):
        return None if p == lo else (f"P = {p}: extrapolated, the tree was measured at P = {lo} "
                                     "only")
    if p > hi:
        return f"P = {p}: beyond the measured {p_text(p_values)}, extrapolated from P = {hi}"
    if p < lo:
        return f"P = {p}: below the measured {p_text(p_values)}, extrapolated from P = {lo}"
    return None
