"""Small deterministic findings and contexts for alert tests."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from fairmon.alerts import AlertContext
from fairmon.drift import Finding

T0 = datetime(2026, 1, 5, tzinfo=UTC)
RULE = "age <= 30 OR region = north"

EVIDENCE = {
    "method": "ie-dt", "dscore": 0.214, "honest_dscore": 0.187, "p_value": 0.0004,
    "key_attributes": ["age", "region"], "rules": [RULE], "p_fav_in": 0.412, "p_fav_out": 0.626,
    "fraction": 0.47, "group_size": 2350,
}
GESD = {"metric": "gesd", "value": 0.061, "p_value": 0.003, "status": "ok",
        "groups": [{"group": "female", "size": 50, "stability": 0.812},
                   {"group": "male", "size": 50, "stability": 0.873}]}


def ctx(day: int = 0, **kw) -> AlertContext:  # type: ignore[no-untyped-def]
    start = T0 + timedelta(days=day)
    base = dict(monitor="credit", window_start=start, window_end=start + timedelta(days=1), model_version="v2",
                report_base_url="https://reports.example.com/fairmon", evidence=EVIDENCE, gesd=GESD)
    base.update(kw)
    return AlertContext(**base)  # type: ignore[arg-type]


def rumie_finding(day: int = 0, *, status: str = "open", since_day: int | None = None) -> Finding:
    return Finding(
        kind="rumie_rise", metric="rumie_honest_dscore", group="", severity="critical", value=0.187,
        monitor="credit", window_start=T0 + timedelta(days=day), window_end=T0 + timedelta(days=day + 1),
        message="rumie_honest_dscore rose to 0.187 from a baseline of 0.052 (the last 14 windows; change +0.135, p = 4e-05)",
        baseline=0.052, numbers={"p_value": 4e-5, "history": 14}, status=status,  # type: ignore[arg-type]
        notify=True, since=T0 + timedelta(days=since_day if since_day is not None else day),
    )


def dp_finding(day: int = 0) -> Finding:
    return Finding(
        kind="ci_outside_range", metric="dp_difference", group="sex", severity="warning", value=0.163,
        ci=(0.131, 0.195), monitor="credit", window_start=T0 + timedelta(days=day),
        message="dp_difference for sex is 0.163 (95% CI 0.131–0.195), the whole interval above the allowed maximum 0.1",
        numbers={"allowed_low": 0.0, "allowed_high": 0.1}, notify=True, since=T0 + timedelta(days=day),
    )
