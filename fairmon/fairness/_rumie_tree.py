"""IE-DT (paper Algorithm 2): a decision tree on the key attributes, pruned by minimal
cost-complexity pruning while the group stays within the size bounds, and its rules as text.

The weakest-link pruning sequence is replayed on the fitted sklearn tree exactly as sklearn's
``ccp_alpha`` computes it (same ``R(t)``, same first-minimum tie rule), so the tree at pruning level
``psi`` is the one ``DecisionTreeClassifier(ccp_alpha=psi)`` would grow, without refitting per
``psi``. Algorithm 2 increases ``psi`` over the path's distinct values and returns the last tree whose
group ``S'`` and complement satisfy ``alpha <= |S'|/|D| <= beta``.

Rules: each discriminated leaf is an axis-aligned box over the key columns. A bound of a leaf's box
is dropped when the region it adds is covered by discriminated leaves only (checked against the
tree's own partition, so the union of the rules is *logically* the same set as the pruned tree's
group); leaves contained in another rule are removed. This turns the tree's
``age <= 25 | (age > 25 & priors > 3)`` into ``age <= 25 OR priors_count > 3``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from fairmon.fairness._rumie_stats import within_bounds
from fairmon.rules import Condition, RuleSet, numeric_condition

if TYPE_CHECKING:
    from fairmon.schema import FeatureSchema

__all__ = ["PrunedTree", "Rule", "fit_pruned_tree", "render_rules", "simplify_boxes"]

_INF = math.inf


@dataclass(frozen=True)
class Rule:
    """A conjunction of conditions (one discriminated leaf after simplification)."""

    conditions: tuple[Condition, ...]
    box: tuple[tuple[int, float, float], ...]  # (encoded index, lo, hi) with lo < z <= hi

    @property
    def text(self) -> str:
        """The rule's text, by the one formatter (:attr:`fairmon.rules.RuleSet.text`)."""
        return RuleSet((self.conditions,)).text

    def evaluate(self, Z: np.ndarray) -> np.ndarray:
        """Membership of encoded rows (compared in float32, as the tree was fitted)."""
        m = np.ones(Z.shape[0], dtype=bool)
        for j, lo, hi in self.box:
            col = Z[:, j].astype(np.float32)
            m &= (col > lo) & (col <= hi)
        return m


@dataclass
class PrunedTree:
    """The last valid tree of Algorithm 2 and how to apply it to new rows."""

    estimator: Any  # fitted DecisionTreeClassifier (unpruned T)
    features: list[int]  # tree column -> encoded index
    leaf_of: np.ndarray  # node of T -> leaf of the pruned tree P containing it
    leaves: list[int]  # leaves of P
    in_group: np.ndarray  # per node of T: predicted class 1 (majority S)
    ccp_alpha: float
    n_leaves_unpruned: int
    path_alphas: list[float]

    def apply(self, Z: np.ndarray) -> np.ndarray:
        """Group membership of encoded rows under the pruned tree."""
        nodes = self.estimator.apply(np.ascontiguousarray(Z[:, self.features], dtype=np.float32))
        return np.asarray(self.in_group[self.leaf_of[nodes]], dtype=bool)

    def leaf_ids(self, Z: np.ndarray) -> np.ndarray:
        """Leaf of the pruned tree holding each encoded row."""
        nodes = self.estimator.apply(np.ascontiguousarray(Z[:, self.features], dtype=np.float32))
        return np.asarray(self.leaf_of[nodes])

    def leaf_boxes(self) -> dict[int, dict[int, tuple[float, float]]]:
        """Box (per encoded index: (lo, hi]) of every leaf of the pruned tree."""
        t = self.estimator.tree_
        boxes: dict[int, dict[int, tuple[float, float]]] = {}
        leaf_set = set(self.leaves)
        stack: list[tuple[int, dict[int, tuple[float, float]]]] = [(0, {})]
        while stack:
            node, box = stack.pop()
            if node in leaf_set:
                boxes[node] = box
                continue
            j = self.features[int(t.feature[node])]
            thr = float(t.threshold[node])
            lo, hi = box.get(j, (-_INF, _INF))
            left = dict(box)
            left[j] = (lo, min(hi, thr))
            right = dict(box)
            right[j] = (max(lo, thr), hi)
            stack.append((int(t.children_left[node]), left))
            stack.append((int(t.children_right[node]), right))
        return boxes


