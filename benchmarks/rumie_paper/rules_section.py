"""The rules sections of the RUMIE benchmark (issue 17): readable rules versus IE-DT's own.

- ``rumie_paper_rules``: per dataset (COMPAS, Adult, German at k=5, alpha=.45, beta=.55) one IE-DT run
  with the rule search; IE-DT alone is the same run's tree (its rules scored on all rows, and on the
  held-out half of the split test, ``tree_honest_dscore``), so both columns come from the same IE
  optimum. Columns: DScore in-sample / held-out, group fraction, rules and conditions, for IE-DT alone
  and with the rule search; timings of IE, the tree and the search on the full rows (the search's
  cost relative to IE-DT: ``search_over_iedt``).
- ``rumie_paper_planted``: synthetic data with a planted group of four shapes (``planted.py``) at two
  flip rates; Jaccard of the reported and of IE-DT's group to the planted one.
"""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from fairmon.fairness import Evidence, mine
from fairmon.rules import RuleSet, jaccard

HERE = Path(__file__).resolve().parent


def _planted() -> Any:
    spec = importlib.util.spec_from_file_location("rumie_planted", HERE / "planted.py")
    assert spec and spec.loader
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _conditions(ev: Evidence) -> int:
    return RuleSet.from_dicts(ev.rule_conditions).n_conditions


def rules_rows(inputs: dict[str, tuple[pd.DataFrame, np.ndarray, str]], iterations: int) -> list[dict[str, Any]]:
    """One row per dataset: IE-DT alone versus with the rule search (module docstring)."""
    rows: list[dict[str, Any]] = []
    for name, (X, fav, _how) in inputs.items():
        ev = mine(X, fav, k=5, alpha=0.45, beta=0.55, method="ie-dt", iterations=iterations)
        tree, best = ev.rules_ie_dt, ev.rules_best
        rs = ev.search.get("rule_search", {})
        iedt_s = ev.search.get("optimise_s", 0.0) + ev.search.get("tree_s", 0.0)
        row = {
            "dataset": name, "rows": len(X),
            "iedt_dscore_in": tree.dscore if tree else None,
            "iedt_dscore_honest": ev.significance.get("tree_honest_dscore"),
            "iedt_fraction": tree.fraction if tree else None,
            "iedt_rules": tree.n_rules if tree else None,
            "iedt_conditions": tree.n_conditions if tree else None,
            "search_dscore_in": ev.dscore, "search_dscore_honest": ev.honest_dscore, "p_value": ev.p_value,
            "search_fraction": ev.fraction, "search_rules": len(ev.rules), "search_conditions": _conditions(ev),
            "best_dscore_in": best.dscore if best else None, "best_conditions": best.n_conditions if best else None,
            "rule": ev.rule if len(ev.rule) <= 200 else ev.rule[:200] + " ...",
            "within_eps_of_iedt": bool(tree is None or (ev.dscore or 0) >= tree.dscore - 0.01),
            "ie_s": round(ev.search.get("optimise_s", 0.0), 2), "tree_s": round(ev.search.get("tree_s", 0.0), 2),
            "search_s": round(rs.get("runtime_s", 0.0), 2),
            "search_over_iedt": round(rs.get("runtime_s", 0.0) / iedt_s, 3) if iedt_s else None,
            "total_s": round(ev.runtime_s, 2), "load1": round(os.getloadavg()[0], 2),
        }
        rows.append(row)
        print(row, flush=True)
    return rows


def planted_rows(n: int, iterations: int, seeds: list[int]) -> list[dict[str, Any]]:
    """Jaccard to the planted group per shape, flip rate and seed."""
    planted = _planted()
    rows: list[dict[str, Any]] = []
    for shape, text in planted.SHAPES.items():
        for flip in planted.FLIP_RATES:
            for seed in seeds:
                X, fav, member = planted.planted_shape(shape, n, flip=flip, random_state=seed)
                ev = mine(X, fav, k=5, iterations=iterations, significance="none", random_state=seed)
                tree = ev.rules_ie_dt
                row = {
                    "shape": shape, "planted": text, "flip": flip, "seed": seed, "rows": n,
                    "planted_dscore": float(fav[~member].mean() - fav[member].mean()),
                    "jaccard": jaccard(ev.mask, member), "rules": len(ev.rules), "conditions": _conditions(ev),
                    "dscore": ev.dscore, "rule": ev.rule,
                    "iedt_jaccard": jaccard(tree.rules.membership(X), member) if tree else None,
                    "iedt_rules": tree.n_rules if tree else None, "iedt_dscore": tree.dscore if tree else None,
                    "search_s": round(ev.search.get("rule_search", {}).get("runtime_s", 0.0), 2),
                    "total_s": round(ev.runtime_s, 2),
                }
                row["recovered"] = bool(row["jaccard"] is not None and row["jaccard"] >= 0.9 and row["rules"] <= 3
                                        and all(len(r) <= 3 for r in ev.rule_conditions))
                rows.append(row)
                print(row, flush=True)
    return rows
