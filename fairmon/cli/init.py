"""``fairmon init``: write a first, commented monitor spec from reference data (and a registered model).

Column roles come from the data (numeric / categorical by dtype) and the model: the registered
version's feature schema names the model inputs, every other column but the label is ``extra``.
RUMIE searches the sensitive and extra columns only (issue 22): over the model's inputs its "most
discriminated group" is the group the model is built to score low (low bureau scores for a credit
model), a finding for a model working as intended. Explanation settings are the spec's defaults,
written out (sizes and their cost stated in the written comments): since issue 21 they are sized for a
first window over a model-agnostic scikit-learn pipeline (about a minute); raise them once it works. The spec is loaded back
with :func:`fairmon.config.load_spec` before it is written.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import re
from pathlib import Path
from typing import Any

import pandas as pd

from fairmon._uris import is_mlflow_uri
from fairmon.cli._args import SubParsers, add_command
from fairmon.config import ExplanationsSpec, load_spec
from fairmon.config._limits import MAX_GESD_SAMPLE_SIZE
from fairmon.errors import ConfigError
from fairmon.registry import Registry
from fairmon.registry._import import estimator_classes
from fairmon.registry.mlflow import MlflowRegistry
from fairmon.sources import load_file

EPILOG = """examples:
  fairmon init --reference reference.csv --label approved --sensitive sex age_group --model credit
  fairmon init --reference ref.csv --label y --sensitive sex --model credit --registry registry \\
      --data 'data/{start:%Y-%m-%d}.csv' --start-date 2026-01-01 --out monitors/credit.yaml

Paths are taken relative to the current directory and written relative to the spec's folder (a spec
resolves its relative paths against its own folder). With --model, the model inputs are the features
of the newest production version in --registry (register it first: fairmon model register); without
it, every column but the label and the sensitive ones.
"""

ERR_EXISTS = "{path} exists; pass --force to overwrite it"
ERR_NO_COLUMN = "--{option}: column(s) {missing} not in the reference data (columns: {columns})"
ERR_LABEL_VALUES = "--label {label!r} has {n} distinct values ({values}); fairmon monitors binary decisions"
ERR_FAVORABLE_NEEDED = (
    "--label {label!r} has the values {values}: which one is the favorable outcome (the one a person wants, "
    "e.g. approved, good credit)? say --favorable VALUE (only 0/1 and false/true labels default to 1/true)"
)
ERR_LABEL_NOT_A_CLASS = (
    "the favorable label {label!r} is not one of the model's classes {classes} (its predict_proba columns): "
    "the labels in --reference are not the ones the model was trained on; recode them, or name --favorable "
    "as the model spells it"
)
ERR_FAVORABLE_VALUE = "--favorable {value!r} is not a value of --label {label!r} ({values})"
_NAME_RE = re.compile(r"[^a-z0-9_-]+")

_DEFAULTS = ExplanationsSpec()
#: first-run explanation sizes written into the spec: the spec defaults (monitors/README.md,
#: "Explanation cost"), so a written spec and a minimal one cost the same
FIRST_RUN = {
    "background_size": _DEFAULTS.background_size, "lime_samples": _DEFAULTS.lime_samples,
    "kernelshap_samples": _DEFAULTS.kernelshap_samples, "gesd_sample_size": _DEFAULTS.gesd.sample_size,
    "gesd_perturbations": _DEFAULTS.gesd.n_perturbations, "openxai_sample_size": _DEFAULTS.openxai.sample_size,
    "openxai_perturbations": _DEFAULTS.openxai.n_perturbations,
}


def register(sub: SubParsers) -> None:
    p = add_command(
        sub,
        "init",
        help="write a first monitor spec from reference data and a registered model",
        description="Write a commented, validated monitor spec: column roles detected from the reference "
        "data and the registered model, RUMIE searching the sensitive and non-model columns, small "
        "explanation settings for a first run; prints the next commands.",
        epilog=EPILOG,
    )
    p.add_argument("--reference", required=True, metavar="CSV", help="reference rows (the model's training/validation data)")
    p.add_argument("--label", required=True, metavar="COL", help="ground-truth label column")
    p.add_argument("--sensitive", required=True, nargs="+", action="extend", metavar="COL",
                   help="protected attribute column(s); repeat or list several")
    p.add_argument("--favorable", metavar="VALUE",
                   help="the label's favorable value (required unless the label is 0/1 or false/true: then 1/true)")
    p.add_argument("--model", metavar="NAME", help="registered model name (default: the monitor name)")
    p.add_argument("--registry", default="registry", metavar="URI",
                   help="model registry folder, or an MLflow server as mlflow+http://HOST:PORT (default: registry)")
    p.add_argument("--name", help="monitor name (default: the model name, else the reference file's name)")
    p.add_argument("--data", default="data/{start:%Y-%m-%d}.csv", metavar="PATTERN",
                   help="window files pattern (default: data/{start:%%Y-%%m-%%d}.csv)")
    p.add_argument("--start-date", metavar="DATE", help="first window (default: today, UTC)")
    p.add_argument("--artifacts", default="artifacts", metavar="DIR", help="artifact folder (default: artifacts)")
    p.add_argument("--out", metavar="SPEC", help="spec file to write (default: monitors/NAME.yaml)")
    p.add_argument("--force", action="store_true", help="overwrite an existing spec file")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.set_defaults(func=run_init)


def _monitor_name(args: argparse.Namespace) -> str:
    raw = args.name or args.model or Path(args.reference).stem
    name = _NAME_RE.sub("-", str(raw).lower()).strip("-_")
    return name if name[:1].isalpha() else f"m-{name}"


def _rel(path: str, out_dir: Path) -> str:
    """``path`` (relative to the cwd) written relative to the spec's folder; URIs and ${VAR} unchanged."""
    if "://" in path or path.startswith("$"):
        return path
    return os.path.relpath(Path(path).expanduser().resolve(), out_dir.resolve())