def fit_pruned_tree(
    Z: np.ndarray,
    group: np.ndarray,
    features: list[int],
    *,
    alpha: float,
    beta: float,
    max_depth: int | None,
    random_state: int,
    stop: str = "first-invalid",
) -> PrunedTree:
    """Algorithm 2 on encoded rows ``Z`` (only ``features`` are used) for the group mask ``group``.

    ``stop="first-invalid"`` is the pseudo-code (stop increasing ``psi`` at the first tree outside the
    bounds); ``"largest-valid"`` is the text's wording ("the largest value of psi such that the size
    constraints are still satisfied"): walk the whole path and keep the most pruned valid tree.
    """
    from sklearn.tree import DecisionTreeClassifier

    X = np.ascontiguousarray(Z[:, features], dtype=np.float32)
    y = np.asarray(group, dtype=np.int64)
    est = DecisionTreeClassifier(max_depth=max_depth, random_state=random_state)
    est.fit(X, y)
    t = est.tree_
    n_nodes = t.node_count
    left, right = t.children_left, t.children_right
    parent = np.full(n_nodes, -1, dtype=np.int64)
    for i in range(n_nodes):
        if left[i] != -1:
            parent[left[i]] = i
            parent[right[i]] = i
    value = t.value[:, 0, :]
    if value.shape[1] == 1:  # a single class present: every node predicts it
        in_group = np.full(n_nodes, bool(est.classes_[0] == 1))
    else:
        in_group = value[:, 1] > value[:, 0]
    w = t.weighted_n_node_samples.astype(np.float64)
    n_total = float(w[0])
    r_node = w * t.impurity / n_total
    n_rows = len(y)
    leaf_sizes = t.n_node_samples.astype(np.int64)

    # initial (unpruned) bookkeeping, bottom-up: children have larger ids than parents in sklearn
    is_leaf = left == -1
    n_leaves = np.where(is_leaf, 1, 0).astype(np.int64)
    r_branch = np.where(is_leaf, r_node, 0.0)
    group_size = np.where(is_leaf & in_group, leaf_sizes, 0).astype(np.int64)
    for i in range(n_nodes - 1, -1, -1):
        if not is_leaf[i]:
            n_leaves[i] = n_leaves[left[i]] + n_leaves[right[i]]
            r_branch[i] = r_branch[left[i]] + r_branch[right[i]]
            group_size[i] = group_size[left[i]] + group_size[right[i]]
    n_leaves_unpruned = int(n_leaves[0])
    candidate = ~is_leaf.copy()
    alive = np.ones(n_nodes, dtype=bool)
    current_leaf = is_leaf.copy()

    def snapshot() -> tuple[np.ndarray, np.ndarray]:
        return alive.copy(), current_leaf.copy()

    # the unpruned tree reproduces the group exactly; it is the psi = 0 starting point
    best_state = snapshot()
    best_alpha = 0.0
    path: list[float] = [0.0]
    pending = False
    prev_alpha = 0.0
    while candidate[0]:
        idx = np.nonzero(candidate)[0]
        g = (r_node[idx] - r_branch[idx]) / (n_leaves[idx] - 1)
        j = int(np.argmin(g))
        eff = float(g[j])
        node = int(idx[j])
        if pending and eff > prev_alpha:
            # the tree at psi = prev_alpha is complete: Algorithm 2's validity check
            if within_bounds(int(group_size[0]), n_rows, alpha, beta):
                best_state, best_alpha = snapshot(), prev_alpha
                path.append(prev_alpha)
            elif stop == "first-invalid":
                break
            pending = False
        # prune the weakest link: node becomes a leaf
        stack = [int(left[node]), int(right[node])]
        while stack:
            c = stack.pop()
            if c == -1 or not alive[c]:
                continue
            alive[c] = False
            candidate[c] = False
            current_leaf[c] = False
            stack.extend([int(left[c]), int(right[c])])
        candidate[node] = False
        current_leaf[node] = True
        removed = int(n_leaves[node]) - 1
        r_diff = r_node[node] - r_branch[node]
        new_gs = int(leaf_sizes[node]) if in_group[node] else 0
        gs_diff = new_gs - int(group_size[node])
        n_leaves[node] = 1
        r_branch[node] = r_node[node]
        group_size[node] = new_gs
        a = int(parent[node])
        while a != -1:
            n_leaves[a] -= removed
            r_branch[a] += r_diff
            group_size[a] += gs_diff
            a = int(parent[a])
        pending = True
        prev_alpha = max(eff, prev_alpha)
    else:
        if pending and within_bounds(int(group_size[0]), n_rows, alpha, beta):
            best_state, best_alpha = snapshot(), prev_alpha
            path.append(prev_alpha)

    alive_b, leaf_b = best_state
    leaf_of = np.arange(n_nodes)
    for i in range(n_nodes):  # sklearn numbers parents before children
        if not alive_b[i]:
            leaf_of[i] = leaf_of[int(parent[i])]
    leaves = [int(i) for i in np.nonzero(leaf_b & alive_b)[0]]
    return PrunedTree(
        estimator=est,
        features=list(features),
        leaf_of=leaf_of,
        leaves=leaves,
        in_group=in_group,
        ccp_alpha=float(best_alpha),
        n_leaves_unpruned=n_leaves_unpruned,
        path_alphas=path,
    )


