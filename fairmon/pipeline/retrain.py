"""Spec → FEU's retraining search (:func:`fairmon.feu.search`) for the ``feu`` step, and its JSON result.

Only translation lives here, as in :mod:`fairmon.pipeline.compute`: the spec's training data and
settings in, the Pareto candidates with their metrics out; the production model of the window is the
constraints' anchor, and the selected candidate is saved in the monitored model's registry (status
``candidate``: never deployed).
"""

from __future__ import annotations

from typing import Any

from fairmon._progress import advance, set_total
from fairmon.errors import ConfigError
from fairmon.feu import search
from fairmon.feu.settings import FEUSettings
from fairmon.pipeline.compute import gesd_settings
from fairmon.pipeline.context import RunContext, load_model, model_name, model_registry, window_model
from fairmon.pipeline.feu_target import feu_target, leave_out_small_groups
from fairmon.pipeline.table import A_SNAPSHOT
from fairmon.registry.model import Model
from fairmon.sources import file_format, load_file

__all__ = ["run_feu"]


def run_feu(ctx: RunContext) -> dict[str, Any]:
    """FEU retraining candidates on the spec's training data (NSGA-II; proposed, never deployed)."""
    rt = ctx.spec.retraining
    td = rt.training_data
    label = ctx.spec.columns.label
    if td is None or label is None:  # a validated spec with retraining enabled has both; guards direct calls
        raise ConfigError(f"{ctx.spec.name}: FEU needs retraining.training_data and columns.label")
    p = ctx.spec.resolve_path(td.path)
    # whose groups DP and GESD compare: the RUMIE group the alert is about, or the declared attribute
    attr, data, target = feu_target(ctx, load_file(p, file_format(p, td.format)))
    if target["kind"] == "attribute":  # (the RUMIE group has at least 100 rows a side)
        data, left_out = leave_out_small_groups(data, attr, ctx.spec.outcome.min_group_size)
        if left_out:
            target = {**target, "left_out": left_out, "min_group_rows": ctx.spec.outcome.min_group_size}
    cols = [*ctx.spec.columns.features, attr, label]
    # The selected candidate is saved in the monitored model's registry (status ``candidate``: never
    # ``latest``, never deployed). A retried or re-run window reuses the candidate it already saved.
    registry, name = model_registry(ctx), model_name(ctx)
    window_key = f"{ctx.spec.name}@{ctx.window.start.isoformat()}"
    target_text = f"{target['kind']}: {target.get('rules') or target.get('attribute')}" + (
        f" ({target['reason']})" if target.get("reason") else "")
    # ... for the same target: one registered for another group answers another question
    saved = next(
        (v for v in registry.versions(name) if v.status == "candidate" and v.metrics.get("feu_window") == window_key
         and v.metrics.get("feu_target") == target_text),
        None,
    )
    set_total(rt.generations)  # progress: FEU generations
    res = search(
        data[list(dict.fromkeys(cols))],
        progress=lambda generation, n_eval, elapsed: advance(),
        production=_production_model(ctx),
        features=list(ctx.spec.columns.features),
        sensitive=attr,
        label=label,
        favorable=ctx.spec.favorable.label_value,
        settings=FEUSettings.from_spec(rt, gesd=gesd_settings(ctx)),
        registry=registry if saved is None else None,
        name=name,
        registry_metadata={"feu_window": window_key, "proposed_by": "fairmon feu", "feu_target": target_text},
        random_state=rt.random_state,
        n_jobs=rt.n_jobs,
        device=ctx.device,
    )
    snapshot = saved if saved is not None else res.snapshot
    registry_version = snapshot.version if snapshot is not None else None
    full = res.to_dict()
    sel_id = full["selected"]["id"] if full["selected"] is not None else None
    candidates = []
    selected_index = None
    for i, c in enumerate(full["pareto"]):
        deployment = None
        if c["id"] == sel_id:  # the registered model's figures: the searched network's or its fold ensemble's
            selected_index, deployment = i, full["selected"].get("deployment")
            c = {**c, **{k: full["selected"][k] for k in ("test", "validation", "objectives", "group_thresholds")}}
        test = c.get("test") or {}
        candidates.append(
            {
                "index": i,
                "id": c["id"],
                "hyperparameters": c["hyperparameters"],
                "metrics": {"test": test, "validation": c.get("validation"), "objectives": c.get("objectives"),
                            "utility": full["settings"].get("utility"),
                            "chebyshev": c.get("chebyshev"), "feasible": c.get("feasible"),
                            "constraints": c.get("constraints"), "dp_improvement_lb": c.get("dp_improvement_lb"),
                            "recommendation_gate": c.get("recommendation_gate"), "deployment": deployment,
                            "target": target, "evaluation": c["id"]},
                "pareto": True,
                "auc": test.get("auc"),
                "balanced_accuracy": test.get("balanced_accuracy"),
                "selection_rate": test.get("selection_rate"),
                "dp": test.get("dp"),
                "gesd": test.get("gesd"),
                "feasible": c.get("feasible"),
                "selected": c["id"] == sel_id,
                "registry_version": registry_version if c["id"] == sel_id else None,
            }
        )
    return {
        "candidates": candidates,
        "selected": selected_index,
        "n_evaluations": full["n_evaluations"],
        "generations_run": full["generations_run"],
        "stopped_by": full["stopped_by"],
        "elapsed_s": full["elapsed_s"],
        "settings": full["settings"],
        "recommendation": full["recommendation"],
        "baselines": full["baselines"],
        "gesd_noise_floor": full["gesd_noise_floor"],
        "sensitive": attr,  # the column whose groups DP and GESD compare (the follow-up names it)
        "target": target,  # which: the declared attribute or the alert's RUMIE group, and why
    }


def _production_model(ctx: RunContext) -> Model | None:
    """The window's production model (the FEU constraints' anchor and first baseline), when it has one.

    None (FEU then trains the paper's network at reference settings as the stand-in) for monitors of
    logged decisions or scores, and when the favourable class is not the model's class 1.
    """
    cols, fav = ctx.spec.columns, ctx.spec.favorable
    if cols.decision is not None or cols.score is not None or fav.class_ not in (None, 1):
        return None
    if ctx.artifacts.exists(A_SNAPSHOT):  # the version this window was scored with
        return window_model(ctx)
    info = model_registry(ctx).resolve(model_name(ctx), ctx.spec.model.version, as_of=ctx.window.start)
    return load_model(ctx, info.name, str(info.version))