def _y(value: Any) -> str:
    """A YAML flow scalar/list (JSON is YAML; strings quoted only when needed)."""
    if isinstance(value, list | tuple):
        return "[" + ", ".join(_y(v) for v in value) + "]"
    if isinstance(value, str) and re.fullmatch(r"[A-Za-z_][A-Za-z0-9_.-]*", value) and value.lower() not in (
        "true", "false", "yes", "no", "on", "off", "null", "y", "n"
    ):
        return value
    return json.dumps(value)


def _registry(args: argparse.Namespace) -> Registry:
    """The folder registry, or an MLflow server pulled into the cache the written spec will use."""
    if not is_mlflow_uri(args.registry):
        return Registry(args.registry)
    cache = Path(args.out).parent / ".fairmon-cache" / "mlflow"
    return MlflowRegistry(args.registry, cache_uri=str(cache), reference=args.reference, label=args.label)


def _roles(args: argparse.Namespace, ref: Any) -> dict[str, Any]:
    """Features (the model's inputs), extra columns, kinds and the label's favorable value."""

    columns = [str(c) for c in ref.columns]
    for option, wanted in (("label", [args.label]), ("sensitive", args.sensitive)):
        missing = [c for c in wanted if c not in columns]
        if missing:
            raise ConfigError(ERR_NO_COLUMN.format(option=option, missing=missing, columns=columns))
    model_name = args.model or _monitor_name(args)
    from_model = args.model is not None
    classes = None
    if from_model:
        registry = _registry(args)
        info = registry.resolve(args.model)
        classes = info.metrics.get("classes")
        if classes is None:  # registered before model register recorded them: the estimator says
            classes = estimator_classes(getattr(registry.load(info.name, info.version), "estimator", None))
        features = info.feature_schema.names
        missing = [c for c in features if c not in columns]
        if missing:
            raise ConfigError(ERR_NO_COLUMN.format(option="reference", missing=missing, columns=columns))
    else:
        features = [c for c in columns if c != args.label and c not in args.sensitive]
    extra = [c for c in columns if c not in features and c != args.label]
    kinds = {
        c: "numeric" if pd.api.types.is_numeric_dtype(ref[c]) and not pd.api.types.is_bool_dtype(ref[c]) else "categorical"
        for c in features + extra
    }
    values = sorted(ref[args.label].dropna().unique().tolist(), key=str)
    if len(values) != 2:
        raise ConfigError(ERR_LABEL_VALUES.format(label=args.label, n=len(values), values=values[:10]))
    label_class = _favorable_label(args, values)
    rumie = list(dict.fromkeys([*args.sensitive, *extra]))
    # GESD shares its sample among an attribute's groups and skips a group below min_group_size rows:
    # enough rows for every group of the attribute with the most (6 race groups had 40 / 6 each: n/a)
    groups = max(int(ref[c].nunique(dropna=True)) for c in args.sensitive)
    gesd_sample = min(max(FIRST_RUN["gesd_sample_size"], groups * _DEFAULTS.gesd.min_group_size), MAX_GESD_SAMPLE_SIZE)
    return {"gesd_sample_size": gesd_sample, "model": model_name, "from_model": from_model, "features": features,
            "extra": extra, "kinds": kinds, "label_class": label_class, "rumie": rumie, "rows": len(ref),
            "decision_class": _decision_class(classes, label_class), "classes": classes}


