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
debt ratio, employment and education only. The labels in the windows never change after the drift:
the world is stationary, only the model changes.

*Models and the knob.* The production model is a logistic regression on the
:class:`~fairmon.schema.FeatureSchema`-encoded features, trained on the first ``train_windows``
windows. At ``drift_window`` a **retrained** version takes over, trained on the ``train_windows``
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

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from fairmon.errors import DatasetError, MethodError
from fairmon.rules import parse_rules

if TYPE_CHECKING:
    from fairmon.registry import Model, Registry, SnapshotInfo

__all__ = [
    "COLUMNS",
    "FEATURE_COLUMNS",
    "SENSITIVE_COLUMNS",
    "PLANTED_ATTRIBUTES",
    "DECOY_COLUMNS",
    "LABEL_COLUMN",
    "PLANTED_RULE",
    "PLANTED_QUERY",
    "StreamWindow",
    "SyntheticStream",
    "DeployedModels",
    "generate_stream",
    "planted_membership",
    "evaluate_rule",
    "deploy_models",
    "decision_dscore",
    "write_partitions",
    "read_partition",
]

FEATURE_COLUMNS: tuple[str, ...] = (
    "age",
    "region",
    "income",
    "debt_ratio",
    "employment_years",
    "education",
    "student",
    "account_years",
    "branch",
)
SENSITIVE_COLUMNS: tuple[str, ...] = ("sex", "race")
PLANTED_ATTRIBUTES: tuple[str, ...] = ("age", "region")
DECOY_COLUMNS: tuple[str, ...] = ("student", "account_years", "branch")
LABEL_COLUMN = "repaid"
ID_COLUMN = "applicant_id"
TIME_COLUMN = "event_time"
COLUMNS: tuple[str, ...] = (ID_COLUMN, TIME_COLUMN, *FEATURE_COLUMNS, *SENSITIVE_COLUMNS, LABEL_COLUMN)
CATEGORICAL_COLUMNS: tuple[str, ...] = ("region", "education", "student", "branch", "sex", "race")

PLANTED_AGE_MAX = 30
PLANTED_REGION = "north"
PLANTED_RULE = f"age <= {PLANTED_AGE_MAX} OR region = {PLANTED_REGION}"
#: the same rule as a ``DataFrame.query`` expression
PLANTED_QUERY = f"age <= {PLANTED_AGE_MAX} or region == '{PLANTED_REGION}'"

REGIONS = ("north", "south", "east", "west")
REGION_P = (0.32, 0.26, 0.22, 0.20)
BRANCHES = ("harbor", "midtown", "riverside", "uptown", "online")  # main branch of each region, then online
EDUCATION = ("primary", "secondary", "bachelor", "master")
EDUCATION_P = (0.15, 0.45, 0.28, 0.12)
RACES = ("white", "black", "hispanic", "asian", "other")
RACE_P = (0.60, 0.13, 0.18, 0.06, 0.03)

ERR_RULE = "cannot evaluate rule {rule!r}: {problem}"
ERR_ARGS = "invalid stream arguments: {problem}"
ERR_CALIBRATION = (
    "could not calibrate the label disadvantage to a decision DScore of {target:.3f} "
    "(reachable range {low:.3f}..{high:.3f}); choose a smaller base_dscore/dscore_rise"
)


@dataclass(frozen=True)
class StreamWindow:
    """One daily window: ``[start, end)``, its rows, and the ground-truth planted-group membership."""

    index: int
    start: datetime
    end: datetime
    frame: pd.DataFrame
    membership: np.ndarray

    @property
    def day(self) -> str:
        return self.start.strftime("%Y-%m-%d")


