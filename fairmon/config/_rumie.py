"""The ``rumie`` section: mining the most discriminated unnamed group (DESIGN §4.1).

Examples
--------
>>> RumieSpec().k, RumieSpec().significance.honest_fraction
(5, 0.5)
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any, Literal

from pydantic import Field, model_validator

from fairmon.config._limits import MAX_RUMIE_ITERATIONS, MAX_RUMIE_K
from fairmon.config._messages import ERR_ALPHA_BETA, ERR_MOVED
from fairmon.config._parsers import ColumnName, Fraction, SpecSection

__all__ = ["DEFAULT_RUMIE_MAX_ROWS", "RumieEarlyStop", "RumieRuleSearch", "RumieSignificance", "RumieSpec"]

#: rows above which RUMIE mines a stratified sample and evaluates the group on the rest (issue 21)
DEFAULT_RUMIE_MAX_ROWS = 100_000

_RUMIE_SIGNIFICANCE_MOVED = {
    "alpha": "RUMIE's held-out p-value is judged at drift.significance_level",
    "random_state": "the held-out split is seeded by rumie.random_state",
}

class RumieSignificance(SpecSection):
    """How RUMIE's optimistic DScore is made honest (DESIGN §4.1).

    The group is mined on ``1 - honest_fraction`` of the window and its DScore evaluated on the held-out
    ``honest_fraction``; the held-out two-proportion test gives the p-value (calibrated: see
    ``benchmarks/rumie_calibration``). One source of truth per setting: the p-value is judged by the
    drift checks at ``drift.significance_level`` and the split is seeded by ``rumie.random_state``, so
    the former ``alpha`` and ``random_state`` keys here (never read) are refused with that pointer.
    """

    honest_fraction: Fraction = 0.5

    @model_validator(mode="before")
    @classmethod
    def _removed_keys(cls, data: Any) -> Any:
        if isinstance(data, Mapping):
            for key, where in _RUMIE_SIGNIFICANCE_MOVED.items():
                if key in data:
                    raise ValueError(f"{key}: " + ERR_MOVED.format(key=key, where=where))
        return data


# --- rumie.rule_search (issue 17): the readable-rules stage after IE-DT; read by fairness.rumie.mine
class RumieRuleSearch(SpecSection):
    """The rule search after IE-DT: the simplest DNF rule set within ``epsilon`` of the best DScore.

    At most ``max_rules`` rules of ``max_conditions`` conditions (each at most 10: the search's cost
    grows with both); ``enabled: false`` reports IE-DT's own rules (see
    :class:`fairmon.fairness.RuleSearchSettings`).
    """

    enabled: bool = True
    max_rules: Annotated[int, Field(ge=1, le=10)] = 3
    max_conditions: Annotated[int, Field(ge=1, le=10)] = 3
    epsilon: Annotated[float, Field(ge=0.0, lt=1.0)] = 0.01


# --- rumie.early_stop (issue 21): when IE stops before rumie.iterations; read by fairness.rumie.mine
class RumieEarlyStop(SpecSection):
    """Stop IE once the groups it hands on have settled (``early_stop`` of :func:`fairmon.fairness.rumie.mine`).

    Every ``check_every`` iterations each restart's hard group (its top-k cut, size clipped into the
    bounds) is computed; IE stops when, in every restart, at most a ``tol`` fraction of the rows
    changed group within the last ``patience`` iterations. ``tol: 0`` runs all ``rumie.iterations``.
    Defaults measured on planted problems and the scale benchmark (issue 21): at 0.002 every answer
    was the one of the full 2,500 iterations; at 0.005 two of ten planted problems changed rule.
    """

    tol: Annotated[float, Field(ge=0.0, lt=1.0)] = 0.002
    patience: Annotated[int, Field(ge=1, le=MAX_RUMIE_ITERATIONS)] = 300
    check_every: Annotated[int, Field(ge=1, le=MAX_RUMIE_ITERATIONS)] = 50


class RumieSpec(SpecSection):
    """RUMIE settings (paper defaults: k=5, alpha=0.45, beta=0.55, lam=1, 2500 SGD steps at lr 0.1).

    ``alpha``/``beta`` bound the group's share of the window; ``attributes`` lists the searched
    columns (default: the sensitive and ``extra`` columns, not the model's inputs, see
    :attr:`MonitorSpec.rumie_attributes`); ``k`` above the searched columns' encoded width is that
    width. A window with
    more than ``max_rows`` rows is mined once on a sample stratified by the decision (at most
    ``max_rows`` rows and at most ``1 - significance.honest_fraction`` of the window) and the honest
    DScore, p-value and group size are computed on all the other rows (None = mine all rows, then
    mine the split sample again for the honest DScore). Default 100,000, from the answer vs the sample
    size on a 1M-row demo-like window with the planted group inside the size bounds (issue 21;
    ``benchmarks/scale``, ``scale_samples``): 25k, 100k and 200k samples gave the full-data rule
    (Jaccard 1.0 of the selected rows) and 50k a neighbouring one (``age <= 29`` for ``age <= 30``,
    Jaccard 0.97); every honest DScore within 0.0014 of the full-data run's; RUMIE 12.6-12.8 CPU-s at 100k
    against 21.5-23.3 at 200k and 146-152 on all rows.
    """

    enabled: bool = True
    method: Literal["ie", "ie-dt"] = "ie-dt"
    attributes: tuple[ColumnName, ...] | None = None
    k: Annotated[int, Field(ge=1, le=MAX_RUMIE_K)] = 5
    alpha: Fraction = 0.45
    beta: Fraction = 0.55
    lam: Annotated[float, Field(ge=0.0)] = 1.0
    iterations: Annotated[int, Field(ge=1, le=MAX_RUMIE_ITERATIONS)] = 2500
    lr: Annotated[float, Field(gt=0.0)] = 0.1
    max_rows: Annotated[int, Field(ge=20)] | None = DEFAULT_RUMIE_MAX_ROWS  # 20: the split test's minimum
    significance: RumieSignificance = RumieSignificance()
    random_state: int = 0
    rule_search: RumieRuleSearch = RumieRuleSearch()
    early_stop: RumieEarlyStop = RumieEarlyStop()

    @model_validator(mode="after")
    def _alpha_beta(self) -> RumieSpec:
        if self.alpha >= self.beta:
            raise ValueError("alpha: " + ERR_ALPHA_BETA.format(alpha=self.alpha, beta=self.beta))
        return self
