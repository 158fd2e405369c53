"""``fairmon model register``: put a scikit-learn model or a torch module trained elsewhere into a
fairmon registry.

The model's input mode (raw columns or fairmon's encoded matrix) is detected, and fairmon's decisions
are checked against the model's own on the reference rows before anything is written
(:mod:`fairmon.registry._import`; torch modules with ``--builder``: :mod:`fairmon.registry._torch_import`).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Any

from fairmon._uris import is_mlflow_uri
from fairmon.cli._args import SubParsers, add_command
from fairmon.errors import DatasetError, SnapshotError
from fairmon.registry import Registry
from fairmon.registry._import import RegistrationCheck, load_estimator, register_estimator
from fairmon.registry._torch_import import load_state_dict, register_torch
from fairmon.registry._torch_module import build_module
from fairmon.registry.mlflow import import_model_uri
from fairmon.sources import load_file

EPILOG = """examples:
  fairmon model register model.joblib --name credit --reference reference.csv --label approved
  fairmon model register model.pkl --name credit --reference reference.csv --label approved \\
      --registry registry --input raw --tolerance 0.001 --status candidate
  fairmon model register model.joblib --name credit --reference reference.csv --features age income region

PATH is a joblib or pickle file holding a fitted scikit-learn estimator or Pipeline (binary
classifier with predict_proba). Loading it runs the code inside the pickle: register only files you
trust. The registry then stores its sha256 and refuses a modified file before unpickling it.

The reference CSV holds rows the model was trained or validated on (the label column may be present;
it is not a model input). The model's input columns are --features, else the names the model was fitted
with (feature_names_in_), else every reference column but --label. Registration is refused when
fairmon's decisions disagree with the model's own predict() on more than --tolerance of the reference
rows; the message names the agreement rate and the input mode to try. The check (agreement, rows,
input mode) is stored in the version's metadata (metrics.registration_check).

Torch: PATH is the module's state_dict (torch.save(module.state_dict(), PATH); loaded with
weights_only, no code runs) and --builder names the importable function that builds the untrained
module, package.module:function, called with --builder-kwargs (a JSON object). The module must take
either fairmon's encoded matrix of the features (standardised numeric columns, one-hot categories) or
the raw numeric columns in order; the mode is detected from the widths it accepts (when every feature
is numeric, from its agreement with --label; else pass --input). The snapshot is loaded back as a
worker would load it and its decisions compared with the module's own on the reference rows. The
builder must be importable wherever the monitor runs.
  fairmon model register net.pt --name credit --reference reference.csv --label approved \\
      --builder credit_models.nets:build_net --builder-kwargs '{"n_inputs": 23, "hidden": 64}'
