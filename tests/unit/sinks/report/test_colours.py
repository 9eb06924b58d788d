"""The report's method colours (sinks/report/colours.py): one hue per algorithm, shades by
segment size, "defer" grey, the same colour for the same method every time."""
import colorsys

from collsel.core.mpi.algorithms import Method
from collsel.sinks.report.colours import DEFER_COLOUR, method_colour, variant_label


def hls(colour):
    return colorsys.rgb_to_hls(*(int(colour[i:i + 2], 16) / 255 for i in (1, 3, 5)))


METHODS = [Method(0, 0), Method(1, 0)] + [Method(2, s) for s in (0, 1024, 8192, 32768)] + [
    Method(3, s) for s in (0, 8192)] + [Method(2, 1024, 4)]


def test_one_hue_per_algorithm_shades_by_variant():
    colours = {m: method_colour(m, METHODS) for m in METHODS}
    assert colours[Method(0, 0)] == DEFER_COLOUR
    h, _, s = hls(DEFER_COLOUR)
    assert s == 0                                   # neutral grey
    chain = sorted(m for m in METHODS if m.algorithm == 2)
    hues = {round(hls(colours[m])[0], 2) for m in chain}
    assert len(hues) == 1                           # one hue for the algorithm
    light = [hls(colours[m])[1] for m in chain]
    assert light == sorted(light) and len(set(light)) == len(chain)   # dark to light
    others = {round(hls(colours[m])[0], 2) for m in METHODS if m.algorithm in (1, 3)}
    assert not hues & others and len(others) == 2   # other algorithms, other hues
    assert len(set(colours.values())) == len(METHODS)


def test_deterministic_and_independent_of_order():
    again = {m: method_colour(m, list(reversed(METHODS))) for m in METHODS}
    assert again == {m: method_colour(m, METHODS) for m in METHODS}
    # an algorithm's hue comes from its id: the same in a report without algorithm 2
    assert hls(method_colour(Method(3, 0), [Method(3, 0)]))[0] == hls(
        method_colour(Method(3, 0), METHODS))[0]


def test_variant_labels():
    assert variant_label(Method(2, 0)) == "unsegmented"
    assert variant_label(Method(2, 8192)) == "seg 8K"
    assert variant_label(Method(2, 1000, 4)) == "seg 1000 B, fan-in/out 4"
