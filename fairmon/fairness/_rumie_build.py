"""Assembling RUMIE's :class:`Evidence`: key attributes, rules, the tree as JSON, IE's linear rule."""

from __future__ import annotations

import time
from typing import Any

import numpy as np
import pandas as pd

from fairmon.errors import MethodError
from fairmon.fairness._rumie_core import Found
from fairmon.fairness._rumie_evidence import Evidence
from fairmon.fairness._rumie_inputs import Prepared
from fairmon.fairness._rumie_stats import dscore, group_rates, within_bounds
from fairmon.fairness._rumie_tree import render_rules
from fairmon.rules import RuleSet
from fairmon.rules_sql import to_sql_predicate
from fairmon.schema import FeatureSchema

__all__ = ["build_evidence", "key_features", "linear_rule_text", "sql_predicate", "tree_json"]


def key_features(theta: np.ndarray, schema: FeatureSchema) -> tuple[list[str], list[dict[str, Any]]]:
    """Key attributes (original columns, by weight) and their encoded detail from IE's ``theta``."""
    names, cols = schema.encoded_names, schema.encoded_to_column
    order = [int(j) for j in np.argsort(-np.abs(theta), kind="stable") if theta[j] != 0.0]
    feats: list[dict[str, Any]] = []
    keys: list[str] = []
    for j in order:
        col = cols[j]
        cat = names[j].split("=", 1)[1] if schema.column(col).kind == "categorical" else None
        feats.append({"encoded": names[j], "column": col, "category": cat, "weight": float(theta[j])})
        if col not in keys:
            keys.append(col)
    return keys, feats


def tree_json(found: Found, p: Prepared) -> dict[str, Any]:
    """The pruned IE-DT tree as nested JSON (splits in original units, leaves with sizes and rates)."""
    Z, fav, schema = p.Z, p.fav, p.schema
    tree = found.tree
    assert tree is not None
    t = tree.estimator.tree_
    leaf_ids = tree.leaf_ids(Z)
    n = Z.shape[0]
    boxes = tree.leaf_boxes()
    names = schema.encoded_names

    def node(i: int) -> dict[str, Any]:
        if i in boxes:
            rows = leaf_ids == i
            size = int(rows.sum())
            rule = render_rules([boxes[i]], schema, p.decimals)[0]
            return {
                "leaf": i, "size": size, "fraction": size / n,
                "p_fav": float(fav[rows].mean()) if size else None,
                "in_group": bool(tree.in_group[i]), "path": rule.text,
            }
        j = tree.features[int(t.feature[i])]
        thr = float(t.threshold[i])
        col = schema.encoded_to_column[j]
        if schema.column(col).kind == "numeric":
            split = {"column": col, "threshold": schema.to_original_value(col, thr), "left": "<=", "right": ">"}
        else:
            split = {"column": col, "category": names[j].split("=", 1)[1], "left": "!=", "right": "="}
        return {"split": split, "left": node(int(t.children_left[i])), "right": node(int(t.children_right[i]))}

    return {
        "ccp_alpha": tree.ccp_alpha,
        "n_leaves": len(tree.leaves),
        "n_leaves_unpruned": tree.n_leaves_unpruned,
        "features": [names[j] for j in tree.features],
        "root": node(0),
    }


def build_evidence(
    found: Found, p: Prepared, method: str, settings: dict[str, Any], honest: float | None,
    p_value: float | None, sig: dict[str, Any], timings: dict[str, float], t_start: float,
) -> Evidence:
    """The :class:`Evidence` of a successful mining run (group, rules, key attributes, tree)."""
    Z, fav, schema = p.Z, p.fav, p.schema
    n = Z.shape[0]
    mask = found.mask
    p_in, p_out = group_rates(fav, mask)
    size = int(mask.sum())
    ev = Evidence(
        method=method, status="ok", reason="", n_rows=n, mask=mask, dscore=p_out - p_in, p_fav_in=p_in,
        p_fav_out=p_out, group_size=size, fraction=size / n,
        within_bounds=within_bounds(size, n, settings["alpha"], settings["beta"]),
        honest_dscore=honest, p_value=p_value, significance=sig, timings=timings, settings=settings,
        search=found.search,
    )
    if found.enum is not None:
        conds = found.enum.conditions
        ev.key_attributes = list(dict.fromkeys(c.column for c in conds))
        ev.key_features = [{"encoded": c.text, "column": c.column, "category": None, "weight": None} for c in conds]
        text = " AND ".join(c.text for c in conds)
        ev.rules, ev.rule = [text], text
        ev.rule_conditions = [[c.to_dict() for c in conds]]
        ev.sql_predicate = sql_predicate(RuleSet((tuple(conds),)), p.raw)
    else:
        assert found.theta is not None
        ev.key_attributes, ev.key_features = key_features(found.theta, schema)
        names = schema.encoded_names
        ev.theta = {names[j]: float(found.theta[j]) for j in np.nonzero(found.theta)[0]}
        ev.bias, ev.threshold = float(found.bias), float(found.tau)
        assert found.ie_mask is not None
        ev.ie_dscore = dscore(fav, found.ie_mask)
        if found.tree is not None:
            rules = found.reported or found.tree_rules
            assert rules is not None
            ev.rules, ev.rule, ev.rule_conditions = rules.rule_texts, rules.text, rules.to_dicts()
            ev.sql_predicate = sql_predicate(rules, p.raw)
            ev.tree = tree_json(found, p)
            if found.rule_search is not None:
                ev.rules_best, ev.rules_simplest = found.rule_search.best, found.rule_search.simplest
                ev.rules_ie_dt = found.rule_search.reference
        else:
            ev.rule = linear_rule_text(found.theta, found.bias, found.tau, schema)
            ev.rules = [ev.rule]
    ev.runtime_s = time.perf_counter() - t_start
    return ev


def sql_predicate(rules: RuleSet, raw: pd.DataFrame) -> str | None:
    """The rule set as a PostgreSQL predicate over the source's columns (numeric: the numeric,
    non-boolean columns, as :mod:`fairmon.rules` compares them); None when a value cannot be rendered.

    Examples
    --------
    >>> from fairmon.rules import parse_rules
    >>> sql_predicate(parse_rules("age <= 30"), pd.DataFrame({"age": [20, 40]}))
    '("age" <= 30)'
    """
    numeric = {str(c) for c in raw.columns
               if pd.api.types.is_numeric_dtype(raw[c]) and not pd.api.types.is_bool_dtype(raw[c])}
    try:
        return to_sql_predicate(rules, numeric_columns=numeric)
    except MethodError:
        return None


def linear_rule_text(theta: np.ndarray, b: float, tau: float, schema: FeatureSchema) -> str:
    """IE's group ``theta.z + b >= tau`` in original units: ``sum w_j * term_j >= c``."""
    names, cols = schema.encoded_names, schema.encoded_to_column
    const = tau - b
    terms: list[str] = []
    for j in np.argsort(-np.abs(theta), kind="stable"):
        w = float(theta[j])
        if w == 0.0:
            continue
        spec = schema.column(cols[j])
        if spec.kind == "numeric":
            # w * (x - mean) / scale  ->  (w/scale) * x - w*mean/scale
            coef = w / spec.scale
            const += w * spec.mean / spec.scale
            terms.append(f"{coef:+.4g}*{spec.name}")
        else:
            terms.append(f"{w:+.4g}*[{names[j].replace('=', ' = ', 1)}]")
    return f"{' '.join(terms)} >= {const:.4g}"