@dataclass(frozen=True)
class SyntheticStream:
    """The generated windows plus the planted rule and column roles (see the module contract)."""

    windows: list[StreamWindow]
    planted_rule: str
    planted_query: str
    planted_attributes: tuple[str, ...]
    decoy_columns: tuple[str, ...]
    feature_columns: tuple[str, ...]
    sensitive_columns: tuple[str, ...]
    label_column: str
    id_column: str
    time_column: str
    favorable_label: int
    drift_window: int
    base_dscore: float
    dscore_rise: float
    random_state: int
    train_windows: int
    #: calibrated disadvantage of the planted group in the label process (logit units)
    delta_base: float
    #: pooled decision DScore of the production model on windows < drift_window at calibration
    calibrated_base_dscore: float | None
    tolerance: float
    start: datetime
    _uniforms: tuple[np.ndarray, ...] = field(repr=False, compare=False, default=())

    def frame(self, windows: Sequence[int] | None = None) -> pd.DataFrame:
        """Rows of the chosen windows (all by default) concatenated, with a ``window`` column."""
        idx = range(len(self.windows)) if windows is None else windows
        parts = [self.windows[i].frame.assign(window=i) for i in idx]
        return pd.concat(parts, ignore_index=True)

    def membership(self, windows: Sequence[int] | None = None) -> np.ndarray:
        """Ground-truth planted-group membership of the chosen windows, concatenated."""
        idx = range(len(self.windows)) if windows is None else windows
        return np.concatenate([self.windows[i].membership for i in idx])

    def label_uniforms(self, windows: Sequence[int]) -> np.ndarray:
        """The uniforms the labels were drawn from (common random numbers for relabelling)."""
        return np.concatenate([self._uniforms[i] for i in windows])


# ---------------------------------------------------------------------- generation
def _sigmoid(x: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-x))


def planted_membership(frame: pd.DataFrame) -> np.ndarray:
    """Ground-truth membership of the planted group (:data:`PLANTED_RULE`) for raw rows."""
    return (
        (frame["age"].to_numpy() <= PLANTED_AGE_MAX) | (frame["region"].to_numpy() == PLANTED_REGION)
    ).astype(bool)


def _base_logit(frame: pd.DataFrame) -> np.ndarray:
    """Creditworthiness score f(x) of the label model (independent of the planted attributes)."""
    edu = frame["education"].map({e: i for i, e in enumerate(EDUCATION)}).to_numpy(dtype=float)
    return (
        0.6
        + 1.1 * (np.log(frame["income"].to_numpy()) - 3.8)
        - 4.0 * (frame["debt_ratio"].to_numpy() - 0.3)
        + 0.05 * np.minimum(frame["employment_years"].to_numpy(), 20.0)
        + 0.25 * (edu - 1.0)
    )


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


def _labels(frame: pd.DataFrame, membership: np.ndarray, u: np.ndarray, delta: float) -> np.ndarray:
    p = _sigmoid(_base_logit(frame) - delta * membership.astype(float))
    return (u < p).astype(np.int64)


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


# ---------------------------------------------------------------------- rules
def evaluate_rule(rule: str, frame: pd.DataFrame) -> np.ndarray:
    """Evaluate a rule in the planted-rule syntax (:func:`fairmon.rules.parse_rules`) on raw rows.

    >>> df = pd.DataFrame({"age": [20, 40], "region": ["south", "north"]})
    >>> evaluate_rule("age <= 30 OR region = north", df).tolist()
    [True, True]
    """
    try:
        return parse_rules(rule).membership(frame)
    except MethodError as exc:
        raise DatasetError(ERR_RULE.format(rule=rule, problem=str(exc))) from exc


# ---------------------------------------------------------------------- models
def decision_dscore(decisions: np.ndarray, membership: np.ndarray) -> float:
    """DScore = P(fav | not member) - P(fav | member) of 0/1 decisions (fav = 1).

    >>> decision_dscore(np.array([1, 1, 0, 1]), np.array([False, False, True, True]))
    0.5
    """
    d = np.asarray(decisions, dtype=float)
    m = np.asarray(membership, dtype=bool)
    if m.all() or not m.any():
        raise DatasetError("DScore needs members and non-members")
    return float(d[~m].mean() - d[m].mean())


