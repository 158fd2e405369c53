"""CLI polish: every registered command has a one-line help, a description and examples in its help."""

from __future__ import annotations

import argparse
import re

import pytest

from fairmon.cli import COMMAND_MODULES, build_parser, main


def _subparsers(parser: argparse.ArgumentParser) -> argparse._SubParsersAction | None:
    return next((a for a in parser._actions if isinstance(a, argparse._SubParsersAction)), None)


def _commands() -> list[tuple[str, str | None, argparse.ArgumentParser, argparse.ArgumentParser]]:
    """(name, one-line help, parser, parent parser) of every command and nested subcommand."""
    root = build_parser()
    out = []
    stack = [("", root)]
    while stack:
        prefix, parser = stack.pop()
        sub = _subparsers(parser)
        if sub is None:
            continue
        helps = {a.dest: a.help for a in sub._choices_actions}
        for name, p in sub.choices.items():
            full = f"{prefix} {name}".strip()
            out.append((full, helps.get(name), p, parser))
            stack.append((full, p))
    return out


def test_every_module_registers_its_command() -> None:
    top = {name for name, *_ in _commands() if " " not in name}
    assert top == set(COMMAND_MODULES)


@pytest.mark.parametrize("name,help_,parser,parent", _commands(), ids=lambda v: v if isinstance(v, str) else "")
def test_help_and_examples(name: str, help_: str | None, parser: argparse.ArgumentParser,
                           parent: argparse.ArgumentParser) -> None:
    assert help_ and "\n" not in help_ and len(help_) <= 80, f"{name}: one-line help, got {help_!r}"
    assert help_[0].islower() and not help_.endswith("."), f"{name}: help style like the others: {help_!r}"
    # examples: in the command's own epilog, or (nested commands) in the parent's
    pattern = re.compile(rf"^\s+(\S+=\S+ )?fairmon {re.escape(name)}(\s|$)", re.M)
    own = parser.epilog or ""
    assert "examples:" in own and pattern.search(own) or pattern.search(parent.epilog or ""), (
        f"fairmon {name} --help shows no example of itself"
    )
    if " " not in name:
        assert parser.description, f"{name}: description"
        assert isinstance(parser.formatter_class, type) and issubclass(
            parser.formatter_class, argparse.RawDescriptionHelpFormatter
        ), f"{name}: examples keep their layout"


def test_root_help_lists_every_command_with_its_line(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        main(["--help"])
    assert exc.value.code == 0
    text = capsys.readouterr().out
    for name, help_, *_ in _commands():
        if " " not in name:
            assert re.search(rf"^\s+{re.escape(name)}\s+{re.escape(help_.split()[0])}", text, re.M), name
    assert "examples:" in text


def test_commands_that_print_results_offer_json() -> None:
    for name, _, parser, _ in _commands():
        if _subparsers(parser) is not None:
            continue  # a group: its subcommands print
        opts = {o for a in parser._actions for o in a.option_strings}
        if name in ("spec schema",):  # prints a JSON Schema: JSON already
            continue
        assert "--json" in opts, f"fairmon {name} has no --json"


def test_third_party_info_logs_are_quiet_unless_debug() -> None:
    """~180 great_expectations INFO lines per window buried fairmon's own output; GX sets INFO on its
    child loggers itself, so the filter sits on the handlers."""
    import logging

    from fairmon.cli import QuietThirdParty, main

    def record(name: str, level: int) -> logging.LogRecord:
        return logging.LogRecord(name, level, __file__, 1, "msg", None, None)

    quiet = QuietThirdParty()
    assert not quiet.filter(record("great_expectations.data_context.types.base", logging.INFO))
    assert quiet.filter(record("great_expectations.core", logging.WARNING))
    assert quiet.filter(record("fairmon.pipeline.steps", logging.INFO))
    root = logging.getLogger()
    handler = logging.StreamHandler()
    root.addHandler(handler)
    try:
        assert main(["version"]) == 0
        assert sum(isinstance(f, QuietThirdParty) for f in handler.filters) == 1
        assert main(["version"]) == 0  # not stacked
        assert sum(isinstance(f, QuietThirdParty) for f in handler.filters) == 1
    finally:
        root.removeHandler(handler)
    handler = logging.StreamHandler()
    root.addHandler(handler)
    try:
        assert main(["--debug", "version"]) == 0
        assert not handler.filters
    finally:
        root.removeHandler(handler)