def _favorable_label(args: argparse.Namespace, values: list[Any]) -> Any:
    """The label's favorable value: ``--favorable``, else 1 / true for 0/1 and boolean labels.

    Never a guess beyond that: a label of ``1``/``2`` (German credit: 1 good) or ``approved``/``denied``
    sorted and picked by position made the unfavourable outcome the favorable one, and every metric
    read backwards."""
    if args.favorable is not None:
        match = [v for v in values if str(v).lower() == str(args.favorable).strip().lower()]
        if not match:
            raise ConfigError(ERR_FAVORABLE_VALUE.format(value=args.favorable, label=args.label, values=values))
        return match[0]
    if {str(v).lower() for v in values} in ({"0", "1"}, {"false", "true"}, {"0.0", "1.0"}):
        return next(v for v in values if str(v).lower() in ("1", "true", "1.0"))
    raise ConfigError(ERR_FAVORABLE_NEEDED.format(label=args.label, values=values))


def _decision_class(classes: list[Any] | None, label_class: Any) -> int:
    """``favorable.class``: which of the model's two decisions is favorable — the position of the favorable
    label among the estimator's ``classes_`` (recorded by ``model register``; ``predict_proba[:, 1]`` is
    ``classes[1]``); 1 for a model without ``classes_`` (a torch module's two logits). A favorable label
    the model does not predict is refused: the mapping would be a guess."""
    if not classes or len(classes) != 2:
        return 1
    for i, c in enumerate(classes):
        if str(c).lower() == str(label_class).lower() or (c in (0, 1) and label_class in (True, False) and
                                                          bool(c) == bool(label_class)):
            return i
    raise ConfigError(ERR_LABEL_NOT_A_CLASS.format(label=label_class, classes=classes))


