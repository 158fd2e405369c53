"""Issue 15 item 7: data that passes the suite but that later steps cannot take (±inf, nulls in a model
feature within ``max_null_fraction``), and an empty, missing or unreadable window file: each is a
``data_invalid`` window with its failed expectation and exactly ONE data alert, never ``failed``."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
import sqlalchemy as sa

_TESTS = Path(__file__).resolve().parents[1]
for _p in (_TESTS / "pipeline", _TESTS / "alerts"):
    if str(_p) not in sys.path:
        sys.path.insert(0, str(_p))

from pipeline_demo_setup import SMALL, demo_copy, prepare_demo  # noqa: E402
from slack_server import SlackTestServer  # noqa: E402

from fairmon.datasets import read_partition  # noqa: E402

pytestmark = [pytest.mark.postgres, pytest.mark.slow]

CHANNEL = "#fairness-demo"


def _rewrite(part: Path, change: Callable) -> None:  # type: ignore[type-arg]
    change(read_partition(part)).to_csv(part, index=False, date_format="%Y-%m-%dT%H:%M:%S")


def _inf(part: Path) -> None:
    def change(df):  # type: ignore[no-untyped-def]
        df = df.copy()
        df.loc[df.index[:2], "income"] = np.inf  # 0.2 %: within range_mostly, so the suite passes
        return df
    _rewrite(part, change)


def _nan(part: Path) -> None:
    def change(df):  # type: ignore[no-untyped-def]
        df = df.copy()
        df.loc[df.index[:3], "income"] = np.nan  # 0.3 %: within max_null_fraction 1 %
        return df
    _rewrite(part, change)


def _empty(part: Path) -> None:
    part.write_text("")


def _header_only(part: Path) -> None:
    part.write_text(part.read_text().splitlines()[0] + "\n")


def _missing(part: Path) -> None:
    part.unlink()


def _unreadable(part: Path) -> None:
    part.write_bytes(b"\xff\xfe\x00\x81\x8d" * 4000)


#: kind → (change to the window's partition file, (check, column) among the failures)
BAD = {
    "inf_in_feature": (_inf, ("finite", "income")),
    "nan_in_model_feature": (_nan, ("model_nulls", "income")),
    "empty_file": (_empty, ("file_not_empty", None)),
    "header_only_file": (_header_only, ("file_not_empty", None)),
    "missing_file": (_missing, ("file_exists", None)),
    "unreadable_file": (_unreadable, ("file_readable", None)),
}


@pytest.fixture(scope="module")
def demo_template(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict]:
    out = tmp_path_factory.mktemp("baddemo") / "demo"
    _, manifest = prepare_demo(out, windows=3, drift_window=2)
    return out, manifest


@pytest.mark.parametrize("kind", sorted(BAD))
def test_unusable_window_is_data_invalid_with_one_alert(
    kind: str, demo_template: tuple[Path, dict], tmp_path: Path, fresh_database_url: str,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from fairmon.pipeline import run_window

    template, manifest = demo_template
    change, (check, column) = BAD[kind]
    spec, w = demo_copy(template, manifest, tmp_path / "demo", SMALL, fresh_database_url)
    change(tmp_path / "demo" / "stream" / f"{w['start'][:10]}.csv")

    with SlackTestServer(channels=(CHANNEL,)) as slack:
        monkeypatch.setenv("FAIRMON_SLACK_BASE_URL", slack.base_url)
        o = run_window(spec, w["start"], db_url=fresh_database_url, slack_token=slack.token)
        assert o.status == "data_invalid", o.error
        if column is None:  # a source problem: the error names the file, not only the check
            assert o.error is not None and f"{w['start'][:10]}.csv" in o.error, o.error
        again = run_window(spec, w["start"], db_url=fresh_database_url, slack_token=slack.token)
        assert again.status == "data_invalid"  # a re-run sends nothing more
        posts = [r for r in slack.requests if r.method == "chat.postMessage"]
    assert len(posts) == 1, [p.params for p in posts]
    if column is None:
        assert f"{w['start'][:10]}.csv" in str(posts[0].params), posts[0].params  # the data alert names it too

    eng = sa.create_engine(fresh_database_url)
    with eng.connect() as c:
        run = c.execute(sa.text("SELECT status, details FROM runs")).one()
        n_metrics = c.execute(sa.text("SELECT count(*) FROM metrics")).scalar_one()
        alerts = c.execute(sa.text("SELECT kind, state FROM alerts")).all()
    eng.dispose()
    assert run.status == "data_invalid"
    failed = run.details["failed_expectations"]
    assert (check, column) in {(f["check"], f["column"]) for f in failed}, failed
    assert all(f.get("message") for f in failed)
    assert n_metrics == 0
    assert [tuple(a) for a in alerts] == [("data", "sent")]
