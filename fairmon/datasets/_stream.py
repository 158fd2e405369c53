"""Synthetic production stream with a planted, drifting discrimination — the demo's and tests' data.

Contract (what the generator guarantees; tests hold it to this)
---------------------------------------------------------------
*Rows.* ``n_windows`` daily windows of ``rows_per_window`` loan applications each. Window ``i`` covers
``[start + i days, start + i + 1 days)``; every row has an ``event_time`` inside its window and a
unique ``applicant_id``. Columns (:data:`COLUMNS`):

=====================  ===========  ==========================================================
column                 kind         role
=====================  ===========  ==========================================================
``applicant_id``       int          row id (not a feature)
``event_time``         datetime     timestamp inside the window, naive UTC (not a feature)
``age``                int          feature, **planted** attribute (18..80)
``region``             category     feature, **planted** attribute (north/south/east/west)
``income``             float        feature (thousands per year)
``debt_ratio``         float        feature (0..1)
``employment_years``   float        feature
``education``          category     feature (primary/secondary/bachelor/master)
``student``            category     feature, **decoy** correlated with ``age`` (yes/no)
``account_years``      float        feature, **decoy** correlated with ``age``
``branch``             category     feature, **decoy** correlated with ``region``
``sex``                category     declared sensitive attribute (female/male), not a feature
``race``               category     declared sensitive attribute, not a feature
``repaid``             int 0/1      label (true outcome; 1 = repaid = favorable)
=====================  ===========  ==========================================================

*Planted group.* :data:`PLANTED_RULE` = ``age <= 30 OR region = north`` (two attributes, about 47%
of the rows, so RUMIE's default size bounds 0.45..0.55 can recover it). Neither planted attribute is a
declared sensitive attribute; the decoys are correlated with the planted attributes but do not define
the group, so a miner has to pick ``age``/``region`` and not ``student``/``account_years``/``branch``.
``StreamWindow.membership`` is the ground truth (the rule evaluated on the frame).

*Labels.* ``repaid ~ Bernoulli(sigmoid(f(x) - delta_base * member))``, where ``f`` depends on income,
debt ratio and education only: not on the planted attributes, nor on employment years, which follow
age (with them in ``f`` the young are legitimately less creditworthy, and the most discriminated group
by DScore mixes that gradient into the planted one). The labels in the windows never change after
the drift: the world is stationary, only the model changes.

*Models and the knob.* The production model is a logistic regression on the
:class:`~fairmon.schema.FeatureSchema`-encoded features plus one indicator per scorecard age band
(up to 25, 26-30, 31-40, 41-50, 51-60, over 60; ``AGE_BANDS`` in ``_calibration``), trained on the
first ``train_windows`` windows; with the bands a model trained on labels that disfavour
``age <= 30`` learns that step instead of a slope in age, so the planted group is what the model
does and the demo's RUMIE rules can name it. At ``drift_window`` a **retrained** version takes over, trained on the ``train_windows``
windows before the drift with labels redrawn (same uniforms) with a larger disadvantage
``delta_drift`` for the planted group. The knob is in DScore units of the *decisions* the monitor
sees, DScore = P(fav | not member) - P(fav | member), fav = predicted class 1:
:func:`generate_stream` calibrates ``delta_base`` so that the production model's decisions on windows
``< drift_window`` have pooled DScore ``base_dscore``, and :func:`deploy_models` calibrates
``delta_drift`` so that the retrained model's decisions on windows ``>= drift_window`` have pooled
DScore ``base_dscore + dscore_rise`` (to within ``tolerance``, default 0.005; the acceptance band is
±0.03). Per-window values scatter around these by sampling noise (about ±0.02 at 5,000 rows).
:func:`deploy_models` registers both versions in a :class:`~fairmon.registry.Registry`;
:func:`write_partitions` writes one CSV per day (optionally with the serving model's logged decision
and score), a reference file and a manifest.

Everything is deterministic for a ``random_state``; window ``i`` depends only on ``(random_state, i)``.

Example
-------
>>> s = generate_stream(n_windows=3, rows_per_window=500, drift_window=2)
>>> s.planted_rule
'age <= 30 OR region = north'
>>> len(s.windows), len(s.windows[0].frame)
(3, 500)
"""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta

