"""RUMIE's result: :class:`Evidence` (one rich object; :meth:`Evidence.to_dict` for storage)."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np

from fairmon.fairness._rule_search import RuleSetScore

__all__ = ["Evidence", "Status", "fmt_p", "json_safe"]

Status = Literal["ok", "no_variation", "no_group_within_bounds"]


@dataclass
class Evidence:
    """The interpretable evidence of one RUMIE run (one rich result; :meth:`to_dict` for storage).

    ``dscore`` is ``P(fav | rest) - P(fav | group)`` on the mined rows (in-sample, optimistic);
    ``honest_dscore`` and ``p_value`` come from the held-out part of a split sample.
    With the rule search (IE-DT), ``mask``/``rule``/``rules``/``rule_conditions`` are the *reported*
    rule set (``rules_simplest``: the fewest conditions within epsilon of the best DScore found);
    ``rules_best`` is the best found and ``rules_ie_dt`` IE-DT's own rules, scored on the same rows.

    Sample sizes: the group was mined on ``n_mined`` rows and ``honest_dscore``/``p_value``/
    ``honest_group_size`` computed on ``n_honest`` rows it never saw. Mined on a sample
    (``mine(max_rows=...)``, ``n_mined < n_rows``), ``dscore``, ``p_fav_in``/``p_fav_out`` and the
    tree are in-sample on the mined rows, while ``mask``, ``group_size`` and ``fraction`` are the
    reported group on all ``n_rows`` rows and the honest rows are all the others. ``sql_predicate``
    is the reported rule set as a PostgreSQL ``WHERE`` predicate (:mod:`fairmon.rules_sql`), when
    the rules render as one.
    """

    method: str
    status: Status
    reason: str
    n_rows: int
    mask: np.ndarray
    dscore: float | None
    p_fav_in: float | None
    p_fav_out: float | None
    group_size: int
    fraction: float
    within_bounds: bool
    key_attributes: list[str] = field(default_factory=list)
    key_features: list[dict[str, Any]] = field(default_factory=list)
    theta: dict[str, float] = field(default_factory=dict)
    bias: float | None = None
    threshold: float | None = None
    rules: list[str] = field(default_factory=list)
    rule: str = ""
    rule_conditions: list[list[dict[str, Any]]] = field(default_factory=list)
    tree: dict[str, Any] | None = None
    ie_dscore: float | None = None
    honest_dscore: float | None = None
    p_value: float | None = None
    significance: dict[str, Any] = field(default_factory=dict)
    runtime_s: float = 0.0
    timings: dict[str, float] = field(default_factory=dict)
    settings: dict[str, Any] = field(default_factory=dict)
    search: dict[str, Any] = field(default_factory=dict)
    rules_best: RuleSetScore | None = None
    rules_simplest: RuleSetScore | None = None
    rules_ie_dt: RuleSetScore | None = None
    n_mined: int | None = None
    n_honest: int | None = None
    honest_group_size: int | None = None
    sql_predicate: str | None = None

    def to_dict(self, *, include_mask: bool = False) -> dict[str, Any]:
        """JSON-safe dict (NaN/inf become ``None``); the mask as row indices when asked."""
        out: dict[str, Any] = {
            "method": self.method,
            "status": self.status,
            "reason": self.reason,
            "n_rows": self.n_rows,
            "dscore": self.dscore,
            "honest_dscore": self.honest_dscore,
            "p_value": self.p_value,
            "p_fav_in": self.p_fav_in,
            "p_fav_out": self.p_fav_out,
            "group_size": self.group_size,
            "fraction": self.fraction,
            "within_bounds": self.within_bounds,
            "key_attributes": list(self.key_attributes),
            "key_features": list(self.key_features),
            "theta": dict(self.theta),
            "bias": self.bias,
            "threshold": self.threshold,
            "rule": self.rule,
            "rules": list(self.rules),
            "rule_conditions": self.rule_conditions,
            "tree": self.tree,
            "ie_dscore": self.ie_dscore,
            "significance": self.significance,
            "runtime_s": self.runtime_s,
            "timings": dict(self.timings),
            "settings": dict(self.settings),
            "search": dict(self.search),
            "rules_best": None if self.rules_best is None else self.rules_best.to_dict(),
            "rules_simplest": None if self.rules_simplest is None else self.rules_simplest.to_dict(),
            "rules_ie_dt": None if self.rules_ie_dt is None else self.rules_ie_dt.to_dict(),
            "n_mined": self.n_mined,
            "n_honest": self.n_honest,
            "honest_group_size": self.honest_group_size,
            "sql_predicate": self.sql_predicate,
        }
        if include_mask:
            out["group_rows"] = np.nonzero(self.mask)[0].tolist()
        safe: dict[str, Any] = json_safe(out)
        return safe

    def summary(self) -> str:
        """A few readable lines (what the CLI prints)."""
        lines = [f"RUMIE {self.method}: {self.status}"]
        if self.status != "ok":
            lines.append(f"  {self.reason}")
            return "\n".join(lines)
        lines.append(
            f"  group: {self.group_size} of {self.n_rows} rows ({self.fraction:.1%}), "
            f"P(favorable) {self.p_fav_in:.3f} inside vs {self.p_fav_out:.3f} outside"
        )
        lines.append(f"  DScore (in-sample): {self.dscore:.4f}")
        if self.honest_dscore is not None:
            lines.append(f"  DScore (held-out):  {self.honest_dscore:.4f}   p-value {fmt_p(self.p_value)}")
        elif self.significance.get("reason"):
            lines.append(f"  significance: {self.significance['reason']}")
        if self.key_attributes:
            detail = ", ".join(f["encoded"] for f in self.key_features)
            lines.append(f"  key attributes: {', '.join(self.key_attributes)}  ({detail})")
        lines.append("  rules (group = any of):")
        for r in self.rules:
            lines.append(f"    - {r}")
        best, shown = self.rules_best, self.rules_simplest
        if best is not None and shown is not None and best.rules != shown.rules:
            lines.append(f"  simplest within epsilon of the best found (DScore {best.dscore:.4f} with "
                         f"{best.n_conditions} conditions: {best.rules.text})")
        lines.append(f"  runtime: {self.runtime_s:.2f} s")
        return "\n".join(lines)


def fmt_p(p: float | None) -> str:
    """A p-value for people: scientific below 0.001."""
    if p is None:
        return "n/a"
    return f"{p:.2e}" if p < 1e-3 else f"{p:.4f}"


def json_safe(obj: Any) -> Any:
    """Plain JSON types (numpy scalars and arrays unwrapped, NaN/inf as ``None``)."""
    if isinstance(obj, dict):
        return {str(k): json_safe(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [json_safe(v) for v in obj]
    if isinstance(obj, (bool, np.bool_)):
        return bool(obj)
    if isinstance(obj, (int, np.integer)):
        return int(obj)
    if isinstance(obj, (float, np.floating)):
        v = float(obj)
        return v if math.isfinite(v) else None
    if isinstance(obj, np.ndarray):
        return json_safe(obj.tolist())
    return obj
