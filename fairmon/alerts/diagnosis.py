"""The alert lines of a window's diagnosis: "why disfavored" and "model or data?" (issue 19).

Built from the stored rows (:class:`~fairmon.store.AttributionGapRecord`,
:class:`~fairmon.store.RescoreRecord`) as Slack mrkdwn, every data-derived string escaped with
:func:`~fairmon.alerts.message.mrkdwn_escape`; they fill :attr:`AlertContext.why` and
:attr:`AlertContext.cause`.

Examples
--------
>>> from fairmon.store import AttributionGapRecord, RescoreRecord
>>> gap = AttributionGapRecord("declared", "ok", group_label="sex=F", features=(
...     {"feature": "age", "inside": -0.1, "outside": 0.02, "difference": -0.12, "ci_low": -0.15, "ci_high": -0.09},))
>>> why_lines([gap])
('_Why disfavored_ (`sex=F`, lowest favorable rate): `age` lowers P(favorable) by 0.12 more inside the group [-0.15, -0.09]',)
>>> cause_line([RescoreRecord("rumie_dscore", "rumie_honest_dscore", old_version="v1", new_version="v2",
...                           value_old=0.05, value_new=0.19, verdict="model")])
"_Model or data?_ with v1 on this window's data the DScore of the same rules would be 0.05 (v2: 0.19; both in-sample, on all the window's rows): the change follows the model, not the data"
"""

from __future__ import annotations

from collections.abc import Sequence

from fairmon._numbers import finite_float
from fairmon.alerts.message import mrkdwn_escape
from fairmon.explain.attribution_gap import MIN_GAP, gap_sentence, worth_a_sentence
from fairmon.fairness.rescore import RUMIE_METRICS, rescore_sentence
from fairmon.store import AttributionGapRecord, RescoreRecord

__all__ = ["why_lines", "cause_line", "TOP_FEATURES", "MIN_GAP"]

#: features per group in the alert (the report lists them all)
TOP_FEATURES = 3


def _ci(lo: object, hi: object) -> str:
    a, b = finite_float(lo), finite_float(hi)
    if a is None or b is None:
        return ""
    return f" [{a:.2f}, {b:.2f}]"


def why_lines(gaps: Sequence[AttributionGapRecord], *, top: int = TOP_FEATURES) -> tuple[str, ...]:
    """One line per group with a computed gap: its ``top`` features by |difference| of at least
    :data:`MIN_GAP` whose interval excludes 0, with direction. A feature within its noise, or with a
    negligible gap, says nothing an on-call reader can act on, and a group with none gets no line (the
    report lists every feature of every group)."""
    out = []
    for g in sorted(gaps, key=lambda g: g.group_kind != "rumie"):
        if g.status != "ok" or not g.features:
            continue
        shown = [f for f in g.features if worth_a_sentence(f)][:top]
        if not shown:
            continue
        who = "the RUMIE group" if g.group_kind == "rumie" else f"`{g.group_label}`, lowest favorable rate"
        parts = [gap_sentence(str(f["feature"]), float(f["difference"])) + _ci(f.get("ci_low"), f.get("ci_high"))
                 for f in shown]
        out.append(mrkdwn_escape(f"_Why disfavored_ ({who}): " + "; ".join(parts)))
    return tuple(out)


def cause_line(rescores: Sequence[RescoreRecord]) -> str | None:
    """The "model or data?" line of the window's first rescored finding (RUMIE's first); None when
    none was rescored (no earlier production version, nothing fired, or nothing computable)."""
    done = [r for r in rescores if r.status == "ok" and r.value_old is not None]
    if not done:
        return None
    done.sort(key=lambda r: (r.metric not in RUMIE_METRICS, r.kind, r.metric, r.group))
    r = done[0]
    text = rescore_sentence(metric=r.metric, group=r.group, old_version=r.old_version, new_version=r.new_version,
                            value_old=r.value_old, value_new=r.value_new, verdict=r.verdict)
    # other series, not the same series rescored for each rule that fired on it (three RUMIE rules on
    # one honest DScore are one answer: "+2 more" sent the reader to three identical rows)
    others = len({(x.metric, x.group) for x in done} - {(r.metric, r.group)})
    more = f" (+{others} more in the report)" if others else ""
    return mrkdwn_escape(f"_Model or data?_ {text}{more}")
