"""YAML reading for spec files: duplicate keys refused, aliases budgeted, every failure a ConfigError.

Why a custom loader: PyYAML silently keeps the last of two equal keys (a typo'd override would be
lost), and it expands aliases without limit, so a 2.5 KB "billion laughs" file becomes a structure
that later steps walk for minutes. The composer here sizes every node as it is built, counting an
alias at each use, so the expansion is known (and refused past :data:`MAX_YAML_NODES`) in time linear
in the text. Nesting deeper than :data:`MAX_YAML_DEPTH` and numbers Python cannot convert are refused too.

Examples
--------
>>> root, data = read_yaml("a: &x [1, 2]\\nb: *x\\n", "spec.yaml")
>>> data
{'a': [1, 2], 'b': [1, 2]}
>>> read_yaml("a: 1\\na: 2\\n", "spec.yaml")
Traceback (most recent call last):
...
fairmon.errors.ConfigError: spec.yaml:2:1: invalid YAML: duplicate key 'a' (first at line 1)
"""

from __future__ import annotations

from typing import Any

import yaml

from fairmon.config._limits import MAX_YAML_DEPTH, MAX_YAML_NODES
from fairmon.config._messages import (
    ERR_DUPLICATE_KEY,
    ERR_YAML,
    ERR_YAML_DEPTH,
    ERR_YAML_EXPANSION,
    excerpt,
)
from fairmon.errors import ConfigError

__all__ = ["SpecLoader", "read_yaml"]

_MERGE_TAG = "tag:yaml.org,2002:merge"


class _BudgetError(yaml.YAMLError):
    """The document is larger (aliases counted at each use) or deeper than a spec may be."""

    def __init__(self, template: str, limit: int, mark: yaml.Mark) -> None:
        super().__init__(template)
        self.template, self.limit, self.mark = template, limit, mark

    def message(self, file: str) -> str:
        line, col = self.mark.line + 1, self.mark.column + 1
        return self.template.format(file=file, line=line, column=col, limit=self.limit)


class SpecLoader(yaml.SafeLoader):
    """SafeLoader that rejects duplicate mapping keys and bounds the alias-expanded size of a document."""

    def __init__(self, stream: str) -> None:
        super().__init__(stream)
        self._expanded: dict[int, int] = {}
        self._depth = 0

    def compose_node(self, parent: yaml.Node | None, index: int) -> yaml.Node | None:
        is_alias = self.check_event(yaml.AliasEvent)
        mark = self.peek_event().start_mark  # type: ignore[no-untyped-call]
        if self._depth >= MAX_YAML_DEPTH:  # the composer recurses: stop long before Python's limit
            raise _BudgetError(ERR_YAML_DEPTH, MAX_YAML_DEPTH, mark)
        self._depth += 1
        try:
            node = super().compose_node(parent, index)
        finally:
            self._depth -= 1
        if node is None:
            return None
        size = self._expanded.get(id(node))
        if size is None:
            if is_alias:  # an alias to a node still being composed: a cycle, which no spec needs
                raise yaml.composer.ComposerError(None, None, "recursive alias", mark)
            size = 1 + sum(self._expanded[id(child)] for child in _children(node))
            self._expanded[id(node)] = size
        if size > MAX_YAML_NODES:
            raise _BudgetError(ERR_YAML_EXPANSION, MAX_YAML_NODES, mark)
        return node


def _children(node: yaml.Node) -> list[yaml.Node]:
    if isinstance(node, yaml.SequenceNode):
        return list(node.value)
    if isinstance(node, yaml.MappingNode):
        return [part for pair in node.value for part in pair]
    return []


def _construct_mapping(loader: SpecLoader, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
    seen: dict[Any, int] = {}
    for key_node, _ in node.value:
        if key_node.tag == _MERGE_TAG:  # '<<: *anchor' may be overridden by explicit keys
            continue
        key = loader.construct_object(key_node, deep=deep)
        try:
            if key in seen:
                raise yaml.constructor.ConstructorError(
                    None,
                    None,
                    ERR_DUPLICATE_KEY.format(key=excerpt(key), first_line=seen[key]),
                    key_node.start_mark,
                )
        except TypeError:  # unhashable key: let the default constructor report it
            break
        seen[key] = key_node.start_mark.line + 1
    loader.flatten_mapping(node)
    return dict(loader.construct_pairs(node, deep=deep))


SpecLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _construct_mapping)


def read_yaml(text: str, file: str) -> tuple[yaml.Node | None, Any]:
    """Compose and construct one YAML document: ``(node tree, data)``; the tree gives error lines.

    Raises :class:`~fairmon.errors.ConfigError` naming ``file`` (and line and column where known).
    """
    loader = SpecLoader(text)
    try:
        root = loader.get_single_node()
        data = loader.construct_document(root) if root is not None else None
    except _BudgetError as exc:
        raise ConfigError(exc.message(file)) from None
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line, col = (mark.line + 1, mark.column + 1) if mark is not None else (0, 0)
        problem = " ".join(p for p in (exc.context, exc.problem) if p)
        raise ConfigError(ERR_YAML.format(file=file, line=line, column=col, problem=excerpt(problem))) from exc
    except yaml.YAMLError as exc:
        raise ConfigError(ERR_YAML.format(file=file, line=0, column=0, problem=excerpt(str(exc)))) from exc
    except ValueError as exc:  # e.g. an integer longer than Python converts (sys.int_info)
        raise ConfigError(ERR_YAML.format(file=file, line=0, column=0, problem=excerpt(str(exc)))) from None
    finally:
        loader.dispose()
    return root, data