import numpy as np
import pandas as pd

from fairmon.datasets._calibration import _calibrate, _fit_schema, _labels
from fairmon.datasets._stream_spec import (
    BRANCHES,
    DECOY_COLUMNS,
    EDUCATION,
    EDUCATION_P,
    ERR_ARGS,
    FEATURE_COLUMNS,
    ID_COLUMN,
    LABEL_COLUMN,
    PLANTED_ATTRIBUTES,
    PLANTED_QUERY,
    PLANTED_RULE,
    RACE_P,
    RACES,
    REGION_P,
    REGIONS,
    SENSITIVE_COLUMNS,
    TIME_COLUMN,
    StreamWindow,
    SyntheticStream,
    planted_membership,
)
from fairmon.errors import DatasetError

__all__ = ["generate_stream"]


# ---------------------------------------------------------------------- generation
def _window_rows(index: int, n: int, start: datetime, random_state: int) -> tuple[pd.DataFrame, np.ndarray]:
    """Features, sensitive attributes, event times; returns the frame and the label uniforms."""
    rng = np.random.default_rng([int(random_state), int(index)])
    age = np.clip(np.rint(rng.normal(41.0, 13.0, n)), 18, 80).astype(np.int64)
    region = rng.choice(np.array(REGIONS, dtype=object), size=n, p=REGION_P)
    # decoys: branch follows region 70% of the time; student and account age follow age
    main_branch = np.array([BRANCHES[REGIONS.index(r)] for r in region], dtype=object)
    other_branch = rng.choice(np.array(BRANCHES, dtype=object), size=n)
    branch = np.where(rng.random(n) < 0.70, main_branch, other_branch)
    p_student = np.where(age <= 25, 0.55, np.where(age <= 30, 0.25, 0.03))
    student = np.where(rng.random(n) < p_student, "yes", "no").astype(object)
    account_years = np.round(np.clip(0.45 * (age - 18) + rng.normal(0.0, 3.0, n), 0.0, None), 1)
    education = rng.choice(np.array(EDUCATION, dtype=object), size=n, p=EDUCATION_P)
    edu_level = np.array([EDUCATION.index(e) for e in education], dtype=float)
    income = np.round(np.exp(rng.normal(3.55 + 0.18 * edu_level + 0.004 * (age - 41), 0.45, n)), 1)
    debt_ratio = np.round(rng.beta(2.0, 5.0, n), 3)
    employment_years = np.round(np.clip((age - 18) * rng.uniform(0.2, 0.9, n), 0.0, None), 1)
    sex = rng.choice(np.array(("female", "male"), dtype=object), size=n)
    race = rng.choice(np.array(RACES, dtype=object), size=n, p=RACE_P)
    seconds = np.sort(rng.integers(0, 86_400, n))
    event_time = pd.to_datetime(start.replace(tzinfo=None)) + pd.to_timedelta(seconds, unit="s")
    u_label = rng.random(n)
    frame = pd.DataFrame(
        {
            ID_COLUMN: np.arange(index * n, index * n + n, dtype=np.int64),
            TIME_COLUMN: event_time,
            "age": age,
            "region": region,
            "income": income,
            "debt_ratio": debt_ratio,
            "employment_years": employment_years,
            "education": education,
            "student": student,
            "account_years": account_years,
            "branch": branch,
            "sex": sex,
            "race": race,
        }
    )
    return frame, u_label


