"""``fairmon audit``: mine RUMIE evidence (the most discriminated group) from a data file."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

import numpy as np
import pandas as pd

from fairmon._codes import non_numbers
from fairmon.cli._args import SubParsers, add_command
from fairmon.errors import ConfigError, DatasetError
from fairmon.fairness.rumie import mine
from fairmon.registry import Registry
from fairmon.sources import file_format

__all__ = ["register", "run", "parse_model_ref", "ERR_MODEL_REF", "ERR_FAVORABLE_VALUE", "ERR_READ"]

ERR_MODEL_REF = "--model {ref!r}: expected REGISTRY_URI[:NAME[:VERSION]]"
ERR_FAVORABLE_VALUE = "--favorable-value {value!r} does not occur in column {column!r}; values are {values}"
ERR_NO_COLUMN = "--favorable-col {column!r} is not a column of {file}; columns are {columns}"
ERR_COLUMN_NAN = "--favorable-col {column!r} of {file} has {count} missing values; every row needs a decision"
ERR_NOT_BINARY = (
    "--favorable-col {column!r} of {file} holds {values}, not 0/1 or bool: name the favorable value, "
    "e.g. --favorable-value {example}"
)
ERR_READ = "cannot read data file {path!r}: {error}"
ERR_ONE_MODEL = "registry {uri!r} holds {names}; name the model: --model {uri}:NAME"
WARN_MODEL_INPUTS = (
    "warning  no --attributes: RUMIE searches the model's own inputs {columns}; its most discriminated group "
    "may be the group the model is built to score low, a finding for a model working as intended (and its "
    "rules are intervals of those inputs). Pass --attributes with the protected and other non-input columns "
    "to look for groups the model should not separate (a monitor's default: its sensitive and extra columns)"
)
WARN_MOSTLY_NUMBERS = (
    "warning  column {column!r} of {file} holds numbers but for {count} value(s), e.g. {values}: RUMIE treats it "
    "as categories (one per distinct value); fix those values (or leave them empty) to search it as a number"
)

EPILOG = """examples:
  fairmon audit --data compas.csv --favorable-col is_low_risk
  fairmon audit --data compas.csv --favorable-col score_text --favorable-value Low \\
      --attributes sex age race priors_count --k 5 --alpha 0.45 --beta 0.55
  fairmon audit --data window.parquet --model ./registry:credit:latest --json
  fairmon audit --data adult.csv --favorable-col pred --method enum --k 2 --enum-budget 60