@dataclass(frozen=True)
class DeployedModels:
    """The registered production and retrained versions and their measured decision DScores."""

    registry_uri: str
    name: str
    production: SnapshotInfo
    retrained: SnapshotInfo
    delta_base: float
    delta_drift: float
    dscore_before: float
    dscore_after: float
    window_dscores: list[float]
    window_versions: list[str]
    models: dict[str, Model] = field(default_factory=dict, repr=False, compare=False)

    def version_for_window(self, index: int) -> str:
        """Version id serving window ``index`` (the production one before the drift)."""
        return self.window_versions[index]

    def model_for_window(self, index: int) -> Model:
        """The model version serving window ``index`` (loaded from the registry once, then kept)."""
        version = self.window_versions[index]
        if version not in self.models:
            from fairmon.registry import Registry

            self.models[version] = Registry(self.registry_uri).load(self.name, version)
        return self.models[version]

    def decisions(self, window: StreamWindow) -> np.ndarray:
        """0/1 decisions (1 = favorable) of the serving model on a window's rows."""
        return self.model_for_window(window.index).predict(window.frame[list(FEATURE_COLUMNS)])


def _fit_schema(frame: pd.DataFrame) -> Any:
    from fairmon.schema import FeatureSchema

    return FeatureSchema.fit(
        frame[list(FEATURE_COLUMNS)], categorical=("region", "education", "student", "branch")
    )


def _fit_model(frame: pd.DataFrame, labels: np.ndarray, schema: Any) -> Model:
    from sklearn.linear_model import LogisticRegression

    from fairmon.registry import Model

    Z = schema.transform(frame[list(FEATURE_COLUMNS)])
    est = LogisticRegression(C=1.0, solver="newton-cg", max_iter=500).fit(Z, labels)
    return Model(est, schema, framework="sklearn", input="encoded")


def _calibrate(
    train: pd.DataFrame,
    train_member: np.ndarray,
    train_u: np.ndarray,
    target_Z: np.ndarray,
    target_member: np.ndarray,
    schema: Any,
    target: float,
    tolerance: float,
    max_iter: int = 30,
) -> tuple[float, Model, float]:
    """Find the label disadvantage ``delta`` whose trained model's decision DScore hits ``target``.

    Labels are redrawn from the same uniforms for every ``delta`` (common random numbers), so the
    decision DScore is monotone in ``delta`` up to solver noise; an Illinois regula-falsi search on
    ``[-1, 2]`` logits (widened once to ``[-4, 6]`` when needed) finds it in a handful of fits. Returns ``(delta, model, dscore)``.
    """

    def run(delta: float) -> tuple[float, Model]:
        model = _fit_model(train, _labels(train, train_member, train_u, delta), schema)
        return decision_dscore(model.predict_encoded(target_Z), target_member), model

    lo, hi = -1.0, 2.0  # typical targets (DScore 0..0.3) need delta in about [-0.5, 1.2]
    d_lo, m_lo = run(lo)
    d_hi, m_hi = run(hi)
    if target < d_lo:  # widen to the left once
        hi, d_hi, m_hi = lo, d_lo, m_lo
        lo = -4.0
        d_lo, m_lo = run(lo)
    elif target > d_hi:  # widen to the right once
        lo, d_lo, m_lo = hi, d_hi, m_hi
        hi = 6.0
        d_hi, m_hi = run(hi)
    if not d_lo - tolerance <= target <= d_hi + tolerance:
        raise DatasetError(ERR_CALIBRATION.format(target=target, low=d_lo, high=d_hi))
    best = (lo, m_lo, d_lo) if abs(d_lo - target) <= abs(d_hi - target) else (hi, m_hi, d_hi)
    f_lo, f_hi, side = d_lo - target, d_hi - target, 0
    for _ in range(max_iter):
        if abs(best[2] - target) <= tolerance:
            break
        # Illinois variant of regula falsi: secant steps that keep the root bracketed
        mid = lo - f_lo * (hi - lo) / (f_hi - f_lo) if f_hi != f_lo else 0.5 * (lo + hi)
        d_mid, m_mid = run(mid)
        if abs(d_mid - target) < abs(best[2] - target):
            best = (mid, m_mid, d_mid)
        f_mid = d_mid - target
        if f_mid < 0:
            lo, f_lo = mid, f_mid
            if side == -1:
                f_hi /= 2.0
            side = -1
        else:
            hi, f_hi = mid, f_mid
            if side == 1:
                f_lo /= 2.0
            side = 1
    return best


