"""core.maps.imputation: the rule on small hand tables, and its properties on random sparse grids."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from collsel.core.maps import decision_map, imputation

NAN = np.nan


def axes(ps, ms):
    return [decision_map.make_axis("comm_size", decision_map.LINEAR, ps),
            decision_map.make_axis("msg_size", decision_map.LOG2, ms)]


def one_method(grid):
    return np.asarray(grid, dtype=float)[..., None]


def test_interpolates_log_time_in_log2_m_within_the_row():
    times = one_method([[1.0, NAN, 16.0]])           # m = 1, 2, 4: log2 m = 0, 1, 2
    filled, imputed = imputation.impute(times, axes([2], [1, 2, 4]))
    assert filled[0, 1, 0] == pytest.approx(4.0)     # geometric mean of 1 and 16
    assert imputed[..., 0].tolist() == [[False, True, False]]


def test_uneven_spacing_follows_log2_m():
    times = one_method([[1.0, NAN, 8.0]])           # m = 1, 2, 8: log2 m = 0, 1, 3
    filled, _ = imputation.impute(times, axes([2], [1, 2, 8]))
    assert filled[0, 1, 0] == pytest.approx(2.0)     # a third of the way in log space


def test_nearest_value_beyond_the_ends():
    times = one_method([[NAN, 3.0, 5.0, NAN]])
    filled, _ = imputation.impute(times, axes([2], [1, 2, 4, 8]))
    assert filled[0].ravel() == pytest.approx([3.0, 3.0, 5.0, 5.0])


def test_row_without_the_method_interpolates_in_log2_p():
    times = one_method([[2.0, 1.0], [NAN, NAN], [8.0, 4.0]])   # P = 2, 4, 8
    filled, _ = imputation.impute(times, axes([2, 4, 8], [1, 2]))
    assert filled[1, :, 0] == pytest.approx([4.0, 2.0])         # log2 P midway


def test_m_first_then_p_and_only_from_measurements():
    # cell (1, 1) has a row measurement (m interpolation) and a column one (P): m wins
    times = one_method([[NAN, 100.0, NAN], [1.0, NAN, 1.0], [NAN, 100.0, NAN]])
    filled, _ = imputation.impute(times, axes([2, 4, 8], [1, 2, 4]))
    assert filled[1, 1, 0] == pytest.approx(1.0)
    # row 0 has m = 2 measured: its ends take that value, not the P interpolation
    assert filled[0, 0, 0] == pytest.approx(100.0)


def test_nearest_cell_when_neither_line_has_the_method():
    times = one_method([[5.0, NAN], [NAN, NAN]])
    filled, imputed = imputation.impute(times, axes([2, 4], [1, 2]))
    assert filled[1, 1, 0] == 5.0 and imputed[..., 0].sum() == 3


def test_skipped_and_unmeasured_methods_stay_nan():
    times = np.array([[[1.0, NAN, 2.0], [NAN, NAN, NAN]]])
    filled, imputed = imputation.impute(times, axes([2], [1, 2]), skip=(2,))
    assert filled[0, 1, 0] == 1.0
    assert np.isnan(filled[..., 1]).all() and np.isnan(filled[0, 1, 2])
    assert imputed.sum() == 1


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 5), st.integers(1, 6), st.integers(0, 2**32 - 1))
def test_estimates_stay_within_the_methods_range(n_p, n_m, seed):
    rng = np.random.default_rng(seed)
    times = rng.uniform(0.5, 50.0, (n_p, n_m, 2))
    times[rng.random(times.shape) < 0.5] = NAN
    filled, imputed = imputation.impute(times, axes([2 ** (k + 1) for k in range(n_p)],
                                                    [4 ** k for k in range(n_m)]))
    known = np.isfinite(times)
    assert np.array_equal(filled[known], times[known])          # measurements untouched
    assert np.array_equal(imputed, ~known & np.isfinite(filled))
    for j in range(2):
        if known[..., j].any():
            col = times[..., j][known[..., j]]
            est = filled[..., j]
            assert np.isfinite(est).all()
            assert est.min() >= col.min() * (1 - 1e-12) and est.max() <= col.max() * (1 + 1e-12)
        else:
            assert np.isnan(filled[..., j]).all()


def test_lines_are_interpolated_at_once_as_np_interp_does_one_by_one():
    """_along interpolates every line of every method in one pass (issue 30: `collsel build`
    imputes ~50 training maps); its results equal np.interp's per line to the bit."""
    def per_line(log_times, known, x, axis):
        lt, kn = np.moveaxis(log_times, axis, -1), np.moveaxis(known, axis, -1)
        out = np.full(lt.shape, np.nan)
        flat_lt, flat_kn = lt.reshape(-1, lt.shape[-1]), kn.reshape(-1, kn.shape[-1])
        flat_out = out.reshape(-1, out.shape[-1])
        for line in np.flatnonzero(flat_kn.any(axis=1)):
            k = flat_kn[line]
            flat_out[line] = np.interp(x, x[k], flat_lt[line, k])
        return np.moveaxis(out, -1, axis)

    rng = np.random.default_rng(1)
    for _ in range(200):
        shape = tuple(rng.integers(1, 9, size=rng.integers(1, 4)))
        known = rng.random(shape) < rng.random()
        log_t = np.where(known, rng.normal(size=shape) * 5, 0.0)
        for axis in range(len(shape)):
            x = np.sort(rng.choice(np.log2(np.maximum(np.arange(64), 0.5)), size=shape[axis],
                                   replace=False))
            assert np.array_equal(imputation._along(log_t, known, x, axis),
                                  per_line(log_t, known, x, axis), equal_nan=True)
