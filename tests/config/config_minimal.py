"""The smallest valid spec of the config tests, and the message of a spec file that fails to load.

Imported by the tests next to it (``tests/config`` is on ``sys.path`` under pytest's default import mode,
like ``tests/report/report_seed.py``).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from fairmon.config import load_spec
from fairmon.errors import ConfigError

__all__ = ["MINIMAL", "spec_error"]

#: only the required sections
MINIMAL = """\
spec_version: 1
identity: {name: credit}
model: {registry_uri: registry}
data:
  files: {pattern: "data/{start:%Y-%m-%d}.csv"}
columns:
  features: [age, sex, income]
  sensitive: [sex]
schedule:
  start_date: 2026-01-01
"""


def spec_error(tmp_path: Path, text: str, name: str = "bad.yaml") -> str:
    """The :class:`ConfigError` message of loading ``text`` as the spec file ``tmp_path / name``."""
    path = tmp_path / name
    path.write_text(text)
    with pytest.raises(ConfigError) as info:
        load_spec(path)
    return str(info.value)
