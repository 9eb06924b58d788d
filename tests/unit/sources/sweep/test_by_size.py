"""The by-size sweep's plan (sources/sweep/by_size.py): each forced method at its own size a
few bytes above m, mirrored between launches, sizes that would collide in separate launches, and
the tuning file that forces each size's method."""
import json

import pytest

from collsel.core.mpi.algorithms import Method
from collsel.errors import InputError
from collsel.sources.sweep import by_size

METHODS = [Method(1, 0), Method(3, 0), Method(7, 0)]


def points(msg_sizes, r=1):
    return [(m + by_size.offset(k, len(METHODS), r), m, x)
            for m in msg_sizes for k, x in enumerate(METHODS)]


def test_offsets_mirror_between_launches_so_every_method_has_the_same_mean_size():
    odd = [by_size.offset(k, 5, 1) for k in range(5)]
    even = [by_size.offset(k, 5, 2) for k in range(5)]
    assert odd == [0, 1, 2, 3, 4] and even == [4, 3, 2, 1, 0]
    assert {a + b for a, b in zip(odd, even)} == {4}


def test_sizes_closer_than_the_offsets_go_to_separate_launches():
    got = by_size.parts(points([1, 2, 4, 64]), limit=4096)
    assert [[size for size, _, _ in part] for part in got] == [
        [1, 2, 3, 4, 5, 6, 64, 65, 66], [2, 3, 4]]
    for part in got:            # a launch never measures one size twice
        assert len({size for size, _, _ in part}) == len(part)


def test_a_launch_holds_at_most_the_benchmarks_sizes_and_keeps_each_m_whole():
    got = by_size.parts(points([100, 200, 300]), limit=6)
    assert [sorted({m for _, m, _ in part}) for part in got] == [[100, 200], [300]]


def test_the_tuning_file_gives_each_size_its_own_entry():
    doc = json.loads(by_size.tuning_file("bcast", points([8, 1024], r=2)))
    entries = doc["coll=Bcast"]["ppn=-1"]["comm_size=-1"]["comm_id=-1"]
    assert entries == {"msg_size=8": {"BCAST=7": {}}, "msg_size=9": {"BCAST=3": {}},
                       "msg_size=10": {"BCAST=1": {}}, "msg_size=1024": {"BCAST=7": {}},
                       "msg_size=1025": {"BCAST=3": {}}, "msg_size=1026": {"BCAST=1": {}}}


def test_offsets_past_the_benchmarks_largest_size_are_refused():
    with pytest.raises(InputError, match="--mode by-size measures its 3 methods up to"):
        by_size.check_grid([8, 2**31 - 2], METHODS)
    by_size.check_grid([8, 2**31 - 3], METHODS)
