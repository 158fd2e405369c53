"""Registering a scikit-learn model trained outside fairmon, with a check that fairmon scores it right.

Why a check: :class:`~fairmon.registry.Model` must know whether the estimator takes the raw columns
(a ``Pipeline`` with its own encoders, ``input="raw"``) or fairmon's encoded matrix
(``input="encoded"``). Registered with the wrong mode, a raw pipeline is fed standardised one-hot
columns and still returns probabilities: nothing fails, the decisions are just wrong (issue 22: 47.8 %
agreement with ``pipeline.predict``). So registration compares fairmon's decisions with the estimator's
own ``predict`` on the reference rows and refuses above a tolerance, naming the agreement rate; the
check (rate, rows, input mode) is stored in the version's ``metrics["registration_check"]``.

The estimator's own ``predict`` is called the way its fit recorded (a ``Pipeline`` or an estimator
with ``feature_names_in_`` on the raw columns, else on fairmon's encoded matrix), so the reference
answer never depends on the mode under test. Only scikit-learn-style estimators are handled here:
torch modules trained elsewhere go through :mod:`fairmon.registry._torch_import` (state_dict + builder),
fairmon's own through :func:`fairmon.registry.build_mlp` and ``Registry.register``; models in an MLflow
registry are imported through this same check by :mod:`fairmon.registry.mlflow`.

Trust: :func:`load_estimator` unpickles a user's file, and unpickling runs code. It is only called on a
path the user passed on the command line (``fairmon model register PATH``), never on a path from a
spec or a registry (the registry verifies sha256 before it unpickles, see
:mod:`fairmon.registry.registry`).

Examples
--------
>>> import pandas as pd
>>> from sklearn.compose import ColumnTransformer
>>> from sklearn.linear_model import LogisticRegression
>>> from sklearn.pipeline import make_pipeline
>>> from sklearn.preprocessing import OneHotEncoder, StandardScaler
>>> ref = pd.DataFrame({"x": [0.0, 1.0, 2.0, 3.0] * 5, "g": ["a", "b"] * 10, "y": [0, 0, 1, 1] * 5})
>>> pre = ColumnTransformer([("num", StandardScaler(), ["x"]), ("cat", OneHotEncoder(), ["g"])])
>>> pipe = make_pipeline(pre, LogisticRegression()).fit(ref[["x", "g"]], ref["y"])
>>> detect_input(pipe)
'raw'
>>> info, check = register_estimator(pipe, registry=Registry("memory://doctest-import"), name="toy",
...                                  reference=ref, label="y")
>>> info.version, check.input, check.agreement, check.rows
('v1', 'raw', 1.0, 20)
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Literal

import numpy as np
import pandas as pd

from fairmon.errors import SchemaError, SnapshotError
from fairmon.registry.model import Model
from fairmon.registry.registry import Registry, SnapshotInfo, Status
from fairmon.schema import FeatureSchema

__all__ = [
    "RegistrationCheck",
    "check_agreement",
    "detect_input",
    "load_estimator",
    "model_features",
    "register_estimator",
    "ERR_DISAGREE",
    "ERR_DISAGREE_BOTH",
    "ERR_LOAD",
    "ERR_NOT_BINARY",
    "ERR_NO_PREDICT",
    "ERR_FEATURES_MISSING",
    "ERR_ENCODED_WIDTH",
]

InputMode = Literal["raw", "encoded"]

ERR_LOAD = "cannot load a model from {path!r}: {error}"
ERR_NO_PREDICT = "{cls} has no predict_proba and predict; fairmon monitors scikit-learn-style binary classifiers"
ERR_NOT_BINARY = "fairmon monitors binary classifiers; {cls} has classes {classes}"
ERR_FEATURES_MISSING = "the reference data has no column(s) {missing} that the model takes (columns: {columns})"
ERR_ENCODED_WIDTH = (
    "the model takes {n_in} input columns, but fairmon's encoding of the features {features} has "
    "{n_enc}; pass the model's raw input columns with --features (or --input raw for a pipeline)"
)
ERR_DISAGREE = (
    "fairmon's predictions agree with the model's own on {rate:.1%} of the {rows} reference rows "
    "(tolerance: {tol:.1%} disagreement); registered input mode {mode!r} looks wrong: try --input {other}"
)
ERR_DISAGREE_BOTH = (
    "fairmon's predictions agree with the model's own on {rate:.1%} of the {rows} reference rows "
    "(tolerance: {tol:.1%} disagreement) with input mode {mode!r}, and on {other_rate:.1%} with "
    "{other!r}; check --features, --threshold (the model's P(class 1) cut-off, 0.5 unless given) and that "
    "the reference data is what the model was trained on"
)


@dataclass(frozen=True)
class RegistrationCheck:
    """fairmon's decisions versus the estimator's own ``predict`` on the reference rows."""

    input: InputMode
    #: what the estimator's own ``predict`` was given: its fit's input (:func:`detect_input`)
    own_input: InputMode
    rows: int
    agreeing: int
    tolerance: float

    @property
    def agreement(self) -> float:
        """Share of reference rows where both decide the same (1.0 on no rows)."""
        return self.agreeing / self.rows if self.rows else 1.0

    @property
    def passed(self) -> bool:
        return 1.0 - self.agreement <= self.tolerance + 1e-12

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "agreement": self.agreement, "compared_with": "estimator.predict"}


def load_estimator(path: str | Path) -> Any:
    """Unpickle a joblib/pickle file the user named (unpickling runs its code: see the module doc)."""
    import joblib  # heavy third-party import, only when registering

    try:
        return joblib.load(Path(path))
    except Exception as exc:  # noqa: BLE001 - any unpickling failure is the user's file, reported once
        raise SnapshotError(ERR_LOAD.format(path=str(path), error=exc)) from exc


def detect_input(estimator: Any) -> InputMode:
    """``"raw"`` for a ``Pipeline`` or an estimator fitted on a DataFrame (``feature_names_in_``),
    else ``"encoded"`` (an estimator fitted on a bare matrix: fairmon's encoded one is assumed)."""
    if type(estimator).__name__ == "Pipeline" or hasattr(estimator, "feature_names_in_"):
        return "raw"
    return "encoded"


def model_features(
    estimator: Any, reference: pd.DataFrame, *, label: str | None, features: list[str] | None = None
) -> list[str]:
    """The model's raw input columns: ``features`` when given, else the estimator's
    ``feature_names_in_``, else every reference column but the label."""
    if features:
        cols = list(features)
    elif hasattr(estimator, "feature_names_in_"):
        cols = [str(c) for c in estimator.feature_names_in_]
    else:
        cols = [str(c) for c in reference.columns if c != label]
    missing = [c for c in cols if c not in reference.columns]
    if missing:
        raise SnapshotError(ERR_FEATURES_MISSING.format(missing=missing, columns=list(reference.columns)))
    return cols


def _own_decisions(estimator: Any, X: Any) -> np.ndarray:
    """The estimator's own ``predict`` as 0/1 (1 = ``classes_[1]``, the class of ``predict_proba[:, 1]``)."""

    pred = np.asarray(estimator.predict(X))
    classes = list(getattr(estimator, "classes_", [0, 1]))
    out: np.ndarray = (pred == classes[1]).astype(int)
    return out


def check_agreement(
    model: Model, estimator: Any, reference: pd.DataFrame, *, tolerance: float = 0.0
) -> RegistrationCheck:
    """Compare :meth:`Model.predict` with the estimator's own ``predict`` on every reference row.

    The estimator's own ``predict`` is called the way its fit says it was trained
    (:func:`detect_input`): on the raw columns for a ``Pipeline`` or an estimator fitted on a
    DataFrame, else on fairmon's encoded matrix. It does not depend on ``model.input``, the mode
    under test.
    """

    X_raw = reference[model.schema.names]
    own_input = detect_input(estimator)
    own = _own_decisions(estimator, X_raw if own_input == "raw" else model.schema.transform(X_raw))
    try:
        ours = model.predict(X_raw)
    except (SnapshotError, SchemaError):  # the data does not fit the schema: say so, not "0 %"
        raise
    except Exception:  # noqa: BLE001 - a model that cannot score in this input mode disagrees everywhere
        return RegistrationCheck(model.input, own_input, len(reference), 0, tolerance)
    return RegistrationCheck(model.input, own_input, len(reference), int(np.sum(own == ours)), tolerance)


def estimator_classes(estimator: Any) -> list[Any] | None:
    """The estimator's ``classes_`` as plain Python values (JSON-able), or None without them.

    >>> from sklearn.dummy import DummyClassifier
    >>> estimator_classes(DummyClassifier().fit([[0], [1]], [1, 2]))
    [1, 2]
    """
    classes = getattr(estimator, "classes_", None)
    return None if classes is None else [c.item() if hasattr(c, "item") else c for c in classes]


def _check_binary(estimator: Any) -> None:
    if not (callable(getattr(estimator, "predict_proba", None)) and callable(getattr(estimator, "predict", None))):
        raise SnapshotError(ERR_NO_PREDICT.format(cls=type(estimator).__name__))
    classes = estimator_classes(estimator)
    if classes is not None and len(classes) != 2:
        raise SnapshotError(ERR_NOT_BINARY.format(cls=type(estimator).__name__, classes=classes))


def _check_encoded_width(estimator: Any, schema: FeatureSchema) -> None:
    """An estimator fitted on a bare matrix is scored on fairmon's encoding: the widths must match."""
    n_in = getattr(estimator, "n_features_in_", None)
    if detect_input(estimator) == "encoded" and n_in is not None and int(n_in) != schema.n_encoded:
        raise SnapshotError(ERR_ENCODED_WIDTH.format(n_in=n_in, features=schema.names, n_enc=schema.n_encoded))


def _wrap(estimator: Any, schema: FeatureSchema, mode: InputMode, threshold: float) -> Model:
    return Model(estimator, schema, framework="sklearn", input=mode, threshold=threshold)


def register_estimator(
    estimator: Any,
    *,
    registry: Registry,
    name: str,
    reference: pd.DataFrame,
    label: str | None = None,
    features: list[str] | None = None,
    input: InputMode | None = None,
    tolerance: float = 0.0,
    threshold: float = 0.5,
    status: Status = "production",
    description: str = "",
    number: int | None = None,
) -> tuple[SnapshotInfo, RegistrationCheck]:
    """Register a fitted scikit-learn estimator or ``Pipeline`` after checking fairmon scores it right.

    The feature schema is fitted on the reference rows' model columns; ``input`` defaults to
    :func:`detect_input`; ``threshold`` is the P(class 1) cut-off the model's own ``predict``
    applies (0.5 for scikit-learn classifiers); ``number`` claims that version number (an MLflow
    mirror keeps MLflow's). Raises :class:`~fairmon.errors.SnapshotError` (:data:`ERR_DISAGREE`) when the
    share of rows where fairmon's decision differs from ``estimator.predict`` exceeds ``tolerance``;
    nothing is written then.
    """
    if not 0.0 <= tolerance <= 1.0:
        raise SnapshotError(f"tolerance must be in [0, 1], got {tolerance}")
    _check_binary(estimator)
    cols = model_features(estimator, reference, label=label, features=features)
    schema = FeatureSchema.fit(reference, columns=cols)
    _check_encoded_width(estimator, schema)
    mode: InputMode = input or detect_input(estimator)
    check = check_agreement(_wrap(estimator, schema, mode, threshold), estimator, reference, tolerance=tolerance)
    if not check.passed and threshold == 0.5:
        # scikit-learn's predict takes class 1 only when P(class 1) > P(class 0): a tie at exactly 0.5 (a
        # random forest's vote, a tree leaf) is class 0, where fairmon's P >= threshold said 1. The next
        # float above 0.5 is scikit-learn's own rule for every row
        strict = float(np.nextafter(0.5, 1.0))
        tied = check_agreement(_wrap(estimator, schema, mode, strict), estimator, reference, tolerance=tolerance)
        if tied.passed:
            check, threshold = tied, strict
    if not check.passed:
        other: InputMode = "raw" if mode == "encoded" else "encoded"
        try:
            alt = check_agreement(_wrap(estimator, schema, other, threshold), estimator, reference, tolerance=tolerance)
        except SnapshotError:
            alt = RegistrationCheck(other, check.own_input, check.rows, 0, tolerance)
        fmt = dict(rate=check.agreement, rows=check.rows, tol=tolerance, mode=mode, other=other)
        if alt.passed:
            raise SnapshotError(ERR_DISAGREE.format(**fmt))
        raise SnapshotError(ERR_DISAGREE_BOTH.format(**fmt, other_rate=alt.agreement))
    classes = estimator_classes(estimator)
    metrics: dict[str, Any] = {"registration_check": check.to_dict()}
    if classes is not None:  # fairmon's decision 1 is classes[1] (predict_proba[:, 1]); `fairmon init` maps labels by it
        metrics["classes"] = classes
    info = registry.register(
        _wrap(estimator, schema, mode, threshold),
        name=name,
        status=status,
        metrics=metrics,
        description=description,
        number=number,
    )
    return info, check
