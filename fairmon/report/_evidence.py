"""The report section "Discriminated group (RUMIE)" from the window's stored evidence row.

Why its own module: with the rule search (IE-DT's default since issue 19) the group in the cards and the
rules is the search's compact rule set, while the tree is IE-DT's own model of the group. The two overlap
but are not the same rows, so the page must say whose numbers each part shows — a reader who compares
the shaded leaves with the rules otherwise finds rows the rules leave out drawn as "discriminated".
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from typing import TYPE_CHECKING, Any

from fairmon.report import charts
from fairmon.report.charts import fmt_num, fmt_p
from fairmon.results import evidence_from_record

if TYPE_CHECKING:  # pragma: no cover
    from fairmon.fairness.rumie import Evidence
    from fairmon.store import EvidenceRecord

__all__ = ["evidence_context", "tree_note"]

#: DScores closer than this are the same group: the rule search kept IE-DT's own rules
_SAME = 1e-9


def _leaves(node: Mapping[str, Any]) -> Iterator[Mapping[str, Any]]:
    if "leaf" in node:
        yield node
        return
    for side in ("left", "right"):
        child = node.get(side)
        if isinstance(child, Mapping):
            yield from _leaves(child)


def _rate(leaves: list[Mapping[str, Any]]) -> float | None:
    rows = [(int(x.get("size") or 0), float(x["p_fav"])) for x in leaves if x.get("p_fav") is not None]
    total = sum(n for n, _ in rows)
    return sum(n * p for n, p in rows) / total if total else None


def tree_note(e: Evidence) -> str | None:
    """Whose group the tree's shaded leaves are, when it is not the group shown above them.

    None when there is no tree, or when the rule search kept IE-DT's own group (the shaded leaves are
    the group in the cards). Otherwise a sentence giving IE-DT's group (rows, in-sample DScore, rules,
    P(favorable) inside / outside, from the tree's leaves) beside the search's.

    >>> from fairmon.results import evidence_from_dict
    >>> leaf = lambda i, n, p, g: {"leaf": i, "size": n, "p_fav": p, "in_group": g}
    >>> tree = {"root": {"split": {"column": "age", "threshold": 30}, "left": leaf(1, 40, 0.5, True),
    ...                  "right": leaf(2, 60, 0.9, False)}}
    >>> e = evidence_from_dict({"method": "ie-dt", "dscore": 0.5, "rules": ["age <= 25"], "tree": tree,
    ...                         "search": {"rule_search": {"ie_dt_dscore": 0.4, "ie_dt_n_rules": 1}}})
    >>> tree_note(e).split(". ")[0]
    "The shaded leaves are IE-DT's own group: 40 rows, in-sample DScore 0.4, 1 rule, P(favorable) 0.5 inside / 0.9 outside"
    """
    if not isinstance(e.tree, Mapping) or not isinstance(e.tree.get("root"), Mapping):
        return None
    rs = (e.search or {}).get("rule_search")
    if not isinstance(rs, Mapping) or rs.get("ie_dt_dscore") is None or e.dscore is None:
        return None
    ie_dt = float(rs["ie_dt_dscore"])
    if abs(ie_dt - float(e.dscore)) <= _SAME:
        return None
    leaves = list(_leaves(e.tree["root"]))
    inside = [x for x in leaves if x.get("in_group")]
    outside = [x for x in leaves if not x.get("in_group")]
    size = sum(int(x.get("size") or 0) for x in inside)
    n_rules = rs.get("ie_dt_n_rules")
    rules = f", {n_rules} rule{'s' if n_rules != 1 else ''}" if n_rules is not None else ""
    shown = len(e.rules) or (1 if e.rule else 0)
    return (
        f"The shaded leaves are IE-DT's own group: {size:,} rows, in-sample DScore {fmt_num(ie_dt)}{rules}, "
        f"P(favorable) {fmt_num(_rate(inside))} inside / {fmt_num(_rate(outside))} outside. The cards and the "
        f"rules below show the rule search's group instead (in-sample DScore {fmt_num(e.dscore)}, {shown} "
        f"rule{'s' if shown != 1 else ''}): the fewest conditions within ε of the best group the search found "
        "from IE-DT's. The two overlap but are not the same rows. A leaf is shaded when most of its rows are "
        "in IE's group, whatever its own P(favorable)."
    )


def evidence_context(ev: EvidenceRecord | None, draw: Callable[..., str | None]) -> dict[str, Any] | None:
    """The template's ``evidence`` (None without a stored evidence row; ``draw`` turns a chart into an image)."""
    if ev is None:
        return None
    e = evidence_from_record(ev)  # the Evidence the window computed
    rules = list(e.rules) or ([e.rule] if e.rule else [])
    tree = e.tree if isinstance(e.tree, Mapping) else None
    note = tree_note(e)
    return {
        "method": f"{e.method} + rule search" if note else e.method,
        "status": e.status,
        "reason": e.reason,
        "dscore": fmt_num(e.dscore),
        "honest": fmt_num(e.honest_dscore),
        "p_value": fmt_p(e.p_value),
        "group_size": f"{e.group_size:,}" if e.group_size or e.status == "ok" else "",
        "fraction": f"{e.fraction:.1%}" if ev.group_fraction is not None else "",
        "n": f"{e.n_rows:,}" if e.n_rows else "",
        "p_fav_in": fmt_num(e.p_fav_in),
        "p_fav_out": fmt_num(e.p_fav_out),
        "key_attributes": list(e.key_attributes),
        "key_features": [
            {"encoded": k.get("encoded", ""), "weight": fmt_num(k.get("weight"))}
            for k in e.key_features
            if isinstance(k, Mapping)
        ],
        "rules": rules,
        "overlap": fmt_num(ev.group_overlap) if ev.group_overlap is not None else "",
        "tree_img": draw(charts.tree_chart, tree),
        "tree_leaves": tree.get("n_leaves") if tree is not None else None,
        "tree_note": note,
    }
