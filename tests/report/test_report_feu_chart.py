"""The report's FEU chart (issue 16 reqs 1 and 4): the threshold-aware utility on its axis, and the
recommended candidate drawn beside the baselines it was compared with."""

from __future__ import annotations

from typing import Any

from fairmon.report.charts import _trend
from fairmon.store import FEUCandidateRecord


def _figure_of(*args: Any) -> Any:
    seen: list[Any] = []
    real = _trend.png
    _trend.png = lambda fig: seen.append(fig) or bytes(real(fig))  # type: ignore[assignment]
    try:
        assert _trend.pareto_chart(*args) is not None
    finally:
        _trend.png = real  # type: ignore[assignment]
    return seen[0]


def _cands(with_ba: bool) -> list[FEUCandidateRecord]:
    return [FEUCandidateRecord(i, metrics={"test": {"auc": 0.8 - i / 50, "dp": 0.1 - i / 40, "gesd": 0.01,
                                                    **({"balanced_accuracy": 0.72 - i / 100} if with_ba else {})}},
                               pareto=True, selected=i == 1) for i in range(3)]


BASELINES = {
    "production": {"test": {"auc": 0.82, "balanced_accuracy": 0.73, "dp": 0.14}},
    "constant": {"test": {"auc": 0.5, "balanced_accuracy": 0.5, "dp": 0.0}},
    "threshold_optimizer": {"test": {"auc": 0.7, "balanced_accuracy": 0.7, "dp": 0.01}},
    "exponentiated_gradient": {"test": {"auc": 0.68, "balanced_accuracy": 0.66, "dp": None}},  # no DP: not drawn
    "threshold_optimizer_tuned": {"test": {"auc": 0.71, "balanced_accuracy": 0.71, "dp": 0.03, "tol": 0.04}},
}


def test_feu_chart_draws_the_baselines_beside_the_candidates_on_balanced_accuracy() -> None:
    fig = _figure_of(_cands(True), BASELINES)
    ax = fig.axes[0]
    assert ax.get_ylabel() == "balanced accuracy (test)"
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    assert labels == ["recommended", "production", "approve everyone", "fairlearn ThresholdOptimizer (DP)",
                      "fairlearn ThresholdOptimizer (DP, tol 0.04 by FEU's rule)"]  # the report's and Slack's names
    ys = sorted(float(y) for coll in ax.collections for _, y in coll.get_offsets())
    assert 0.5 in ys and 0.73 in ys  # approve-everyone's 0.5 and production's point are on the chart
    renderer = fig.canvas.get_renderer()
    fig.draw(renderer)
    for a in fig.axes:  # axes, colour bar and legend inside the picture
        box = a.get_tightbbox(renderer)
        assert box.x0 >= -1 and box.y0 >= -1 and box.x1 <= fig.bbox.width + 1 and box.y1 <= fig.bbox.height + 1


def test_feu_chart_falls_back_to_auc_without_balanced_accuracy() -> None:
    """Paper mode and rows stored before the threshold-aware utility: AUC, and the baselines' AUC."""
    fig = _figure_of(_cands(False), BASELINES)
    assert fig.axes[0].get_ylabel() == "AUC (test)"
    assert _trend.pareto_chart(_cands(True)) is not None  # no baselines stored: the candidates alone


def test_feu_chart_plots_the_utility_the_candidates_were_searched_on() -> None:
    """Paper-mode candidates carry balanced accuracy too; the axis follows the stored utility."""
    cands = [FEUCandidateRecord(i, metrics={"utility": "auc", "test": {"auc": 0.8 - i / 50, "balanced_accuracy": 0.6,
                                                                       "dp": 0.1 - i / 40}}) for i in range(2)]
    assert _figure_of(cands, BASELINES).axes[0].get_ylabel() == "AUC (test)"
    for c in cands:
        c.metrics["utility"] = "balanced_accuracy"  # type: ignore[index]
    assert _figure_of(cands, BASELINES).axes[0].get_ylabel() == "balanced accuracy (test)"
