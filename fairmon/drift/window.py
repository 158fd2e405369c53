"""What the drift decision sees of one window: a small, serialisable summary.

:class:`WindowSummary` is built from the stored (or just computed) results of one window — the
outcome rows, RUMIE ``Evidence.to_dict()`` and ``GESDResult.to_dict()`` — and exposes them as
named series (:class:`Measurement` per ``(metric, group)``), so checks never care where a number
came from.

Series names
------------
* outcome rows: ``(metric, attribute)`` for disparities (``("dp_difference", "sex")``) and
  ``(metric, "attribute=group")`` for per-group rows (``("selection_rate", "sex=female")``); only rows
  with status ``ok``. Their intervals are at the window's :attr:`WindowSummary.ci_level` (the
  monitor's ``outcome.confidence``).
* RUMIE: ``("rumie_honest_dscore", "")`` (value = honest DScore, ``p_value`` from the evidence, a
  95 % Wald interval from :func:`honest_dscore_se`) and
  ``("rumie_dscore", "")`` (the in-sample DScore, for display).
* GESD: ``("gesd", attribute)`` per sensitive attribute (value, Mann–Whitney ``p_value``); a single
  result without an ``attribute`` entry is ``("gesd", "")``.

Example
-------
>>> from datetime import datetime, UTC
>>> w = WindowSummary(monitor="demo", window_start=datetime(2026, 1, 1, tzinfo=UTC),
...                   evidence={"honest_dscore": 0.12, "p_value": 0.001, "key_attributes": ["age"]})
>>> w.measurements()[("rumie_honest_dscore", "")].value
0.12
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from statistics import NormalDist
from typing import Any

from fairmon._numbers import finite_float
from fairmon.fairness.rumie import Evidence
from fairmon.results import evidence_from_dict

__all__ = ["Measurement", "WindowSummary", "gesd_by_attribute", "honest_dscore_se", "COMPLETED"]

#: run status of a window that may serve as history
COMPLETED = "completed"

def gesd_by_attribute(gesd: Any) -> dict[str, Mapping[str, Any]]:
    """GESD results keyed by sensitive attribute.

    Takes what a window carries: the pipeline's ``{attribute: GESDResult.to_dict()}``, or one result
    (a :class:`~fairmon.explain.gesd.GESDResult` or its dict), keyed by its ``attribute`` entry
    (``""`` without one). None or empty gives ``{}``.

    >>> sorted(gesd_by_attribute({"sex": {"value": 0.1}, "race": {"value": 0.2}}))
    ['race', 'sex']
    >>> gesd_by_attribute({"value": 0.1, "p_value": 0.5})
    {'': {'value': 0.1, 'p_value': 0.5}}
    """
    if not gesd:
        return {}
    if hasattr(gesd, "to_dict"):
        gesd = gesd.to_dict(instances=False)
    if "value" in gesd and not isinstance(gesd["value"], Mapping):  # one result, not a mapping of them
        return {str(gesd.get("attribute") or ""): gesd}
    return {str(attr): res for attr, res in gesd.items() if isinstance(res, Mapping)}


_Z975 = 1.959963984540054


def honest_dscore_se(
    evidence: Evidence | Mapping[str, Any] | None, honest: float, p_value: float | None
) -> float | None:
    """Standard error of RUMIE's held-out (honest) DScore (its series carries a 95 % Wald interval).

    From the held-out half's counts when the evidence has them (``significance.test_group_size``,
    ``n_test``, ``test_p_fav_in/out``: the unpooled two-proportion standard error), else from the
    split test's one-sided p-value (``se = honest / z``). None when neither is available.

    >>> round(honest_dscore_se({"significance": {"n_test": 2000, "test_group_size": 1000,
    ...     "test_p_fav_in": 0.4, "test_p_fav_out": 0.5}}, 0.1, None), 4)
    0.0221
    >>> round(honest_dscore_se({}, 0.16, 2.2e-16), 4)  # z = 8.1
    0.0197
    """
    if isinstance(evidence, Evidence):
        sig: Mapping[str, Any] = evidence.significance
    else:
        sig = (evidence or {}).get("significance") or {}
    n_test, n_in = sig.get("n_test"), sig.get("test_group_size")
    p_in, p_out = finite_float(sig.get("test_p_fav_in")), finite_float(sig.get("test_p_fav_out"))
    if n_test and n_in and p_in is not None and p_out is not None and 0 < n_in < n_test:
        var = p_in * (1 - p_in) / n_in + p_out * (1 - p_out) / (n_test - n_in)
        if var > 0:
            return math.sqrt(var)
    if p_value is not None and 0.0 < p_value < 0.5 and honest > 0:
        z = -NormalDist().inv_cdf(p_value)  # accurate for tiny p (1 - p would round to 1)
        if z > 0:
            return honest / z
    return None


def series_key(row: Mapping[str, Any]) -> str:
    """The group part of an outcome row's series key: the attribute (``sex``), or ``sex=Female``.

    >>> series_key({"attribute": "sex", "group": None}), series_key({"attribute": "sex", "group": "F"})
    ('sex', 'sex=F')
    """
    attr, group = str(row.get("attribute")), row.get("group")
    return attr if group is None or group == "" else f"{attr}={group}"


@dataclass(frozen=True)
class Measurement:
    """One number of one window with its uncertainty (any of the extras may be missing).

    ``level`` is the confidence level of ``[ci_low, ci_high]`` (two-sided): checks turn the interval
    into a standard error with it and messages print it.
    """

    value: float
    ci_low: float | None = None
    ci_high: float | None = None
    n: int | None = None
    p_value: float | None = None
    level: float = 0.95
    #: the value a metric shows on pure noise at this sample size (GESD's permutation null); a value or a
    #: change below it is not evidence of drift
    noise_floor: float | None = None

    @property
    def ci(self) -> tuple[float, float] | None:
        """``(low, high)`` when both bounds are finite."""
        if self.ci_low is None or self.ci_high is None:
            return None
        if not (math.isfinite(self.ci_low) and math.isfinite(self.ci_high)):
            return None
        return (self.ci_low, self.ci_high)


def _row_dict(row: Any) -> dict[str, Any]:
    """A metric row as a dict: ``MetricRow``/``MetricRecord`` (dataclasses) or a mapping."""
    if hasattr(row, "to_dict"):
        return dict(row.to_dict())
    if dataclasses.is_dataclass(row) and not isinstance(row, type):
        return dataclasses.asdict(row)
    return dict(row)


@dataclass(frozen=True)
class WindowSummary:
    """The results of one completed (or current) window, as the drift decision consumes them.

    Parameters
    ----------
    monitor, window_start, window_end
        Identity of the window.
    metrics
        Outcome rows as mappings with ``metric, attribute, group, value, ci_low, ci_high, n, status``
        (``MetricRow.to_dict()`` or the store's ``MetricRecord`` as a dict; a ``group`` of None or
        ``""`` marks an attribute-level disparity; rows without ``status`` count as ``ok``, rows with
        value None as missing).
    evidence
        RUMIE :class:`~fairmon.fairness.rumie.Evidence` (its ``to_dict()`` is decoded to one), or None
        when RUMIE did not run.
    gesd
        GESD per sensitive attribute, ``{attribute: GESDResult.to_dict()}``, or one result (see
        :func:`gesd_by_attribute`); None when GESD did not run.
    group_overlap
        Jaccard overlap of this window's RUMIE group with the previous window's group, measured on
        this window's rows: ``|S_now ∩ S_prev| / |S_now ∪ S_prev|`` where ``S_prev`` is the previous
        window's rules (its pruned tree) applied to the current rows. The pipeline computes it (it
        holds both); None when unknown (the new-group check is then skipped and the
        key-attribute check still runs).
    status
        ``completed`` windows may serve as history; anything else is ignored there.
    ci_level
        Confidence level of the outcome rows' intervals (``OutcomeResult.confidence``, the monitor's
        ``outcome.confidence``); :meth:`build` takes it from the outcome result.
    """

    monitor: str
    window_start: datetime
    window_end: datetime | None = None
    metrics: Sequence[Mapping[str, Any]] = ()
    evidence: Evidence | None = None
    gesd: Mapping[str, Any] | None = None
    group_overlap: float | None = None
    model_version: str | None = None
    status: str = COMPLETED
    extra: Mapping[str, Any] = field(default_factory=dict)
    ci_level: float = 0.95

    def __post_init__(self) -> None:
        if self.evidence is not None and not isinstance(self.evidence, Evidence):
            object.__setattr__(self, "evidence", evidence_from_dict(self.evidence))

    @classmethod
    def build(
        cls,
        monitor: str,
        window_start: datetime,
        window_end: datetime | None = None,
        *,
        outcome: Any = None,
        evidence: Any = None,
        gesd: Any = None,
        group_overlap: float | None = None,
        model_version: str | None = None,
        status: str = COMPLETED,
    ) -> WindowSummary:
        """Build from result objects (``OutcomeResult``, ``Evidence``, ``GESDResult``) or their dicts.

        The outcome result's ``confidence`` becomes :attr:`ci_level` (0.95 when it has none).
        """
        rows: Iterable[Any] = ()
        level = finite_float(getattr(outcome, "confidence", None) if not isinstance(outcome, Mapping)
                   else outcome.get("confidence"))
        if outcome is not None:
            rows = getattr(outcome, "rows", None) or (outcome.get("rows", ()) if isinstance(outcome, Mapping) else outcome)
        metrics = tuple(_row_dict(r) for r in rows)
        gd = gesd_by_attribute(gesd) or None
        return cls(
            monitor=monitor, window_start=window_start, window_end=window_end, metrics=metrics,
            evidence=evidence, gesd=gd, group_overlap=group_overlap, model_version=model_version, status=status,
            ci_level=level if level is not None else 0.95,
        )

    def metric_row(self, metric: str, key: str) -> Mapping[str, Any] | None:
        """The stored outcome row of the series ``(metric, key)`` (any status), or None."""
        return next((r for r in self.metrics if r.get("metric") == metric and series_key(r) == key), None)

    def measurements(self) -> dict[tuple[str, str], Measurement]:
        """All series of this window keyed by ``(metric, group)`` (see module docstring)."""
        out: dict[tuple[str, str], Measurement] = {}
        for row in self.metrics:
            if row.get("status", "ok") != "ok":
                continue
            value = finite_float(row.get("value"))
            if value is None:
                continue
            out[(str(row["metric"]), series_key(row))] = Measurement(
                value, finite_float(row.get("ci_low")), finite_float(row.get("ci_high")), row.get("n"), None, level=self.ci_level
            )
        ev = self.evidence
        honest = finite_float(ev.honest_dscore) if ev is not None else None
        if ev is not None and honest is not None:
            p = finite_float(ev.p_value)
            se = honest_dscore_se(ev, honest, p)
            lo, hi = (honest - _Z975 * se, honest + _Z975 * se) if se is not None else (None, None)
            out[("rumie_honest_dscore", "")] = Measurement(honest, lo, hi, n=ev.group_size, p_value=p)
        insample = finite_float(ev.dscore) if ev is not None else None
        if ev is not None and insample is not None:
            out[("rumie_dscore", "")] = Measurement(insample, n=ev.group_size)
        for attr, gd in gesd_by_attribute(self.gesd).items():
            g = finite_float(gd.get("value"))
            if g is not None:
                out[("gesd", attr)] = Measurement(g, p_value=finite_float(gd.get("p_value")), noise_floor=finite_float(gd.get("noise_floor")))
        return out

    @property
    def key_attributes(self) -> tuple[str, ...]:
        """RUMIE key attributes (original column names), sorted; empty without evidence."""
        attrs = self.evidence.key_attributes if self.evidence is not None else []
        return tuple(sorted({str(a) for a in attrs}))
