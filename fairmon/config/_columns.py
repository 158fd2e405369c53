"""The ``columns`` and ``favorable`` sections: what the window's columns mean, which outcome is good.

Examples
--------
>>> Columns(features=("age", "sex"), sensitive=("sex",), label="y").all
('age', 'sex', 'y')
>>> Favorable().class_
1
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, field_validator, model_validator

from fairmon.config._messages import ERR_FAVORABLE, ERR_NOT_KNOWN_COLUMN, ERR_OVERLAP, excerpt
from fairmon.config._parsers import ColumnName, Scalar, SpecSection, check_unique

__all__ = ["Columns", "Favorable"]

class Columns(SpecSection):
    """Which columns the window data has and what they mean.

    ``features`` are the model's raw inputs; ``extra`` are further columns present in the data that the
    model does not use (e.g. a protected attribute withheld from the model); ``sensitive`` (protected
    attributes) must be among ``features + extra``. ``label`` is the ground truth (may arrive late),
    ``decision`` a logged decision and ``score`` a logged score; when neither is logged, the monitor
    scores the window with the model.
    """

    features: tuple[ColumnName, ...] = Field(min_length=1)
    sensitive: tuple[ColumnName, ...] = Field(min_length=1)
    extra: tuple[ColumnName, ...] = ()
    label: str | None = None
    decision: str | None = None
    score: str | None = None

    @field_validator("features", "sensitive", "extra")
    @classmethod
    def _unique(cls, v: tuple[str, ...]) -> tuple[str, ...]:
        return check_unique(v)

    @model_validator(mode="after")
    def _consistent(self) -> Columns:
        known = self.features + self.extra
        clash = sorted(set(self.features) & set(self.extra))
        if clash:
            raise ValueError("extra: " + ERR_OVERLAP.format(col=excerpt(clash[0]), a="feature", b="extra"))
        known_set = set(known)
        missing = [c for c in self.sensitive if c not in known_set]
        if missing:
            raise ValueError("sensitive: " + ERR_NOT_KNOWN_COLUMN.format(cols=excerpt(missing), known=excerpt(list(known))))
        roles: dict[str, str] = {c: "feature" for c in self.features}
        roles.update({c: "extra" for c in self.extra})
        for role in ("label", "decision", "score"):
            col = getattr(self, role)
            if col is None:
                continue
            if col in roles:
                raise ValueError(f"{role}: " + ERR_OVERLAP.format(col=excerpt(col), a=roles[col], b=role))
            roles[col] = role
        return self

    @property
    def all(self) -> tuple[str, ...]:
        """Every column the window data must contain (features, extra, label, decision, score)."""
        out = list(self.features + self.extra)
        out += [c for c in (self.label, self.decision, self.score) if c is not None]
        return tuple(out)


class Favorable(SpecSection):
    """The favorable outcome.

    ``class`` is the favorable value of the decision column (or of the model's prediction, where the
    positive class is ``1``); ``label_class`` the favorable value of the label column (defaults to
    ``class``; COMPAS needs both: decision ``score_text == 'Low'``, label ``two_year_recid == 0``).
    ``score_threshold`` instead declares a score favorable when it is ``>=`` the threshold
    (``direction: above``) or ``<=`` it (``direction: below``). Without any of them, ``class: 1``.
    """

    class_: Scalar = Field(default=None, alias="class")
    label_class: Scalar = None
    score_threshold: float | None = None
    direction: Literal["above", "below"] = "above"

    @model_validator(mode="after")
    def _one_rule(self) -> Favorable:
        if self.class_ is not None and self.score_threshold is not None:
            raise ValueError(ERR_FAVORABLE)
        if self.class_ is None and self.score_threshold is None:
            object.__setattr__(self, "class_", 1)
        return self

    @property
    def label_value(self) -> Any:
        """Favorable value of the label column (``label_class``, else ``class``, else 1)."""
        if self.label_class is not None:
            return self.label_class
        return self.class_ if self.class_ is not None else 1