def render_spec(args: argparse.Namespace, name: str, roles: dict[str, Any], out_dir: Path) -> str:
    """The commented spec text."""
    f = FIRST_RUN
    kinds = roles["kinds"]
    numeric = [c for c in roles["features"] if kinds[c] == "numeric"]
    categorical = [c for c in roles["features"] if kinds[c] == "categorical"]
    origin = f"the features of model {roles['model']!r} in the registry" if roles["from_model"] else (
        "every reference column but the label and the sensitive ones (no --model: CHECK these are the "
        "model's inputs)"
    )
    dc, classes = roles["decision_class"], roles["classes"]
    decision_note = (f"the model's class {classes[dc]!r} (predict_proba[:, {dc}]) is the favorable decision"
                     if classes else "the model's positive class (predict_proba[:, 1]) is the favorable decision")
    label_line = "" if _same(roles["label_class"], dc) else (
        f"\n  label_class: {_y(roles['label_class'])}   # the favorable label value")
    start = args.start_date or dt.datetime.now(dt.UTC).date().isoformat()
    k = min(5, len(roles["rumie"]))
    reference = _rel(args.reference, out_dir)
    mlflow_lines = "" if not is_mlflow_uri(args.registry) else (
        f"\n  reference: {_y(reference)}   # MLflow: the rows a scikit-learn model is imported and checked against"
        f"\n  label: {_y(args.label)}")
    return f"""# Written by `fairmon init` from {args.reference} ({roles['rows']} rows). Reference: monitors/README.md.
# Relative paths resolve against this file's folder.
spec_version: 1

identity:
  name: {name}

model:
  registry_uri: {_y(_rel(args.registry, out_dir))}
  name: {_y(roles['model'])}
  version: latest              # the newest production version at each window's start{mlflow_lines}

data:
  files:
    pattern: {_y(_rel(args.data, out_dir))}   # one file per window

columns:
  # model inputs: {origin}
  #   numeric ({len(numeric)}): {', '.join(numeric) or '-'}
  #   categorical ({len(categorical)}): {', '.join(categorical) or '-'}
  features: {_y(roles['features'])}
  # in the data but not model inputs (protected attributes withheld from the model, ids, ...)
  extra: {_y(roles['extra'])}
  sensitive: {_y(args.sensitive)}
  label: {_y(args.label)}

favorable:
  class: {dc}                     # {decision_note}{label_line}

schedule:
  cron: "0 0 * * *"
  window: 1d
  start_date: {start}

validation:                    # a Great Expectations suite built from the reference rows
  reference_data: {_y(reference)}
  min_rows: 100                # a window with fewer rows is data_invalid

outcome:
  bootstrap: 200               # CI resamples (default 1000)

rumie:
  # searched columns: the sensitive and non-model columns. Over the model's inputs RUMIE would report
  # the group the model is meant to score low (e.g. low credit scores) as "discriminated".
  attributes: {_y(roles['rumie'])}
  k: {k}

explanations:
  # the defaults, sized for a first run (about a minute per window for a 25-feature scikit-learn
  # pipeline); cost per setting: monitors/README.md "Explanation cost". Set budget_cpu_s to cap a
  # window's explanation CPU seconds. GESD needs at least min_group_size (10) sampled rows per group.
  explainers: [kernelshap, lime]
  background_size: {f['background_size']}          # background rows for KernelSHAP / perturbation scale
  lime_samples: {f['lime_samples']}            # LIME samples per explained row
  kernelshap_samples: {f['kernelshap_samples']}       # KernelSHAP coalitions per explained row
  gesd:
    sample_size: {roles['gesd_sample_size']}            # rows explained per window (shared among each attribute's groups)
    n_perturbations: {f['gesd_perturbations']}         # perturbed copies per row
  openxai:
    metrics: [PGI, PGU, RIS, ROS]   # RRS needs a model's internal representation (torch)
    sample_size: {f['openxai_sample_size']}
    n_perturbations: {f['openxai_perturbations']}

retraining:
  enabled: false               # FEU retraining candidates on drift: enable with training_data once monitoring works

execution:
  artifact_location: {_y(_rel(args.artifacts, out_dir))}
"""


def _same(label_class: Any, decision_class: int) -> bool:
    """Whether ``label_class`` may be left out: the spec's label value defaults to ``favorable.class``."""
    return type(label_class) is int and label_class == decision_class


def run_init(args: argparse.Namespace) -> int:

    name = _monitor_name(args)
    out = Path(args.out or f"monitors/{name}.yaml")
    if out.exists() and not args.force:
        raise ConfigError(ERR_EXISTS.format(path=out))
    ref = load_file(args.reference, "csv")  # a missing or unreadable file: a DatasetError naming it
    roles = _roles(args, ref)
    out.parent.mkdir(parents=True, exist_ok=True)
    text = render_spec(args, name, roles, out.parent)
    tmp = out.with_name(f".{out.name}.tmp")
    tmp.write_text(text)
    try:
        load_spec(tmp)  # the same loader the DAG factory uses: never write a spec it would refuse
    except ConfigError:
        tmp.unlink()
        raise
    tmp.replace(out)
    day = args.start_date or "YYYY-MM-DD"
    steps = [
        "fairmon db upgrade --db URL",
        f"fairmon run --monitor {out} --logical-date {day} --db URL",
        f"fairmon report --monitor {name} --spec {out} --db URL",
    ]
    if args.json:
        print(json.dumps({"spec": str(out), "name": name, "features": roles["features"], "extra": roles["extra"],
                          "rumie_attributes": roles["rumie"], "favorable_label": roles["label_class"],
                          "favorable_class": roles["decision_class"], "model_classes": roles["classes"],
                          "next": steps}))
        return 0
    model_side = (f"the model's class {roles['classes'][roles['decision_class']]!r}" if roles["classes"]
                  else f"decision {roles['decision_class']} (predict_proba[:, {roles['decision_class']}])")
    print(f"wrote {out} (monitor {name!r}: {len(roles['features'])} features, {len(roles['extra'])} extra, "
          f"RUMIE over {', '.join(roles['rumie'])})\n"
          f"favorable: label {args.label} = {roles['label_class']!r}, {model_side}: check this is the outcome "
          "a person wants\nnext:")
    print("\n".join(f"  {step}" for step in steps))
    return 0
