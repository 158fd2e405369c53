"""GESD of FEU's fairlearn baselines (issue 16): computed with the search's own GESD call for
ExponentiatedGradient (its probability of a favourable decision) and ThresholdOptimizer (the group read
from the encoded sensitive columns), and None with the reason when the group is not a model feature."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from fairmon.feu import FEUSettings
from fairmon.feu._baselines import ERR_TO_GROUP_NOT_A_FEATURE, _group_decoder, baseline_metrics
from fairmon.feu._choose import _production
from fairmon.feu._data import _prepare
from fairmon.feu._evaluate import _Evaluator

GESD = {"explainer": "shap+lime", "sample_size": 40, "n_perturbations": 3, "stratify": True, "min_group_size": 5,
        "explainer_params": {"kernelshap": {"n_samples": 16, "background_size": 5}, "lime": {"n_samples": 50}}}


def _data(n: int = 400, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    sex = rng.choice(["F", "M"], n)
    race = rng.choice([0, 1, 2], n)
    x1, x2 = rng.normal(size=(2, n))
    y = (x1 + 0.5 * x2 + 1.5 * (sex == "M") + rng.logistic(size=n) * 0.7 > 0.75).astype(int)
    return pd.DataFrame({"x1": x1, "x2": x2, "sex": sex, "race": race, "y": y})


def _baselines(features: list[str], sensitive: str | list[str], gesd: dict | None = None) -> tuple[dict, object]:  # type: ignore[type-arg]
    prep = _prepare(_data(), features, sensitive, "y", None, (0.5, 0.2, 0.3), 3)
    ev = _Evaluator(prep, FEUSettings.small(gesd=gesd or GESD), gesd_seed=4, device="cpu")
    anchor = _production(ev, None, 3)
    out = baseline_metrics(prep, anchor.proba, anchor.threshold, random_state=3,
                           production_score=anchor.score_encoded, gesd_of=ev.gesd_result)
    return out, prep


def test_group_decoder_reads_the_groups_back_from_the_encoding() -> None:
    for sensitive in ("sex", "race", ["sex", "race"]):
        prep = _prepare(_data(), ["x1", "x2", "sex", "race"], sensitive, "y", None, (0.5, 0.2, 0.3), 1)
        decode = _group_decoder(prep)
        assert decode is not None
        for part in ("train", "test"):
            assert (decode(prep.Z[part]) == prep.s[part]).all()
    prep = _prepare(_data(), ["x1", "x2"], "sex", "y", None, (0.5, 0.2, 0.3), 1)
    assert _group_decoder(prep) is None


@pytest.mark.slow
def test_mitigators_gesd_is_computed_when_the_group_is_a_feature() -> None:
    out, _ = _baselines(["x1", "x2", "sex"], "sex")
    for name in ("threshold_optimizer", "exponentiated_gradient", "production"):
        for part in ("validation", "test"):
            g = out[name][part].get("gesd") if name != "production" else 0.0
            assert g is not None and math.isfinite(g) and 0.0 <= g <= 1.0, (name, part, out[name][part])
    for name in ("threshold_optimizer", "exponentiated_gradient"):
        assert "gesd_note" not in out[name]["test"] and 0 <= out[name]["test"]["gesd_p_value"] <= 1
    assert out["constant"]["test"]["gesd"] == 0.0


@pytest.mark.slow
def test_threshold_optimizer_gesd_is_none_with_the_reason_when_the_group_is_withheld() -> None:
    out, _ = _baselines(["x1", "x2"], "sex")
    for part in ("validation", "test"):
        to = out["threshold_optimizer"][part]
        assert to["gesd"] is None and to["gesd_note"] == ERR_TO_GROUP_NOT_A_FEATURE.format(columns=["sex"])
        eg = out["exponentiated_gradient"][part]
        assert eg["gesd"] is not None and math.isfinite(eg["gesd"])  # EG is a function of the features only


@pytest.mark.slow
def test_a_gradient_explainer_leaves_the_mitigators_gesd_none_with_the_reason() -> None:
    out, _ = _baselines(["x1", "x2", "sex"], "sex", gesd={"explainer": "gradient", "sample_size": 40,
                                                          "n_perturbations": 3, "stratify": True, "min_group_size": 5})
    for name in ("threshold_optimizer", "exponentiated_gradient"):
        entry = out[name]["test"]
        assert entry["gesd"] is None and entry["gesd_note"].startswith("GESD undefined with the configured explainer")
        assert "needs gradients" in entry["gesd_note"]
