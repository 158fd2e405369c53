"""A small, realistic store for report tests: 5 daily windows of monitor ``credit`` written through the
store API (drift opens at window 3 when model v2 goes live; FEU candidates and an alert at window 3)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

MONITOR = "credit"
T0 = datetime(2026, 1, 1, tzinfo=UTC)
N_WINDOWS = 5
DRIFT_WINDOW = 3


def day(i: int) -> datetime:
    return T0 + timedelta(days=i)


def tree_json(threshold: float = 30.0) -> dict[str, Any]:
    """A pruned IE-DT tree in the format of ``fairmon.fairness.rumie`` (``Evidence.tree``)."""

    def leaf(i: int, size: int, p: float, in_group: bool, path: str) -> dict[str, Any]:
        return {"leaf": i, "size": size, "fraction": size / 2000, "p_fav": p, "in_group": in_group, "path": path}

    return {
        "ccp_alpha": 0.001,
        "n_leaves": 4,
        "n_leaves_unpruned": 9,
        "features": ["age", "region=north", "income"],
        "root": {
            "split": {"column": "age", "threshold": threshold, "left": "<=", "right": ">"},
            "left": leaf(1, 560, 0.31, True, f"age <= {threshold:g}"),
            "right": {
                "split": {"column": "region", "category": "north", "left": "!=", "right": "="},
                "left": {
                    "split": {"column": "income", "threshold": 41250.5, "left": "<=", "right": ">"},
                    "left": leaf(4, 420, 0.52, False, "age > 30 AND region != north AND income <= 41250.5"),
                    "right": leaf(5, 610, 0.66, False, "age > 30 AND region != north AND income > 41250.5"),
                },
                "right": leaf(6, 410, 0.29, True, "age > 30 AND region = north"),
            },
        },
    }


def window(i: int) -> Any:
    import numpy as np

    from fairmon.store import (
        EvidenceRecord,
        ExplanationMetricRecord,
        FindingRecord,
        MetricRecord,
        RunRecord,
        WindowRecords,
    )

    drift = i >= DRIFT_WINDOW
    dp = 0.06 + (0.14 if drift else 0.01 * i)
    run = RunRecord(
        MONITOR, day(i), day(i + 1), status="succeeded", model_version="v2" if drift else "v1",
        spec_fingerprint="a" * 64, n_rows=2000, timings={"rumie": 1.2, "explain": 3.4},
        details={"favorable_rate": 0.55, "prediction_source": "model"},
    )
    rates = {"sex": {"Female": 0.5, "Male": 0.5 + dp}, "race": {"A": 0.55, "B": 0.53, "C": 0.51}}
    metrics = []
    for attr, groups in rates.items():
        for g, v in groups.items():
            metrics.append(MetricRecord("selection_rate", v, attribute=attr, group=g, ci_low=v - 0.03,
                                        ci_high=v + 0.03, n=1000))
            metrics.append(MetricRecord("tpr", v + 0.2, attribute=attr, group=g, ci_low=v + 0.15,
                                        ci_high=v + 0.25, n=600))
        vals = list(groups.values())
        d = max(vals) - min(vals)
        metrics.append(MetricRecord("dp_difference", d, attribute=attr, ci_low=d - 0.03, ci_high=d + 0.03, n=2000))
        r = min(vals) / max(vals)
        metrics.append(MetricRecord("dp_ratio", r, attribute=attr, ci_low=r - 0.05, ci_high=min(r + 0.05, 1), n=2000))
    metrics.append(MetricRecord("selection_rate", None, attribute="sex&race", group="Female&C", n=12))
    honest = 0.05 + (0.17 if drift else 0.0)
    evidence = [
        EvidenceRecord(
            "ie-dt", honest + 0.04, honest_dscore=honest, p_value=1e-6 if drift else 0.3,
            key_attributes=("age", "region"), rules=["age <= 30", "age > 30 AND region = north"],
            rules_text="age <= 30 OR region = north", tree=tree_json(), group_size=970, group_fraction=0.485,
            p_fav_in=0.3, p_fav_out=0.3 + honest, n=2000, group_overlap=0.9 if i else None,
            details={"status": "ok", "key_features": [{"encoded": "age", "weight": -2.1},
                                                       {"encoded": "region=north", "weight": -1.4}]},
        )
    ]
    rng = np.random.default_rng(i)
    stab = {"Female": 0.80 - (0.05 if drift else 0.0), "Male": 0.84}
    expl = [
        ExplanationMetricRecord("gesd", "gesd", abs(stab["Female"] - stab["Male"]), explainer="kernelshap+lime",
                                p_value=0.01 if drift else 0.4, n=60, group_stability=stab,
                                details={"attribute": "sex", "status": "ok",
                                         "pairwise": [{"group_a": "Female", "group_b": "Male", "p_value": 0.01,
                                                       "p_adjusted": 0.01}],
                                         "components": {"kernelshap": {"value": 0.03, "p_value": 0.05},
                                                        "lime": {"value": 0.05, "p_value": 0.02}}}),
    ]
    for g, s in stab.items():
        details: dict[str, Any] = {"std": 0.05, "population": 1000, "sufficient": True}
        if drift:  # per-instance values stored from the drift window on (both layouts are drawn)
            details["instances"] = np.clip(rng.normal(s, 0.05, 30), 0, 1).round(4).tolist()
        expl.append(ExplanationMetricRecord("gesd", "stability", s, explainer="kernelshap+lime",
                                            group=f"sex={g}", n=30, details=details))
    for explainer in ("kernelshap", "lime"):
        for metric, base in (("PGI", 0.12), ("PGU", 0.04), ("RIS", 3.1)):
            expl.append(ExplanationMetricRecord("openxai", metric, base, explainer=explainer, n=60))
            for g, off in (("sex=Female", 0.01), ("sex=Male", -0.01), ("race=A", 0.0), ("race=B", 0.02)):
                expl.append(ExplanationMetricRecord("openxai", metric, base + off, explainer=explainer, group=g, n=30))
            expl.append(ExplanationMetricRecord("openxai", f"{metric}_fairness", 0.02, explainer=explainer,
                                                group="sex", n=60))
            expl.append(ExplanationMetricRecord("openxai", f"{metric}_fairness", 0.025, explainer=explainer,
                                                group="race", n=60))
    findings = []
    if drift:
        findings.append(FindingRecord(
            "rumie_dscore", "rumie_honest_dscore", "critical", status="open" if i == DRIFT_WINDOW else "ongoing",
            value=honest, baseline=0.05, since=day(DRIFT_WINDOW), numbers={"threshold": 0.12},
            message="held-out DScore 0.22 above 0.12 for age <= 30 OR region = north <script>x</script>",
        ))
        findings.append(FindingRecord(
            "ci_outside_range", "dp_ratio", "warning", status="pending", group="sex", value=0.7,
            ci_low=0.65, ci_high=0.75, message="dp_ratio CI below 0.8",
            numbers={"allowed": [0.8, 1.0], "ci_level": 0.9,
                     "groups": {"rate": "selection_rate", "disadvantaged": {"group": "Female", "value": 0.35, "n": 412},
                                "advantaged": {"group": "Male", "value": 0.5, "n": 588}}},
        ))
    return WindowRecords(run, metrics=metrics, evidence=evidence, explanation_metrics=expl, findings=findings)


def feu_candidates() -> list[Any]:
    from fairmon.store import FEUCandidateRecord

    pts = [(0.81, 0.21, 0.04), (0.79, 0.12, 0.03), (0.76, 0.06, 0.02), (0.72, 0.03, 0.015)]
    return [
        FEUCandidateRecord(
            i, hyperparameters={"lr": 10 ** -(2 + i / 2), "epochs": 10 + 5 * i, "threshold": 0.5},
            metrics={"test": {"auc": a, "balanced_accuracy": a - 0.08, "f1": a - 0.05, "dp": d, "eod": d + 0.01,
                              "gesd": g}},
            pareto=True, selected=(i == 2),
        )
        for i, (a, d, g) in enumerate(pts)
    ]


def feu_baselines() -> dict[str, Any]:
    """What the seeded candidates were compared with (``feu_baselines``)."""
    return {"production": {"test": {"auc": 0.82, "balanced_accuracy": 0.74, "dp": 0.24, "selection_rate": 0.6}},
            "constant": {"test": {"auc": 0.5, "balanced_accuracy": 0.5, "dp": 0.0, "selection_rate": 1.0}},
            "threshold_optimizer": {"test": {"auc": 0.7, "balanced_accuracy": 0.69, "dp": 0.02, "selection_rate": 0.5},
                                    "validation": {"band_ok": False, "utility_ok": True}},
            "exponentiated_gradient": {"test": {"auc": 0.68, "balanced_accuracy": 0.67, "dp": 0.03,
                                                "selection_rate": 0.55}}}


def seed(store: Any) -> dict[int, int]:
    """Write the windows (+ FEU candidates and one alert at the drift window); returns run ids."""
    from fairmon.store import AlertRecord

    store.upsert_monitor(MONITOR, owner="team@example.com")
    ids = {}
    for i in range(N_WINDOWS):
        ids[i] = int(store.write_window(window(i)))
    store.save_feu_candidates(ids[DRIFT_WINDOW], feu_candidates(), baselines=feu_baselines())
    store.outbox_enqueue(AlertRecord(
        "fp-credit-3", kind="fairness", monitor=MONITOR, run_id=ids[DRIFT_WINDOW], window_start=day(DRIFT_WINDOW),
        severity="critical", channel="#fairness", payload={"text": "RUMIE: discriminated group above threshold"},
    ))
    return ids