The group is reported with its key attributes (original columns and one-hot detail), the
decision-tree rules (IE-DT) in original units, the in-sample DScore and an honest held-out DScore
with a p-value. With --model, favorable = the snapshot's predicted class 1 on the data.
"""


def register(sub: SubParsers) -> None:
    p = add_command(
        sub,
        "audit",
        help="find the most discriminated group in a data file (RUMIE evidence)",
        description="Mine RUMIE evidence: the most discriminated group nobody declared, its key "
        "attributes, readable rules and DScore (in-sample and held-out, with a p-value).",
        epilog=EPILOG,
    )
    p.add_argument("--data", required=True, metavar="FILE", help="CSV or Parquet file of raw rows")
    src = p.add_mutually_exclusive_group(required=True)
    src.add_argument("--favorable-col", metavar="COL", help="column holding the model's decision")
    src.add_argument(
        "--model", metavar="REGISTRY_URI[:NAME[:VERSION]]",
        help="score the rows with a registry snapshot; favorable = predicted class 1",
    )
    p.add_argument("--favorable-value", metavar="V",
                   help="value of --favorable-col that is favorable (default: the column is 0/1 or bool)")
    p.add_argument("--attributes", nargs="+", metavar="COL",
                   help="attribute set A (default: every other column; with --model the model's features)")
    p.add_argument("--k", type=int, default=5, help="number of key (encoded) attributes (default 5)")
    p.add_argument("--alpha", type=float, default=0.45, help="minimum group size fraction (default 0.45)")
    p.add_argument("--beta", type=float, default=0.55, help="maximum group size fraction (default 0.55)")
    p.add_argument("--method", choices=["ie", "ie-dt", "enum"], default="ie-dt", help="default ie-dt")
    p.add_argument("--lam", type=float, default=1.0, help="sparsity weight lambda (default 1)")
    p.add_argument("--iterations", type=int, default=2500, help="gradient steps (default 2500)")
    p.add_argument("--lr", type=float, default=0.1, help="learning rate (default 0.1)")
    p.add_argument("--device", default=None, help="torch device (default: cuda when available)")
    p.add_argument("--seed", type=int, default=0, help="random_state (default 0)")
    p.add_argument("--no-significance", action="store_true", help="skip the split-sample test")
    p.add_argument("--enum-budget", type=float, default=60.0, metavar="S",
                   help="time budget of --method enum in seconds (default 60)")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.set_defaults(func=run)


def parse_model_ref(ref: str) -> tuple[str, str | None, str]:
    """``REGISTRY_URI[:NAME[:VERSION]]`` -> (uri, name or None, version); a ``scheme://`` is kept.

    >>> parse_model_ref("memory://reg:credit:v2")
    ('memory://reg', 'credit', 'v2')
    >>> parse_model_ref("./registry")
    ('./registry', None, 'latest')
    """
    scheme = ""
    rest = ref
    if "://" in ref:
        scheme, rest = ref.split("://", 1)
        scheme += "://"
    parts = rest.split(":")
    if not parts[0] or len(parts) > 3 or any(not x for x in parts[1:]):
        raise ConfigError(ERR_MODEL_REF.format(ref=ref))
    name = parts[1] if len(parts) > 1 else None
    version = parts[2] if len(parts) > 2 else "latest"
    return scheme + parts[0], name, version


def _read(path: str) -> Any:
    try:
        if file_format(path) == "parquet":
            return pd.read_parquet(path)
        return pd.read_csv(path)
    except (OSError, ValueError) as exc:
        raise DatasetError(ERR_READ.format(path=path, error=exc)) from exc


def run(args: argparse.Namespace) -> int:
    df = _read(args.data)
    attributes = args.attributes
    if args.model:
        uri, name, version = parse_model_ref(args.model)
        reg = Registry(uri)
        if name is None:
            names = reg.names()
            if len(names) != 1:
                raise ConfigError(ERR_ONE_MODEL.format(uri=uri, names=names))
            name = names[0]
        model = reg.load(name, version, device=args.device)
        favorable: Any = np.asarray(model.predict(df)) == 1
        if attributes is None:
            attributes = [c for c in model.schema.names if c in df.columns]
            print(WARN_MODEL_INPUTS.format(columns=attributes), file=sys.stderr)
    else:
        col = args.favorable_col
        if col not in df.columns:
            raise ConfigError(ERR_NO_COLUMN.format(column=col, file=args.data, columns=list(df.columns)))
        missing = int(df[col].isna().sum())
        if missing:
            raise ConfigError(ERR_COLUMN_NAN.format(column=col, file=args.data, count=missing))
        if args.favorable_value is None and not _is_binary(df[col]):
            shown = sorted(df[col].astype(str).unique().tolist())[:10]
            raise ConfigError(ERR_NOT_BINARY.format(column=col, file=args.data, values=shown, example=shown[-1]))
        if args.favorable_value is not None:
            as_text = df[col].astype(str)
            if not (as_text == args.favorable_value).any():
                shown = sorted(as_text.unique().tolist())[:10]
                raise ConfigError(ERR_FAVORABLE_VALUE.format(value=args.favorable_value, column=col, values=shown))
            favorable = (as_text == args.favorable_value).to_numpy()
        else:
            favorable = df[col]
        if attributes is None:
            attributes = [c for c in df.columns if c != col]
        else:
            attributes = [a for a in attributes if a != col]
    for column, words in _mostly_numbers(df, attributes):
        print(WARN_MOSTLY_NUMBERS.format(column=column, file=args.data, count=len(words),
                                         values=sorted(map(str, words.unique()))[:5]), file=sys.stderr)
    ev = mine(
        df, favorable, attributes=attributes, k=args.k, alpha=args.alpha, beta=args.beta, lam=args.lam,
        method=args.method, iterations=args.iterations, lr=args.lr, device=args.device,
        random_state=args.seed, significance="none" if args.no_significance else "split",
        enum_time_budget_s=args.enum_budget,
    )
    if args.json:
        print(json.dumps(ev.to_dict(), indent=2, allow_nan=False))
    else:
        print(ev.summary())
    return 0


def _mostly_numbers(df: pd.DataFrame, columns: Any) -> list[tuple[str, pd.Series]]:
    """Text columns among ``columns`` whose values are numbers but for a few (at most 5 %): a typo made
    the whole column text, so RUMIE would split it into one category per value. Returns each with the
    values that are not numbers."""
    out = []
    for c in columns:
        if c not in df.columns:
            continue
        words = non_numbers(df[c])
        if 0 < len(words) <= 0.05 * int(df[c].notna().sum()):
            out.append((str(c), words))
    return out


def _is_binary(col: Any) -> bool:
    """0/1 or bool values only (what ``mine`` accepts as decisions without --favorable-value)."""
    try:
        return all(v in (0, 1) or v is True or v is False for v in col.unique().tolist())
    except TypeError:
        return False
