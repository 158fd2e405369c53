"""``fairmon alerts retry``: a monitor's failed alerts go back to pending; other monitors' stay put."""

from __future__ import annotations

import json

import pytest

from fairmon.cli import main
from fairmon.store.records import AlertRecord

pytestmark = pytest.mark.postgres


def test_retry_requeues_only_the_monitors_failed_alerts(fresh_database_url: str, capsys: pytest.CaptureFixture[str]) -> None:
    from fairmon.store import open_store

    store = open_store(fresh_database_url, upgrade=True)
    try:
        for fp, monitor in (("a-failed", "credit"), ("a-sent", "credit"), ("b-failed", "other")):
            store.outbox_enqueue(AlertRecord(fp, kind="fairness", payload={}, channel="#c", monitor=monitor))
            store.outbox_transition(fp, "pending", "sending")
            store.outbox_transition(fp, "sending", "sent" if fp.endswith("sent") else "failed", error="invalid_blocks")
        assert main(["alerts", "retry", "--monitor", "credit", "--db", fresh_database_url, "--json"]) == 0
        assert json.loads(capsys.readouterr().out) == {"monitor": "credit", "requeued": ["a-failed"]}
        states = {fp: store.outbox_get(fp).state for fp in ("a-failed", "a-sent", "b-failed")}  # type: ignore[union-attr]
        assert states == {"a-failed": "pending", "a-sent": "sent", "b-failed": "failed"}
        assert store.outbox_get("a-failed").last_error == "invalid_blocks"  # type: ignore[union-attr]
        assert main(["alerts", "retry", "--monitor", "credit", "--db", fresh_database_url]) == 0
        assert "0 failed alert(s) re-queued" in capsys.readouterr().out
    finally:
        store.engine.dispose()