def deploy_models(
    stream: SyntheticStream,
    registry: Registry | str,
    *,
    name: str = "demo",
    set_valid_from: bool = True,
) -> DeployedModels:
    """Train and register the production model and the retrained (drifted) version.

    The production version (``v1`` in an empty registry) is a logistic regression on the
    schema-encoded features of windows ``[0, train_windows)`` with their labels (calibrated in
    :func:`generate_stream` to decision DScore ``base_dscore`` on windows ``< drift_window``). The
    retrained version is trained on windows ``[drift_window - train_windows, drift_window)`` whose
    labels were redrawn with a larger disadvantage for the planted group, calibrated so that its
    decisions on windows ``>= drift_window`` have DScore ``base_dscore + dscore_rise``. Both get
    status ``production`` (the retrained one last, so it becomes ``latest``) and, with
    ``set_valid_from``, ``valid_from`` = the start of the first window each serves, so
    ``registry.resolve(name, "latest", as_of=window.start)`` returns the version live in a window.

    Example
    -------
    >>> s = generate_stream(n_windows=4, rows_per_window=2000, drift_window=2)
    >>> dep = deploy_models(s, "memory://doctest-stream")
    >>> abs(dep.dscore_before - 0.05) <= 0.03 and abs(dep.dscore_after - 0.20) <= 0.03
    True
    """
    from fairmon.registry import Registry

    reg = registry if isinstance(registry, Registry) else Registry(registry)
    n = len(stream.windows)
    dw, tw = stream.drift_window, stream.train_windows
    if dw >= n:
        raise DatasetError(
            ERR_ARGS.format(problem="deploy_models needs at least one window after drift_window")
        )
    train_a = list(range(tw))
    train_b = list(range(dw - tw, dw))
    frame_a = stream.frame(train_a)
    frame_b = stream.frame(train_b)
    schema = _fit_schema(frame_a)
    before, after = list(range(dw)), list(range(dw, n))
    model_a = _fit_model(frame_a, frame_a[LABEL_COLUMN].to_numpy(), schema)
    ds_a = decision_dscore(
        model_a.predict_encoded(schema.transform(stream.frame(before)[list(FEATURE_COLUMNS)])),
        stream.membership(before),
    )
    delta_b, model_b, ds_b = _calibrate(
        frame_b,
        stream.membership(train_b),
        stream.label_uniforms(train_b),
        schema.transform(stream.frame(after)[list(FEATURE_COLUMNS)]),
        stream.membership(after),
        schema,
        stream.base_dscore + stream.dscore_rise,
        stream.tolerance,
    )
    info_a = reg.register(
        model_a,
        name=name,
        metrics={"decision_dscore_planted": ds_a, "label_delta": stream.delta_base, "train_windows": train_a},
        valid_from=stream.windows[0].start if set_valid_from else None,
        description=f"production model trained on windows {train_a[0]}..{train_a[-1]}",
    )
    info_b = reg.register(
        model_b,
        name=name,
        metrics={"decision_dscore_planted": ds_b, "label_delta": delta_b, "train_windows": train_b},
        valid_from=stream.windows[dw].start if set_valid_from else None,
        description=f"retrained on windows {train_b[0]}..{train_b[-1]} with labels disfavoring the planted group",
    )
    window_dscores = []
    for i, w in enumerate(stream.windows):
        m = model_a if i < dw else model_b
        window_dscores.append(decision_dscore(m.predict(w.frame[list(FEATURE_COLUMNS)]), w.membership))
    return DeployedModels(
        registry_uri=reg.uri,
        name=name,
        production=info_a,
        retrained=info_b,
        delta_base=stream.delta_base,
        delta_drift=delta_b,
        dscore_before=ds_a,
        dscore_after=ds_b,
        window_dscores=window_dscores,
        window_versions=[info_a.version if i < dw else info_b.version for i in range(n)],
        models={info_a.version: model_a, info_b.version: model_b},
    )