# ---------------------------------------------------------------------------------------- rules
def _covered(region: dict[int, tuple[float, float]], boxes: dict[int, dict[int, tuple[float, float]]],
             in_group: dict[int, bool]) -> bool:
    """True when every leaf box intersecting ``region`` is a discriminated leaf."""
    for leaf, box in boxes.items():
        if in_group[leaf]:
            continue
        inter = True
        for j in set(region) | set(box):
            lo1, hi1 = region.get(j, (-_INF, _INF))
            lo2, hi2 = box.get(j, (-_INF, _INF))
            if max(lo1, lo2) >= min(hi1, hi2):
                inter = False
                break
        if inter:
            return False
    return True


def _contains(outer: dict[int, tuple[float, float]], inner: dict[int, tuple[float, float]]) -> bool:
    for j, (lo, hi) in outer.items():
        ilo, ihi = inner.get(j, (-_INF, _INF))
        if ilo < lo or ihi > hi:
            return False
    return True


def simplify_boxes(
    boxes: dict[int, dict[int, tuple[float, float]]], in_group: dict[int, bool]
) -> list[dict[int, tuple[float, float]]]:
    """Relax discriminated leaf boxes while they stay inside the group; drop contained ones."""
    out: list[dict[int, tuple[float, float]]] = []
    for leaf in sorted(boxes):
        if not in_group[leaf]:
            continue
        box = dict(boxes[leaf])
        for j in sorted(box):
            for side in (0, 1):
                lo, hi = box[j]
                if side == 0 and lo == -_INF or side == 1 and hi == _INF:
                    continue
                region = dict(box)
                region[j] = (-_INF, lo) if side == 0 else (hi, _INF)
                if _covered(region, boxes, in_group):
                    box[j] = (-_INF, hi) if side == 0 else (lo, _INF)
            if box[j] == (-_INF, _INF):
                del box[j]
        out.append(box)
    kept: list[dict[int, tuple[float, float]]] = []
    for i, b in enumerate(out):
        dup = any(
            _contains(o, b) and (not _contains(b, o) or k < i) for k, o in enumerate(out) if k != i
        )
        if not dup:
            kept.append(b)
    return kept


def _numeric_condition(name: str, lo: float, hi: float, decimals: int | None) -> Condition:
    if lo == -_INF:
        return numeric_condition(name, "<=", hi, decimals)
    if hi == _INF:
        return numeric_condition(name, ">", lo, decimals)
    return numeric_condition(name, "in (a, b]", (lo, hi), decimals)


def render_rules(
    boxes: list[dict[int, tuple[float, float]]], schema: FeatureSchema,
    decimals: Mapping[str, int | None] | None = None,
) -> list[Rule]:
    """Boxes in encoded units -> readable rules in original units and category names.

    Thresholds are rounded to the column's precision (``decimals``, from
    :func:`fairmon.rules.column_decimals` of the data; an integer column without it gets 0).
    """
    names = schema.encoded_names
    col_of = schema.encoded_to_column
    cont = schema.continuous_mask
    rules: list[Rule] = []
    for box in boxes:
        by_col: dict[str, list[tuple[int, float, float]]] = {}
        for j in sorted(box):
            by_col.setdefault(col_of[j], []).append((j, *box[j]))
        conds: list[Condition] = []
        for col in schema.names:
            if col not in by_col:
                continue
            items = by_col[col]
            spec = schema.column(col)
            if cont[items[0][0]]:
                j, lo, hi = items[0]
                olo = schema.to_original_value(col, lo) if lo != -_INF else -_INF
                ohi = schema.to_original_value(col, hi) if hi != _INF else _INF
                integer = spec.dtype.startswith(("int", "uint", "Int", "UInt"))
                places = (decimals or {}).get(col, 0 if integer else None)
                conds.append(_numeric_condition(col, olo, ohi, places))
                continue
            equal = [names[j].split("=", 1)[1] for j, lo, hi in items if lo >= 0.5 - 1e-9 and lo != -_INF]
            unequal = [names[j].split("=", 1)[1] for j, lo, hi in items if hi <= 0.5 + 1e-9 and hi != _INF]
            remaining = [c for c in spec.categories if c not in unequal]
            if not equal and unequal and len(remaining) == 1:
                equal = remaining  # "g != b" on a two-category column reads "g = a"
            if equal:
                for cat in equal:
                    conds.append(Condition(col, "=", cat))
            elif 1 < len(remaining) < len(unequal):
                conds.append(Condition(col, "in", tuple(remaining)))
            elif len(unequal) == 1:
                conds.append(Condition(col, "!=", unequal[0]))
            elif unequal:
                conds.append(Condition(col, "not in", tuple(unequal)))
        rules.append(Rule(conditions=tuple(conds), box=tuple((j, lo, hi) for j, (lo, hi) in sorted(box.items()))))
    return rules
