"""Everything one step of one window needs, resolved once: spec, window, artifacts, store, secrets.

A :class:`RunContext` is cheap to build (the store engine is created on first use), so every Airflow
task builds its own from the small values XCom carried (spec path, window dict) — no state is shared
between task processes except through the artifact location and the store.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

from fairmon._device import resolve_device
from fairmon.config import ENV_ARTIFACT_LOCATION, ENV_DEVICE, ENV_SLACK_TOKEN, MonitorSpec
from fairmon.pipeline.artifacts import ArtifactStore
from fairmon.pipeline.table import A_SNAPSHOT
from fairmon.registry import Registry
from fairmon.registry.mlflow import MlflowRegistry
from fairmon.registry.model import Model
from fairmon.store import Store, get_engine, require_head
from fairmon.window import Window

__all__ = ["RunContext", "ENV_ARTIFACT_LOCATION", "ENV_DEVICE", "ENV_SLACK_TOKEN", "load_model", "model_name",
           "model_registry", "window_model"]



@dataclass
class RunContext:
    """The resolved inputs of one step.

    Parameters
    ----------
    spec : MonitorSpec
        The monitor.
    window : Window
        The window ``[start, end)`` being computed.
    db_url : str, optional
        Store URL (None → ``FAIRMON_DATABASE_URL`` → embedded Postgres, see :func:`fairmon.store.get_engine`).
    notify : bool
        A live run (True): alerts are queued in the outbox and posted when a Slack token is
        available. False (a backfill without ``--notify``): findings are stored, no alert is queued
        or posted.
    slack_token : str, optional
        Slack bot token (None → ``FAIRMON_SLACK_TOKEN``; none at all → alerts stay pending in the outbox).
    attempt : int
        Airflow try number (1 for the CLI); recorded with the run.
    source_url : str, optional
        SQLAlchemy URL of a SQL data source (the DAG resolves it from the spec's Airflow connection;
        None → the environment variable named by ``data.sql.url_env``).
    feu_requested : bool
        FEU retraining candidates were asked for at this window (``fairmon feu``, the DAG's ``feu``
        param): the feu step runs without drift and whatever ``retraining.trigger`` says.
    attempt_id : str, optional
        The attempt of the window these steps belong to: ``resolve_window`` starts one (the store
        hands out the id, :meth:`fairmon.store.Store.begin_attempt`) and returns it in its dict,
        which later tasks receive. Artifacts live under ``<window>/<attempt_id>/``; a step of an
        attempt a newer one took over stops with :class:`~fairmon.errors.AttemptSupersededError`.
        None: the window's own folder, until :meth:`bind_current_attempt` looks the attempt holding
        the run up (FEU on demand and a step called without an attempt id do).
    take_over_monitor : bool
        The operator allows this spec file to take the monitor name over from the file that owns it
        (``fairmon run --take-over-monitor``); otherwise a second file with the same name is refused.
    """

    spec: MonitorSpec
    window: Window
    db_url: str | None = None
    notify: bool = True
    slack_token: str | None = None
    attempt: int = 1
    source_url: str | None = None
    feu_requested: bool = False
    attempt_id: str | None = None
    take_over_monitor: bool = False
    _store: Store | None = field(default=None, repr=False)
    _artifacts: ArtifactStore | None = field(default=None, repr=False)
    _run_id: int | None = field(default=None, repr=False)

    @property
    def monitor(self) -> str:
        return self.spec.name

    @property
    def artifact_location(self) -> str:
        env = os.environ.get(ENV_ARTIFACT_LOCATION)
        return env if env else self.spec.resolve_path(self.spec.execution.artifact_location)

    @property
    def artifacts(self) -> ArtifactStore:
        if self._artifacts is None:
            self._artifacts = ArtifactStore(self.artifact_location, self.monitor, self.window.key, self.attempt_id)
        return self._artifacts

    def bind_attempt(self, attempt_id: str | None) -> None:
        """This context now belongs to attempt ``attempt_id`` (resolve_window started it; None: the
        window's folder itself, as runs stored before attempts existed)."""
        self.attempt_id = attempt_id
        self._artifacts = None

    def bind_current_attempt(self) -> str | None:
        """Bind to the attempt holding the window's run in the store (FEU on demand, a step called
        without an attempt id); returns it."""
        self.bind_attempt(self.store.current_attempt(self.monitor, self.window.start, self.window.end))
        return self.attempt_id

    @property
    def device(self) -> str:
        """``FAIRMON_DEVICE`` or the spec's ``execution.device`` resolved (``auto`` → cuda if available)."""
        wanted = os.environ.get(ENV_DEVICE) or self.spec.execution.device
        return str(resolve_device(wanted))

    @property
    def store(self) -> Store:
        """The store (engine created on first use; the schema must be at the migration head)."""
        if self._store is None:
            engine = get_engine(self.db_url)
            require_head(engine)
            self._store = Store(engine)
        return self._store

    def run_id(self) -> int | None:
        """The id of the window's run row (None before an attempt created it), read once: a (monitor,
        window) keeps its row across attempts, so the steps' liveness marks need not read the row each."""
        if self._run_id is None:
            run = self.store.get_run(self.monitor, self.window.start, self.window.end)
            self._run_id = None if run is None or run.run_id is None else int(run.run_id)
        return self._run_id

    def token(self) -> str | None:
        """The Slack bot token: the one passed, else ``FAIRMON_SLACK_TOKEN`` (None: alerts stay queued)."""
        return self.slack_token or os.environ.get(ENV_SLACK_TOKEN) or None

    def close(self) -> None:
        """Dispose of the store's engine (a later use opens a new one)."""
        if self._store is not None:
            engine = getattr(self._store, "engine", None)
            if engine is not None:
                engine.dispose()
            self._store = None


def model_name(ctx: RunContext) -> str:
    """The monitored model's registry name (``model.name``, else the monitor's name)."""
    return ctx.spec.model.name or ctx.spec.name


def model_registry(ctx: RunContext) -> Registry:
    """The monitored model's registry (``model.registry_uri``, spec-relative): a folder registry, or an
    MLflow server mirrored into ``model.cache`` (:class:`~fairmon.registry.mlflow.MlflowRegistry`)."""
    src = ctx.spec.model
    if not src.is_mlflow:
        return Registry(ctx.spec.resolve_path(src.registry_uri))
    return MlflowRegistry(
        ctx.spec.resolve_path(src.registry_uri),
        cache_uri=ctx.spec.resolve_path(src.cache or ".fairmon-cache/mlflow"),
        reference=ctx.spec.resolve_path(src.reference) if src.reference is not None else None,
        label=src.label,
    )


def window_model(ctx: RunContext) -> Model:
    """The model version this window was scored with (the ``pull_snapshot`` step's record), on the
    window's device: the one model every later step of the window explains, diagnoses or compares."""
    snap = ctx.artifacts.get_json(A_SNAPSHOT)
    return load_model(ctx, snap["name"], snap["version"])


def load_model(ctx: RunContext, name: str, version: str | int) -> Model:
    """A registered version on the window's device, encoding the window the way its validation allows: with
    ``validation.allow_unseen_categories`` an unseen category is an all-zero block (a raw scikit-learn
    pipeline with ``handle_unknown="ignore"`` scored it; the explain step crashed on it)."""
    model = model_registry(ctx).load(name, version, device=ctx.device)
    if ctx.spec.validation.allow_unseen_categories:
        model.schema = model.schema.allowing_unseen()
    return model
