"""Seed-data builders shared by the store tests (deterministic, small)."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from typing import Any

T0 = datetime(2026, 1, 1, tzinfo=UTC)
DAY = timedelta(days=1)


def day(i: int) -> datetime:
    """Start of daily window ``i`` (window 0 = 2026-01-01 UTC)."""
    return T0 + i * DAY


def window(
    monitor: str,
    i: int,
    *,
    dp: float = 0.1,
    sel_f: float = 0.4,
    status: str = "succeeded",
    extra: bool = True,
):  # type: ignore[no-untyped-def]
    """A realistic window: outcome metrics, RUMIE evidence, GESD + OpenXAI rows, one finding."""
    from fairmon.store import (
        EvidenceRecord,
        ExplanationMetricRecord,
        FindingRecord,
        MetricRecord,
        RunRecord,
        WindowRecords,
    )

    run = RunRecord(
        monitor,
        day(i),
        day(i + 1),
        status=status,  # type: ignore[arg-type]
        model_version="v1",
        spec_fingerprint="f" * 64,
        n_rows=5000,
        timings={"rumie": 1.5, "gesd": 2.0},
    )
    metrics = [
        MetricRecord("dp_difference", dp, attribute="sex", ci_low=dp - 0.02, ci_high=dp + 0.02, n=5000),
        MetricRecord(
            "selection_rate",
            sel_f,
            attribute="sex",
            group="Female",
            ci_low=sel_f - 0.03,
            ci_high=sel_f + 0.03,
            n=2400,
        ),
        MetricRecord("selection_rate", sel_f + dp, attribute="sex", group="Male", n=2600),
    ]
    if extra:
        metrics.append(MetricRecord("eo_difference", float("nan"), attribute="sex", n=5000, n_nan=5000))
    evidence = [
        EvidenceRecord(
            "ie-dt",
            0.2 + dp,
            honest_dscore=0.15 + dp,
            p_value=0.01,
            key_attributes=("age", "priors_count"),
            rules=[{"any": ["age <= 25", "priors_count > 3"]}],
            rules_text="age <= 25 OR priors_count > 3",
            tree={"feature": "age", "threshold": 25.0},
            group_size=2500,
            group_fraction=0.5,
            p_fav_in=0.3,
            p_fav_out=0.5 + dp,
            n=5000,
        )
    ]
    expl = [
        ExplanationMetricRecord(
            "gesd",
            "gesd",
            0.02,
            explainer="shap+lime",
            p_value=0.2,
            n=100,
            group_stability={"Female": 0.80, "Male": 0.82},
        ),
        ExplanationMetricRecord("openxai", "PGI", 0.11, explainer="kernelshap", group="Female", n=50),
        ExplanationMetricRecord("openxai", "PGI", 0.13, explainer="kernelshap", group="Male", n=50),
    ]
    findings = [
        FindingRecord(
            "ci_outside_range",
            "dp_difference",
            "warning",
            status="pending",
            group="sex",
            value=dp,
            ci_low=dp - 0.02,
            ci_high=dp + 0.02,
            numbers={"allowed": [0, 0.1]},
            message="DP above range",
        )
    ]
    return WindowRecords(run, metrics=metrics, evidence=evidence, explanation_metrics=expl, findings=findings)


@contextmanager
def seeded_database(pg_admin_url: str, seed: Callable[[Any], object]) -> Iterator[Any]:
    """A :class:`~fairmon.store.Store` on a throw-away database at the migration head, filled by
    ``seed(store)``; the database is dropped afterwards (the read-only modules' one seeding)."""
    import sqlalchemy as sa

    from fairmon.store import Store, get_engine, upgrade

    name = f"fairmon_t_{uuid.uuid4().hex[:12]}"
    admin = sa.create_engine(pg_admin_url, isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        conn.execute(sa.text(f'CREATE DATABASE "{name}"'))
    engine = get_engine(sa.make_url(pg_admin_url).set(database=name))
    try:
        upgrade(engine)
        store = Store(engine)
        seed(store)
        yield store
    finally:
        engine.dispose()
        with admin.connect() as conn:
            conn.execute(sa.text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        admin.dispose()