Exit status: 0 registered, 2 refused or bad input.
"""


def register(sub: SubParsers) -> None:
    p = add_command(
        sub,
        "model",
        help="register a model trained outside fairmon",
        description="Manage the models a monitor watches.",
        epilog=EPILOG,
    )
    msub = p.add_subparsers(dest="model_command", metavar="ACTION", required=True)
    r = add_command(
        msub,
        "register",
        help="register a scikit-learn model or a torch state_dict + builder, checked",
        description="Register a fitted scikit-learn estimator or Pipeline, or a trained torch module with "
        "its builder, as the next production version of NAME, after checking that fairmon's predictions "
        "match the model's own on the reference rows.",
        epilog=EPILOG,
    )
    r.add_argument("path", metavar="PATH", help="joblib/pickle file of the fitted model (its code runs when "
                   "loaded), with --builder a torch state_dict file, or an MLflow model URI models:/NAME@ALIAS "
                   "(pulled, digest-verified and checked like a file)")
    r.add_argument("--name", required=True, help="model name in the registry (the spec's model.name)")
    r.add_argument("--reference", required=True, metavar="CSV", help="reference rows to fit the schema and check on")
    r.add_argument("--registry", default="registry", metavar="DIR", help="registry folder or fsspec URL (default: registry)")
    r.add_argument("--label", metavar="COL", help="label column of the reference data (not a model input)")
    r.add_argument("--features", nargs="+", metavar="COL", help="the model's raw input columns, in order")
    r.add_argument("--input", choices=("raw", "encoded"), help="input mode (default: detected)")
    r.add_argument("--tolerance", type=float, default=0.0,
                   help="largest share of reference rows allowed to disagree (default 0)")
    r.add_argument("--threshold", type=float, default=0.5,
                   help="P(class 1) cut-off of the model's decisions (default 0.5, scikit-learn's predict)")
    r.add_argument("--builder", metavar="MODULE:FUNCTION",
                   help="torch: the importable function that builds the untrained module")
    r.add_argument("--builder-kwargs", default="{}", metavar="JSON",
                   help="torch: keyword arguments of the builder, a JSON object (default {})")
    r.add_argument("--status", choices=("production", "candidate"), default="production",
                   help="status of the new version (default production: 'latest' resolves to it)")
    r.add_argument("--mlflow-uri", metavar="URI",
                   help="with PATH models:/NAME@ALIAS or models:/NAME/N: the MLflow tracking server, "
                   "mlflow+http://HOST:PORT (default: $MLFLOW_TRACKING_URI)")
    r.add_argument("--json", action="store_true", help="machine-readable output")
    r.set_defaults(func=run_register)


ERR_NO_TRACKING = "{path} is an MLflow model URI: name its tracking server with --mlflow-uri mlflow+http://HOST:PORT (or MLFLOW_TRACKING_URI)"
ERR_BUILDER_KWARGS = "--builder-kwargs must be a JSON object, got {value!r}"
ERR_BUILDER_STATE = "the state_dict in {path!r} does not fit the module built by {target!r}: {error}"
ERR_EMPTY_REFERENCE = "--reference {path}: the file has no rows; registration checks the model on them"
WARN_NO_LABEL = ("warning  --label {label!r} is not a column of {path} (columns: {columns}): no column is set aside "
                 "as the label, so without --features or the model's own feature names every column is an input; "
                 "check the name if the reference does hold the labels")


def _torch_module(args: argparse.Namespace) -> tuple[Any, dict[str, Any]]:
    """The builder's module with the state_dict at ``args.path`` loaded, and the builder's kwargs."""
    try:
        kwargs = json.loads(args.builder_kwargs)
    except json.JSONDecodeError:
        kwargs = None
    if not isinstance(kwargs, dict):
        raise SnapshotError(ERR_BUILDER_KWARGS.format(value=args.builder_kwargs))
    module = build_module(args.builder, kwargs)
    try:
        module.load_state_dict(load_state_dict(args.path))
    except (RuntimeError, ValueError, TypeError, KeyError) as exc:
        first = str(exc).strip().splitlines()
        raise SnapshotError(ERR_BUILDER_STATE.format(path=args.path, target=args.builder,
                                                     error=" ".join(x.strip() for x in first)[:300])) from exc
    return module, kwargs


def run_register(args: argparse.Namespace) -> int:

    reference = load_file(args.reference, "csv")  # a missing or unreadable file: a DatasetError naming it
    if reference.empty:
        raise DatasetError(ERR_EMPTY_REFERENCE.format(path=args.reference))
    if args.label is not None and args.label not in reference.columns:  # allowed, but a typo looks the same
        print(WARN_NO_LABEL.format(label=args.label, path=args.reference, columns=[str(c) for c in reference.columns]),
              file=sys.stderr)
    registry = Registry(args.registry)
    description = f"registered from {args.path} by fairmon model register"
    if args.path.startswith("models:/"):
        tracking = args.mlflow_uri or os.environ.get("MLFLOW_TRACKING_URI", "")
        if not tracking:
            raise SnapshotError(ERR_NO_TRACKING.format(path=args.path))
        if "://" in tracking and not is_mlflow_uri(tracking):
            tracking = f"mlflow+{tracking}"
        info, found = import_model_uri(args.path, tracking_uri=tracking, registry=registry, name=args.name,
                                       reference=reference, label=args.label, status=args.status)
        check = RegistrationCheck(**{k: found[k] for k in ("input", "own_input", "rows", "agreeing", "tolerance")}) \
            if found else None
        return _print(args, info, check)
    if args.builder:
        module, kwargs = _torch_module(args)
        info, check = register_torch(
            module, builder=args.builder, builder_kwargs=kwargs, registry=registry, name=args.name,
            reference=reference, label=args.label, features=args.features, input=args.input,
            tolerance=args.tolerance, threshold=args.threshold, status=args.status, description=description,
        )
        return _print(args, info, check)
    estimator = load_estimator(args.path)
    info, check = register_estimator(
        estimator,
        registry=registry,
        name=args.name,
        reference=reference,
        label=args.label,
        features=args.features,
        input=args.input,
        tolerance=args.tolerance,
        threshold=args.threshold,
        status=args.status,
        description=description,
    )
    return _print(args, info, check)


def _print(args: argparse.Namespace, info: Any, check: Any) -> int:
    if args.json:
        print(json.dumps({"name": info.name, "version": info.version, "uri": info.uri, "status": info.status,
                          "features": info.feature_schema.names, "check": check.to_dict() if check else None}))
        return 0
    checked = (f"input mode {check.input}; fairmon's predictions agree with the model's own on "
               f"{check.agreement:.1%} of the {check.rows} reference rows") if check else (
        "a fairmon snapshot (verified by its sha256; no foreign predict to compare with)")
    print(
        f"registered {info.name}:{info.version} ({info.status}) at {info.uri}\n"
        f"  {checked}\n"
        f"  features: {', '.join(info.feature_schema.names)}"
    )
    return 0
