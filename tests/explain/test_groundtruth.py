"""PRA, RC, FA, RA, SA, SRA: exact parity with OpenXAI's reference outputs and hand-computed cases."""

from __future__ import annotations

import numpy as np
import pytest

from fairmon.errors import MethodError
from fairmon.explain.openxai import fa, k_to_int, pra, ra, rc, sa, sra

FNS = {"FA": fa, "RA": ra, "SA": sa, "SRA": sra}


@pytest.fixture(scope="module")
def cases(reference_dir):  # type: ignore[no-untyped-def]
    return dict(np.load(reference_dir / "openxai_groundtruth_cases.npz"))


def test_pra_rc_match_reference(cases):  # type: ignore[no-untyped-def]
    np.testing.assert_allclose(pra(cases["E"], cases["gt"]), cases["PRA"], rtol=0, atol=1e-9)
    np.testing.assert_allclose(rc(cases["E"], cases["gt"]), cases["RC"], rtol=0, atol=1e-9)


@pytest.mark.parametrize("name", list(FNS))
@pytest.mark.parametrize("k", [0.25, 0.5, 1.0])
@pytest.mark.parametrize("auc", [0, 1])
def test_agreement_metrics_match_reference(cases, name, k, auc):  # type: ignore[no-untyped-def]
    got = FNS[name](cases["E"], cases["gt"], cases["pred"], k=k, auc=bool(auc))
    np.testing.assert_allclose(got, cases[f"{name}_k{k}_auc{auc}"], rtol=0, atol=1e-9)


def test_reference_cases_exercise_ties_zeros_and_both_labels(cases):  # type: ignore[no-untyped-def]
    E = cases["E"]
    assert (E == 0).any() and set(np.unique(cases["pred"])) == {0, 1}
    assert any(len(np.unique(np.abs(r))) < len(r) for r in E)


# ---------------------------------------------------------------- hand-computed cases
GT = np.array([4.0, -3.0, 2.0, 1.0])


def test_pra_hand():
    # |E| order: f1 > f0 > f2 > f3; |G| order: f0 > f1 > f2 > f3 -> only pair (0, 1) disagrees: 5/6
    E = np.array([[3.0, -5.0, 1.0, 0.5]])
    assert pra(E, GT)[0] == pytest.approx(5 / 6, abs=1e-12)


def test_rc_hand_and_constant_row_is_nan():
    E = np.array([[1.0, 2.0, 3.0, 4.0], [2.0, 2.0, 2.0, 2.0]])
    out = rc(E, GT)
    assert out[0] == pytest.approx(-1.0)
    assert np.isnan(out[1])


def test_fa_ra_hand():
    E = np.array([[4.0, 1.0, 3.0, 0.0]])  # top-2 = {0, 2}; gt top-2 = {0, 1}
    pred = np.array([1])
    assert fa(E, GT, pred, k=0.5)[0] == 0.5
    assert ra(E, GT, pred, k=0.5)[0] == 0.5  # position 1 holds f0 in both with dense rank 1
    E2 = np.array([[1.0, 4.0, 0.0, 0.0]])  # top-2 = (f1, f0): both in gt top-2 but swapped
    assert fa(E2, GT, pred, k=2)[0] == 1.0
    assert ra(E2, GT, pred, k=2)[0] == 0.0


def test_sa_sra_with_mixed_predicted_labels():
    # for a row predicted 0 the ground truth is flipped: (-4, 3, -2, -1)
    E = np.array([[4.0, -3.0, 0.1, 0.0], [-4.0, 3.0, 0.1, 0.0], [4.0, -3.0, 0.1, 0.0], [-4.0, -3.0, 0.1, 0.0]])
    pred = np.array([1, 0, 0, 1])
    np.testing.assert_allclose(sa(E, GT, pred, k=0.5), [1.0, 1.0, 0.0, 0.5])
    np.testing.assert_allclose(sra(E, GT, pred, k=0.5), [1.0, 1.0, 0.0, 0.5])
    np.testing.assert_allclose(fa(E, GT, pred, k=0.5), [1.0, 1.0, 1.0, 1.0])  # FA ignores signs


def test_auc_hand():
    # FA at k=1,2,3,4 = 1, 0.5, 2/3, 1 on the grid (0, 1/3, 2/3, 1) -> trapezoids
    E = np.array([[4.0, 0.0, 3.0, 2.0]])
    vals = [fa(E, GT, np.array([1]), k=kk)[0] for kk in (1, 2, 3, 4)]
    np.testing.assert_allclose(vals, [1.0, 0.5, 2 / 3, 1.0])
    expected = np.trapezoid(vals, np.arange(4) / 3)
    assert fa(E, GT, np.array([1]), k=1.0, auc=True)[0] == pytest.approx(expected, abs=1e-12)


def test_per_instance_ground_truth():
    G = np.array([[1.0, 0.0, 0.0], [0.0, 0.0, 1.0]])
    E = np.array([[0.9, 0.1, 0.0], [0.9, 0.1, 0.0]])
    np.testing.assert_allclose(fa(E, G, np.array([1, 1]), k=1), [1.0, 0.0])


@pytest.mark.parametrize("k, expected", [(0.25, 3), (0.5, 5), (1.0, 10), (1, 1), (10, 10), (0.01, 1)])
def test_k_to_int(k, expected):  # type: ignore[no-untyped-def]
    assert k_to_int(k, 10) == expected


@pytest.mark.parametrize("k", [0.0, 1.5, -0.2, 0, 11, True, "a"])
def test_bad_k_is_a_clear_error(k):  # type: ignore[no-untyped-def]
    with pytest.raises(MethodError, match="k must be a fraction"):
        fa(np.ones((1, 10)), np.ones(10), np.array([1]), k=k)


def test_bad_shapes_and_values():
    with pytest.raises(MethodError, match="ground truth has shape"):
        pra(np.ones((2, 3)), np.ones(4))
    with pytest.raises(MethodError, match="predictions must be 2 labels"):
        fa(np.ones((2, 3)), np.ones(3), np.array([1, 2]))
    with pytest.raises(MethodError, match="NaN"):
        rc(np.array([[np.nan, 1.0, 2.0]]), np.ones(3))
