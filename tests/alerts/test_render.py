"""The pure renderer: content, fallback text, metadata, stable paths."""

from __future__ import annotations

import json

from alert_helpers import EVIDENCE, GESD, RULE, T0, ctx, dp_finding, rumie_finding

from fairmon.alerts import (
    EVENT_TYPE,
    render_data_validation,
    render_feu_followup,
    render_finding,
    report_path,
)
from fairmon.alerts.message import mrkdwn_escape


def _all_text(msg) -> str:  # type: ignore[no-untyped-def]
    return json.dumps(msg.blocks) + "\n" + msg.text


def test_rumie_alert_has_rules_numbers_header_and_link() -> None:
    m = render_finding(rumie_finding(), ctx())
    header = m.blocks[0]
    assert header["type"] == "header" and "credit" in header["text"]["text"]
    for needle in (mrkdwn_escape(RULE), "0.412", "0.626", "2,350", "47%", "0.187", "0.052", "4e-05", "v2", "2026-01-05",
                   "https://reports.example.com/fairmon/credit/2026-01-05.html", "age, region"):
        assert needle in m.text, needle  # plain-text fallback carries everything
        assert needle in _all_text(m)
    assert m.metadata == {"event_type": EVENT_TYPE, "event_payload": {
        "fingerprint": m.fingerprint, "monitor": "credit", "window_start": T0.isoformat(),
        "finding_key": "rumie_rise:rumie_honest_dscore:*", "status": "open", "severity": "critical"}}
    assert all(len(b.get("text", {}).get("text", "")) <= 3000 for b in m.blocks)
    # deterministic
    assert render_finding(rumie_finding(), ctx()) == m


def test_outcome_finding_shows_interval_and_range_and_gesd_on_gesd_findings() -> None:
    m = render_finding(dp_finding(), ctx())
    assert "[0.131, 0.195]" in m.text and "[0.000, 0.100]" in m.text and "dp_difference" in m.text
    g = render_finding(
        dp_finding().__class__(**{**dp_finding().__dict__, "kind": "gesd_rise", "metric": "gesd", "group": ""}), ctx())
    assert "female: stability 0.812 (n=50)" in g.text and "male: stability 0.873" in g.text


def test_outcome_alert_says_who_and_prints_the_configured_interval_level() -> None:
    """End to end from the drift decision: the message names the groups and the spec's CI level."""
    from datetime import timedelta

    from fairmon.drift import AlertPolicy, CIOutsideRange, WindowSummary, decide

    def rows(attr: str, rates: dict[str, tuple[float, int]]) -> list[dict]:
        return [{"metric": "selection_rate", "attribute": attr, "group": g, "value": v, "ci_low": v - 0.03,
                 "ci_high": v + 0.03, "n": n, "status": "ok"} for g, (v, n) in rates.items()]

    metrics = [{"metric": "dp_ratio", "attribute": "sex", "group": None, "value": 0.6, "ci_low": 0.55,
                "ci_high": 0.66, "n": 1000, "status": "ok"}, *rows("sex", {"Female": (0.3, 412), "Male": (0.5, 588)})]
    w = WindowSummary("credit", T0, T0 + timedelta(days=1), metrics=metrics, ci_level=0.9)
    [f] = decide(w, [], checks=[CIOutsideRange(metric="dp_ratio", low=0.8)],
                 policy=AlertPolicy(persistence_m=1, persistence_n=1))
    m = render_finding(f, ctx(evidence=None, gesd=None))
    assert "dp_ratio outside its allowed range — sex: Female vs Male" in m.blocks[0]["text"]["text"]
    for needle in ("sex: Female selection rate 0.300 (n=412) vs Male 0.500 (n=588): dp_ratio 0.600 (90% CI",
                   "below the allowed minimum 0.8", "Lowest selection rate: Female 0.300 (n=412)",
                   "Highest selection rate: Male 0.500 (n=588)", "90% interval: [0.550, 0.660]"):
        assert needle in m.text, (needle, m.text)
        assert needle.split(": ", 1)[-1] in _all_text(m)
    assert "95%" not in _all_text(m)
    # a finding that does not know its interval's level does not claim one
    assert "Interval: [0.131, 0.195]" in render_finding(dp_finding(), ctx()).text