# ---------------------------------------------------------------------- files
def write_partitions(
    stream: SyntheticStream,
    folder: str | Path,
    *,
    deployed: DeployedModels | None = None,
    reference_windows: int = 2,
    decision_column: str = "decision",
    score_column: str = "score",
) -> dict[str, Any]:
    """Write one CSV per day (``{folder}/{YYYY-MM-DD}.csv``) plus reference data and a manifest.

    With ``deployed`` the rows also carry the logged ``decision`` (0/1) and ``score`` (P(class 1)) of
    the model version serving that window. ``{folder}/reference.csv`` holds the first
    ``reference_windows`` windows (the production model's training data) for validation suites, and
    ``{folder}/stream.json`` the planted rule, column roles and per-file row counts. Returns the
    manifest. A file-pattern data source reads ``{folder}/{start:%Y-%m-%d}.csv``.
    """
    out = Path(folder)
    out.mkdir(parents=True, exist_ok=True)
    files: dict[str, dict[str, Any]] = {}
    for w in stream.windows:
        frame = w.frame.copy()
        if deployed is not None:
            model = deployed.model_for_window(w.index)
            proba = model.predict_proba(frame[list(FEATURE_COLUMNS)])[:, 1]
            frame[decision_column] = (proba >= model.threshold).astype(np.int64)
            frame[score_column] = np.round(proba, 6)
        path = out / f"{w.day}.csv"
        frame.to_csv(path, index=False, date_format="%Y-%m-%dT%H:%M:%S")
        files[w.day] = {"path": str(path), "rows": len(frame), "window": w.index}
    ref = stream.frame(list(range(min(reference_windows, len(stream.windows))))).drop(columns=["window"])
    ref_path = out / "reference.csv"
    ref.to_csv(ref_path, index=False, date_format="%Y-%m-%dT%H:%M:%S")
    manifest: dict[str, Any] = {
        "pattern": str(out / "{start:%Y-%m-%d}.csv"),
        "reference": str(ref_path),
        "planted_rule": stream.planted_rule,
        "planted_query": stream.planted_query,
        "planted_attributes": list(stream.planted_attributes),
        "decoy_columns": list(stream.decoy_columns),
        "feature_columns": list(stream.feature_columns),
        "sensitive_columns": list(stream.sensitive_columns),
        "label_column": stream.label_column,
        "decision_column": decision_column if deployed is not None else None,
        "score_column": score_column if deployed is not None else None,
        "drift_window": stream.drift_window,
        "files": files,
    }
    if deployed is not None:
        manifest["model"] = {
            "registry_uri": deployed.registry_uri,
            "name": deployed.name,
            "window_versions": deployed.window_versions,
            "dscore_before": deployed.dscore_before,
            "dscore_after": deployed.dscore_after,
        }
    (out / "stream.json").write_text(json.dumps(manifest, indent=2))
    return manifest


def read_partition(path: str | Path) -> pd.DataFrame:
    """Read a partition written by :func:`write_partitions` with the stream's dtypes restored."""
    frame = pd.read_csv(path, parse_dates=[TIME_COLUMN])
    for c in CATEGORICAL_COLUMNS:
        if c in frame.columns:
            frame[c] = frame[c].astype(object)
    return frame
