"""The stream's models: the production and the retrained (drifted) version, calibrated and registered.

See :func:`fairmon.datasets.generate_stream` for the contract (the knob is in DScore units of the
decisions the monitor sees).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from fairmon.datasets._calibration import _calibrate, _fit_model, _fit_schema, decision_dscore
from fairmon.datasets._stream_spec import (
    ERR_ARGS,
    FEATURE_COLUMNS,
    LABEL_COLUMN,
    StreamWindow,
    SyntheticStream,
)
from fairmon.errors import DatasetError
from fairmon.registry import Model, Registry, SnapshotInfo

__all__ = ["DeployedModels", "deploy_models"]


# ---------------------------------------------------------------------- models
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
            self.models[version] = Registry(self.registry_uri).load(self.name, version)
        return self.models[version]

    def decisions(self, window: StreamWindow) -> np.ndarray:
        """0/1 decisions (1 = favorable) of the serving model on a window's rows."""
        return self.model_for_window(window.index).predict(window.frame[list(FEATURE_COLUMNS)])


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
    >>> from fairmon.datasets import generate_stream
    >>> s = generate_stream(n_windows=4, rows_per_window=2000, drift_window=2)
    >>> dep = deploy_models(s, "memory://doctest-stream")
    >>> abs(dep.dscore_before - 0.05) <= 0.03 and abs(dep.dscore_after - 0.20) <= 0.03
    True
    """
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