def test_gesd_finding_shows_its_own_attributes_gesd() -> None:
    """The pipeline hands one GESD per sensitive attribute; a finding on race shows race's groups."""
    race = {"metric": "gesd", "attribute": "race", "value": 0.094, "p_value": 0.001, "status": "ok",
            "groups": [{"group": "A", "size": 50, "stability": 0.78}, {"group": "B", "size": 50, "stability": 0.874}]}
    per_attr = ctx(gesd={"sex": {**GESD, "attribute": "sex"}, "race": race})
    f = dp_finding().__class__(**{**dp_finding().__dict__, "kind": "gesd_rise", "metric": "gesd", "group": "race"})
    m = render_finding(f, per_attr)
    assert "GESD across race 0.094" in m.text and "A: stability 0.780 (n=50)" in m.text
    assert "female" not in m.text


def test_resolution_replies_in_thread_of_opening() -> None:
    opened = rumie_finding(2)
    resolved = rumie_finding(5, status="resolved", since_day=2)
    m = render_finding(resolved, ctx(5))
    assert m.thread_of == opened.fingerprint
    assert m.text.startswith("[critical] fairmon credit: Resolved:")
    assert mrkdwn_escape(RULE) not in m.text  # a resolution does not repeat the evidence


def test_report_path_is_stable_and_slugged() -> None:
    assert report_path("Credit Scoring / EU", T0) == "credit-scoring-eu/2026-01-05.html"
    assert render_finding(dp_finding(), ctx(report_base_url=None)).text.count("Report:") == 0


def test_feu_and_data_validation_templates() -> None:
    feu = {"candidates": [{"auc": 0.81, "dp": 0.04, "gesd": 0.01, "registry_version": "v3", "selected": True},
                          {"auc": 0.84, "dp": 0.09, "gesd": 0.02}]}
    m = render_feu_followup(feu, ctx(), parent_fingerprint="parent-fp")
    assert m.thread_of == "parent-fp" and "AUC 0.810, DP 0.040, GESD 0.010 ← recommended" in m.text
    assert "[v3]" in m.text
    dv = render_data_validation([{"expectation": "expect_column_values_to_not_be_null", "column": "age",
                                  "observed": "12% null"}], ctx(evidence=None, gesd=None))
    assert "data validation failed" in dv.text and "`age`" in dv.text and "12% null" in dv.text
    assert dv.metadata["event_payload"]["kind"] == "data_validation"
    assert EVIDENCE["rules"][0] not in dv.text
    # fairmon's own checks carry a message naming the file or the values: the on-call reader sees it
    missing = render_data_validation([{"expectation": "fairmon_file_exists", "check": "file_exists", "column": None,
                                       "observed": "file_exists", "message": "data file not found: /data/2026-01-05.csv"}],
                                     ctx(evidence=None, gesd=None))
    assert "fairmon_file_exists: data file not found: /data/2026-01-05.csv" in missing.text
    assert "/data/2026-01-05.csv" in str(missing.blocks)