def generate_stream(
    *,
    n_windows: int = 10,
    rows_per_window: int = 5000,
    drift_window: int = 6,
    base_dscore: float = 0.05,
    dscore_rise: float = 0.15,
    start: str | date | datetime = "2026-01-01",
    random_state: int = 0,
    train_windows: int = 2,
    tolerance: float = 0.005,
    delta_base: float | None = None,
) -> SyntheticStream:
    """Generate the windows (features, sensitive attributes, labels, ground-truth membership).

    Parameters
    ----------
    n_windows, rows_per_window
        Number of daily windows and rows per window.
    drift_window
        Index of the first window served by the retrained (more discriminating) model.
    base_dscore, dscore_rise
        Target decision DScore before the drift and its increase from ``drift_window`` on. The label
        disadvantage ``delta_base`` of the planted group is calibrated here so that the production
        model (trained on the first ``train_windows`` windows' labels) has decision DScore
        ``base_dscore`` on windows ``< drift_window``; :func:`deploy_models` calibrates the retrained
        version to ``base_dscore + dscore_rise``.
    start
        Start of window 0 (UTC midnight of that day).
    random_state
        Seed; window ``i`` uses the seed sequence ``(random_state, i)``.
    train_windows
        Windows the production model is trained on (the first ones).
    tolerance
        Calibration stops when the decision DScore is within this distance of the target.
    delta_base
        Skip the calibration and use this label disadvantage (logit units) instead — for callers
        that only need data fast (about 0.1 s instead of 1-2 s); ``base_dscore`` is then not
        guaranteed.

    Examples
    --------
    >>> s = generate_stream(n_windows=2, rows_per_window=500, drift_window=1, train_windows=1)
    >>> bool((s.windows[0].membership == planted_membership(s.windows[0].frame)).all())
    True
    """
    if n_windows < 1 or rows_per_window < 10:
        raise DatasetError(ERR_ARGS.format(problem="n_windows >= 1 and rows_per_window >= 10 are required"))
    if not 1 <= drift_window <= n_windows:
        raise DatasetError(ERR_ARGS.format(problem=f"drift_window must be in [1, n_windows={n_windows}]"))
    if not 1 <= train_windows <= drift_window:
        raise DatasetError(
            ERR_ARGS.format(problem=f"train_windows must be in [1, drift_window={drift_window}]")
        )
    t0 = _as_utc_midnight(start)
    rows, uniforms, members, starts = [], [], [], []
    for i in range(n_windows):
        w_start = t0 + timedelta(days=i)
        frame, u = _window_rows(i, rows_per_window, w_start, random_state)
        rows.append(frame)
        uniforms.append(u)
        members.append(planted_membership(frame))
        starts.append(w_start)
    train = list(range(train_windows))
    before = list(range(drift_window))
    ds_base: float | None = None
    if delta_base is None:
        schema = _fit_schema(pd.concat([rows[i] for i in train], ignore_index=True))
        delta_base, _, ds_base = _calibrate(
            pd.concat([rows[i] for i in train], ignore_index=True),
            np.concatenate([members[i] for i in train]),
            np.concatenate([uniforms[i] for i in train]),
            schema.transform(pd.concat([rows[i] for i in before], ignore_index=True)[list(FEATURE_COLUMNS)]),
            np.concatenate([members[i] for i in before]),
            schema,
            float(base_dscore),
            tolerance,
        )
    windows = []
    for i in range(n_windows):
        rows[i][LABEL_COLUMN] = _labels(rows[i], members[i], uniforms[i], delta_base)
        windows.append(StreamWindow(i, starts[i], starts[i] + timedelta(days=1), rows[i], members[i]))
    return SyntheticStream(
        windows=windows,
        planted_rule=PLANTED_RULE,
        planted_query=PLANTED_QUERY,
        planted_attributes=PLANTED_ATTRIBUTES,
        decoy_columns=DECOY_COLUMNS,
        feature_columns=FEATURE_COLUMNS,
        sensitive_columns=SENSITIVE_COLUMNS,
        label_column=LABEL_COLUMN,
        id_column=ID_COLUMN,
        time_column=TIME_COLUMN,
        favorable_label=1,
        drift_window=drift_window,
        base_dscore=float(base_dscore),
        dscore_rise=float(dscore_rise),
        random_state=int(random_state),
        train_windows=train_windows,
        delta_base=float(delta_base),
        calibrated_base_dscore=ds_base,
        tolerance=float(tolerance),
        start=t0,
        _uniforms=tuple(uniforms),
    )


def _as_utc_midnight(value: str | date | datetime) -> datetime:
    if isinstance(value, str):
        value = datetime.fromisoformat(value)
    if isinstance(value, datetime):
        value = value if value.tzinfo else value.replace(tzinfo=UTC)
        value = value.astimezone(UTC)
        return value.replace(hour=0, minute=0, second=0, microsecond=0)
    return datetime(value.year, value.month, value.day, tzinfo=UTC)
