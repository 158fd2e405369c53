"""The one codec of the typed method results: artifact dicts ↔ objects, store records ↔ objects.

Every result travels between the pipeline's steps as its own type — :class:`~fairmon.fairness.rumie.Evidence`,
:class:`~fairmon.fairness.outcome.OutcomeResult`, :class:`~fairmon.explain.gesd.GESDResult` — and is
written to an artifact with :func:`encode` and read back with :func:`decode`. Each type's ``to_dict``
is its serialised form; the decoders here are their inverses (the method modules own the types, this
module owns reading them back). The store keeps RUMIE evidence in an
:class:`~fairmon.store.EvidenceRecord`; :func:`evidence_record` and :func:`evidence_from_record` are the
one mapping between the two, so drift history, the report and the alerts read the same
:class:`Evidence` the window computed.

Examples
--------
>>> ev = evidence_from_dict({"method": "ie-dt", "status": "ok", "dscore": 0.2, "honest_dscore": 0.15,
...                          "rule": "age <= 30", "rules": ["age <= 30"], "fraction": 0.4, "group_size": 40})
>>> decode("evidence", encode(ev)).honest_dscore
0.15
>>> evidence_from_record(evidence_record(ev)).rule
'age <= 30'
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from fairmon._numbers import finite_float
from fairmon.errors import MethodError
from fairmon.explain.gesd import GESDResult, GroupStability, PairwiseTest
from fairmon.fairness.outcome import MetricRow, OutcomeResult
from fairmon.fairness.rumie import Evidence
from fairmon.store.records import EvidenceRecord

__all__ = [
    "encode",
    "decode",
    "evidence_from_dict",
    "outcome_from_dict",
    "gesd_from_dict",
    "evidence_record",
    "evidence_from_record",
    "ERR_UNKNOWN_KIND",
    "ERR_NOT_ENCODABLE",
]

ERR_UNKNOWN_KIND = "no decoder for result kind {kind!r}; known kinds: {known}"
ERR_NOT_ENCODABLE = "cannot encode a {type} as a result artifact"

#: the columns of an EvidenceRecord that have their own field; every other Evidence field is in details
_RECORD_FIELDS = frozenset({
    "method", "dscore", "honest_dscore", "p_value", "key_attributes", "rules", "rule", "tree", "group_size",
    "fraction", "p_fav_in", "p_fav_out", "n_rows",
})


def _nan(value: Any) -> float:
    """A float, None read as NaN (the method types keep undefined numbers as NaN)."""
    v = finite_float(value)
    return float("nan") if v is None else v


# ------------------------------------------------------------------------------------------ Evidence


def evidence_from_dict(d: Mapping[str, Any]) -> Evidence:
    """An :class:`Evidence` from ``Evidence.to_dict()`` (the mask from ``group_rows`` when present).

    Fields a partial dict leaves out take the values of "not computed": no rows, no group.

    Examples
    --------
    >>> ev = evidence_from_dict({"honest_dscore": 0.12, "p_value": 0.001, "key_attributes": ["age"]})
    >>> ev.honest_dscore, ev.key_attributes, ev.rule
    (0.12, ['age'], '')
    """
    n_rows = int(d.get("n_rows") or 0)
    mask = np.zeros(n_rows, dtype=bool)
    if d.get("group_rows") is not None:
        mask[np.asarray(d["group_rows"], dtype=int)] = True
    rules = d.get("rules")
    rules_list = [str(r) for r in rules] if isinstance(rules, list | tuple) else ([str(rules)] if rules else [])
    rule = str(d.get("rule") or (" OR ".join(rules_list) if not isinstance(rules, list | tuple) else ""))
    return Evidence(
        method=str(d.get("method") or "ie-dt"),
        status=d.get("status") or "ok",
        reason=str(d.get("reason") or ""),
        n_rows=n_rows,
        mask=mask,
        dscore=finite_float(d.get("dscore")),
        p_fav_in=finite_float(d.get("p_fav_in")),
        p_fav_out=finite_float(d.get("p_fav_out")),
        group_size=int(d.get("group_size") or 0),
        fraction=float(finite_float(d.get("fraction")) or 0.0),
        within_bounds=bool(d.get("within_bounds", True)),
        key_attributes=[str(a) for a in d.get("key_attributes") or ()],
        key_features=list(d.get("key_features") or ()),
        theta=dict(d.get("theta") or {}),
        bias=finite_float(d.get("bias")),
        threshold=finite_float(d.get("threshold")),
        rules=rules_list,
        rule=rule,
        rule_conditions=list(d.get("rule_conditions") or ()),
        tree=d.get("tree"),
        ie_dscore=finite_float(d.get("ie_dscore")),
        honest_dscore=finite_float(d.get("honest_dscore")),
        p_value=finite_float(d.get("p_value")),
        significance=dict(d.get("significance") or {}),
        runtime_s=float(d.get("runtime_s") or 0.0),
        timings=dict(d.get("timings") or {}),
        settings=dict(d.get("settings") or {}),
        search=dict(d.get("search") or {}),
        n_mined=_int_or_none(d.get("n_mined")),
        n_honest=_int_or_none(d.get("n_honest")),
        honest_group_size=_int_or_none(d.get("honest_group_size")),
        sql_predicate=None if d.get("sql_predicate") is None else str(d["sql_predicate"]),
    )


def _int_or_none(value: Any) -> int | None:
    return None if value is None else int(value)


def evidence_record(ev: Evidence, *, group_overlap: float | None = None) -> EvidenceRecord:
    """The store row of one window's evidence (``group_overlap``: Jaccard with the previous window's group).

    Rule text is the Evidence's :attr:`~Evidence.rule` (the ``rules_text`` column); every Evidence
    field without a column of its own goes to ``details``, so :func:`evidence_from_record` restores it.
    """
    d = ev.to_dict()
    return EvidenceRecord(
        method=ev.method,
        dscore=finite_float(ev.dscore),
        honest_dscore=finite_float(ev.honest_dscore),
        p_value=finite_float(ev.p_value),
        key_attributes=list(ev.key_attributes),
        rules=list(ev.rules),
        rules_text=ev.rule or None,
        tree=ev.tree,
        group_size=ev.group_size,
        group_fraction=finite_float(ev.fraction),
        p_fav_in=finite_float(ev.p_fav_in),
        p_fav_out=finite_float(ev.p_fav_out),
        n=ev.n_rows,
        group_overlap=finite_float(group_overlap),
        details={k: v for k, v in d.items() if k not in _RECORD_FIELDS},
    )


def evidence_from_record(rec: EvidenceRecord) -> Evidence:
    """The :class:`Evidence` a stored row holds (the inverse of :func:`evidence_record`, without the mask)."""
    return evidence_from_dict({
        **dict(rec.details),
        "method": rec.method,
        "dscore": rec.dscore,
        "honest_dscore": rec.honest_dscore,
        "p_value": rec.p_value,
        "key_attributes": list(rec.key_attributes),
        "rules": list(rec.rules) if isinstance(rec.rules, list | tuple) else rec.rules,
        "rule": rec.rules_text or "",
        "tree": rec.tree,
        "group_size": rec.group_size,
        "fraction": rec.group_fraction,
        "p_fav_in": rec.p_fav_in,
        "p_fav_out": rec.p_fav_out,
        "n_rows": rec.n,
    })


# ------------------------------------------------------------------------------------------ outcome, GESD


def outcome_from_dict(d: Mapping[str, Any]) -> OutcomeResult:
    """An :class:`OutcomeResult` from its ``to_dict()``.

    Examples
    --------
    >>> r = outcome_from_dict({"confidence": 0.9, "n_bootstrap": 0, "ci_method": "none", "random_state": 0,
    ...     "min_group_size": 1, "labels_pending": False, "rows": [{"metric": "dp_difference",
    ...     "attribute": "sex", "group": None, "value": 0.1, "ci_low": 0.0, "ci_high": 0.2, "n": 9, "n_nan": 0}]})
    >>> r.get("dp_difference", "sex").value, r.confidence
    (0.1, 0.9)
    """
    rows = tuple(
        MetricRow(
            metric=str(r["metric"]), attribute=str(r["attribute"]),
            group=None if r.get("group") is None else str(r["group"]),
            value=_nan(r.get("value")), ci_low=_nan(r.get("ci_low")), ci_high=_nan(r.get("ci_high")),
            n=int(r.get("n") or 0), n_nan=int(r.get("n_nan") or 0), status=r.get("status", "ok"),
        )
        for r in d.get("rows", ())
    )
    rs = d.get("random_state")
    return OutcomeResult(
        rows=rows, confidence=float(d.get("confidence", 0.95)), n_bootstrap=int(d.get("n_bootstrap") or 0),
        ci_method=str(d.get("ci_method") or ""), random_state=None if rs is None else int(rs),
        min_group_size=int(d.get("min_group_size") or 0), labels_pending=bool(d.get("labels_pending")),
        attributes=tuple(str(a) for a in d.get("attributes", ())),
    )


def gesd_from_dict(d: Mapping[str, Any]) -> GESDResult:
    """A :class:`GESDResult` from its ``to_dict()`` (per-instance arrays from ``instances`` when kept).

    Examples
    --------
    >>> import math
    >>> g = gesd_from_dict({"value": 0.06, "p_value": None, "status": "ok",
    ...                     "groups": [{"group": "f", "size": 5, "population": 9, "stability": 0.8}]})
    >>> g.group_stability, math.isnan(g.p_value)
    ({'f': 0.8}, True)
    """
    inst = list(d.get("instances") or ())
    return GESDResult(
        value=_nan(d.get("value")),
        p_value=_nan(d.get("p_value")),
        groups=tuple(
            GroupStability(group=g.get("group"), size=int(g.get("size") or 0), population=int(g.get("population") or 0),
                           stability=_nan(g.get("stability")), std=_nan(g.get("std")),
                           sufficient=bool(g.get("sufficient", True)))
            for g in d.get("groups", ())
        ),
        pairwise=tuple(
            PairwiseTest(group_a=p.get("group_a"), group_b=p.get("group_b"), u_statistic=_nan(p.get("u_statistic")),
                         p_value=_nan(p.get("p_value")), p_adjusted=_nan(p.get("p_adjusted")))
            for p in d.get("pairwise", ())
        ),
        instance_index=np.asarray([int(i["index"]) for i in inst], dtype=int),
        instance_group=np.asarray([i["group"] for i in inst], dtype=object),
        instance_stability=np.asarray([float(i["stability"]) for i in inst], dtype=float),
        components={str(k): dict(v) for k, v in (d.get("components") or {}).items()},
        settings=dict(d.get("settings") or {}),
        status=str(d.get("status") or "ok"),
        elapsed_s=float(d.get("elapsed_s") or 0.0),
    )


# ------------------------------------------------------------------------------------------ dispatch

_DECODERS: dict[str, Callable[[Mapping[str, Any]], Any]] = {
    "evidence": evidence_from_dict,
    "outcome": outcome_from_dict,
    "gesd": gesd_from_dict,
}
_ENCODERS: dict[type, Callable[[Any], dict[str, Any]]] = {
    Evidence: lambda ev: ev.to_dict(),
    OutcomeResult: lambda r: r.to_dict(),
    GESDResult: lambda g: g.to_dict(instances=False),
}


def register(kind: str, cls: type, encoder: Callable[[Any], dict[str, Any]],
             decoder: Callable[[Mapping[str, Any]], Any]) -> None:
    """Add a result type to the codec (its owner registers it: :class:`~fairmon.drift.Finding` does)."""
    _DECODERS[kind] = decoder
    _ENCODERS[cls] = encoder


def encode(obj: Any) -> dict[str, Any]:
    """The artifact form of a typed result (its ``to_dict``)."""
    for cls, enc in _ENCODERS.items():
        if isinstance(obj, cls):
            return enc(obj)
    raise MethodError(ERR_NOT_ENCODABLE.format(type=type(obj).__name__))


def decode(kind: str, data: Mapping[str, Any]) -> Any:
    """The typed result of ``kind`` (``evidence``, ``outcome``, ``gesd``, ``finding``) from its artifact form."""
    try:
        dec = _DECODERS[kind]
    except KeyError:
        raise MethodError(ERR_UNKNOWN_KIND.format(kind=kind, known=", ".join(sorted(_DECODERS)))) from None
    return dec(data)