def test_feu_followup_flags_baselines_outside_feus_constraints() -> None:
    """A mitigator whose lower DP comes from leaving the band is marked, so the reader sees why FEU
    does not propose it."""
    def part(rate: float, ba: float, dp: float, **checks: bool) -> dict[str, object]:
        return {"selection_rate": rate, "balanced_accuracy": ba, "dp": dp, **checks}
    feu = {"candidates": [{"auc": 0.81, "dp": 0.04, "gesd": 0.01, "selected": True}],
           "baselines": {"production": {"test": part(0.8, 0.66, 0.10), "validation": part(0.8, 0.66, 0.10)},
                         "threshold_optimizer": {"test": part(0.64, 0.70, 0.0),
                                                 "validation": part(0.63, 0.69, 0.0, band_ok=False, utility_ok=True)},
                         "exponentiated_gradient": {"test": part(0.8, 0.60, 0.03),
                                                    "validation": part(0.8, 0.61, 0.03, band_ok=True, utility_ok=False)},
                         "threshold_optimizer_tuned": {"test": {**part(0.74, 0.66, 0.05), "tol": 0.04},
                                                       "validation": part(0.75, 0.66, 0.04, band_ok=True, utility_ok=True)}}}
    text = render_feu_followup(feu, ctx(), parent_fingerprint="p").text
    assert "ThresholdOptimizer (DP): bal. acc. 0.700, positive rate 0.640, DP 0.000 (outside FEU's positive-rate band on validation)" in text
    assert "ExponentiatedGradient (DP): bal. acc. 0.600, positive rate 0.800, DP 0.030 (below FEU's utility floor on validation)" in text
    assert "production: bal. acc. 0.660, positive rate 0.800, DP 0.100\n" in text + "\n"
    assert "fairlearn ThresholdOptimizer (DP, tol 0.04 by FEU's rule): bal. acc. 0.660, positive rate 0.740, DP 0.050" in text


def test_feu_requested_without_drift_alert_is_a_message_of_its_own_once_per_channel() -> None:
    from fairmon.alerts import InMemoryOutboxRepository, Outbox, alert_fingerprint

    feu = {"candidates": [{"auc": 0.81, "dp": 0.04, "gesd": 0.01, "selected": True}]}
    m = render_feu_followup(feu, ctx(), parent_fingerprint=None)
    assert m.thread_of is None and "parent" not in m.metadata["event_payload"]
    assert "requested on demand" in m.text and "window 2026-01-05 00:00 – 2026-01-06 00:00 UTC" in m.text
    assert m.blocks[0]["type"] == "context" and "v2" in json.dumps(m.blocks[0])
    repo = InMemoryOutboxRepository()
    ob = Outbox(repo)
    fps = [ob.notify_feu(feu, ctx(), parent_finding=None, channel=c) for c in ("#a", "#b", "#a")]
    assert fps[0] == alert_fingerprint(m.fingerprint, "#a") and fps[1] != fps[0] and fps[2] is None
    stored = repo.outbox_get(fps[0])
    assert stored is not None and stored.payload["metadata"]["event_payload"]["fingerprint"] == fps[0]


def test_renders_real_rumie_evidence_and_window_summary() -> None:
    import numpy as np
    import pandas as pd

    from fairmon.drift import WindowSummary
    from fairmon.fairness.rumie import mine

    rng = np.random.default_rng(0)
    X = pd.DataFrame({"age": rng.integers(18, 70, 600), "region": rng.choice(["north", "south"], 600)})
    fav = np.where(X["age"] <= 30, rng.random(600) < 0.2, rng.random(600) < 0.8)
    ev = mine(X, fav, k=1, alpha=0.2, beta=0.8, iterations=200, num_threads=1)
    evd = ev.to_dict()
    m = render_finding(rumie_finding(), ctx(evidence=evd))
    assert ev.rules and mrkdwn_escape(ev.rules[0]) in m.text and f"{ev.p_fav_in:.3f}" in m.text and f"{ev.p_fav_out:.3f}" in m.text
    assert f"{ev.group_size:,} rows" in m.text
    meas = WindowSummary("credit", T0, evidence=evd).measurements()[("rumie_honest_dscore", "")]
    assert meas.value == ev.honest_dscore and meas.ci is not None and meas.ci[0] < meas.value < meas.ci[1]


def test_feu_followup_reads_the_raw_feu_result_shape() -> None:
    raw = {"method": "feu", "selected": {"id": 7}, "snapshot": {"version": "v3"},
           "pareto": [{"id": 3, "hyperparameters": {"lr": 0.001, "epochs": 20, "threshold": 0.5},
                       "test": {"auc": 0.83, "dp": 0.09, "gesd": 0.02}},
                      {"id": 7, "hyperparameters": {"lr": 0.01, "epochs": 12, "threshold": 0.45},
                       "test": {"auc": 0.8, "dp": 0.03, "gesd": 0.01}}]}
    m = render_feu_followup(raw, ctx(), parent_fingerprint="p")
    assert "#1: AUC 0.830, DP 0.090, GESD 0.020 (epochs 20, lr 0.001, threshold 0.5)" in m.text
    assert "#2 [v3]: AUC 0.800, DP 0.030, GESD 0.010 ← recommended" in m.text


def test_feu_followup_names_the_rumie_group_it_retrained_for_and_its_model_inputs() -> None:
    target = {"kind": "rumie_group", "rules": "region = north OR age <= 30", "inside_rows": 4662, "outside_rows": 5338,
              "model_inputs": ["age", "region"]}
    text = render_feu_followup({"candidates": [], "sensitive": "rumie_group", "target": target}, ctx(),
                               parent_fingerprint="p").text
    assert ("DP and GESD compare the group this alert is about (RUMIE's rules region = north OR age &lt;= 30; "
            "4662 rows of the retraining data inside, 5338 outside) with everyone else; its rules use model inputs (age, region)") in text
    kept = {"kind": "attribute", "attribute": "sex", "reason": "the window's alert is not about a RUMIE group"}
    text = render_feu_followup({"candidates": [], "sensitive": "sex", "target": kept}, ctx(), parent_fingerprint="p").text
    assert "the groups of `sex`, the attribute FEU retrains for" in text and "(the window's alert is not about" in text


def test_feu_followup_names_the_groups_left_out_for_too_few_training_rows() -> None:
    """Session 23: a 5-row group decided FEU's DP (ThresholdOptimizer 'DP 1.000'); FEU now leaves groups below
    outcome.min_group_size out (pipeline.feu_target.leave_out_small_groups) and the follow-up names them."""
    target = {"kind": "attribute", "attribute": "race", "left_out": {"Native American": 5}, "min_group_rows": 30}
    text = render_feu_followup({"candidates": [], "sensitive": "race", "target": target}, ctx(),
                               parent_fingerprint="p").text
    assert "groups with fewer than 30 training rows left out: Native American (5)" in text


def test_feu_followup_names_a_repeated_recipe_and_the_registered_ensemble() -> None:
    """Session 24 (an ML lead auditing the demo): the follow-up listed "6 on the Pareto front" where #1, #3 and
    #6 were one recipe trained with different seeds, showed the recommended row with its fold ensemble's test
    figures beside the other rows' single networks without saying so, and called the figures "on the test
    split" above a recommendation judged out of fold."""
    hp = {"epochs": 10, "lr": 0.00018736483, "threshold": 0.65668382}
    ensemble = {"model": "fold_ensemble", "members": 5,
                "searched": {"test": {"dp": 0.0232, "balanced_accuracy": 0.6366}}}
    feu = {"candidates": [
        {"auc": 0.712, "dp": 0.003, "gesd": 0.006, "hyperparameters": hp},
        {"auc": 0.713, "dp": 0.010, "gesd": 0.006, "hyperparameters": {**hp, "lr": 0.000192}},
        {"auc": 0.712, "dp": 0.004, "gesd": 0.005, "hyperparameters": dict(hp), "selected": True,
         "registry_version": "v3", "metrics": {"deployment": ensemble}},
    ]}
    text = render_feu_followup(feu, ctx(), parent_fingerprint="p").text
    assert "(3 on the Pareto front, 2 distinct recipes; proposed, not deployed" in text
    assert "the recommendation's before/after figures are out of fold or on validation, the candidate and " \
           "baseline lists are on the test split" in text
    assert "production changes only when someone promotes the registered version" in text
    line = next(ln for ln in text.splitlines() if ln.startswith("#3 [v3]"))
    assert ("← recommended (as registered: the fold ensemble of its 5 fold models; the searched network itself: "
            "DP 0.023, bal. acc. 0.637; the recipe of #1 again (another training seed))") in line
    assert "again" not in next(ln for ln in text.splitlines() if ln.startswith("#2"))
    single = render_feu_followup({"candidates": feu["candidates"][:2]}, ctx(), parent_fingerprint="p").text
    assert "distinct recipes" not in single and "registered" not in single  # nothing was registered
