"""Slack delivery over slack-sdk's ``WebClient`` with the SDK's retry handlers.

* Token: ``token=`` or ``FAIRMON_SLACK_TOKEN`` (the DAG passes its Slack connection's password).
  It is never logged: the client gets its own logger pinned at INFO, because slack-sdk's DEBUG log
  prints request headers (``Authorization: Bearer ...``), and ``repr(sender)`` hides it.
* ``base_url``: ``FAIRMON_SLACK_BASE_URL`` (tests point it at a local server), default Slack's.
* Retries (inside one call): ``RateLimitErrorRetryHandler`` (429, sleeps ``Retry-After``),
  ``ServerErrorRetryHandler`` (500/503, backoff) and ``ConnectionErrorRetryHandler`` (reset / refused).
* Errors become :class:`~fairmon.errors.AlertDeliveryError` naming the channel. Configuration errors
  (``invalid_auth``, ``channel_not_found``, ...) are ``retryable=False`` — the outbox stops at once, no
  retry storm — and, when they are about the token or channel (:data:`CONFIG_SLACK_ERRORS`),
  ``configuration=True``: the alert stays queued for when the configuration is fixed; outages (retries exhausted) are ``retryable=True`` — the outbox re-delivers next run.

Example
-------
>>> s = SlackSender(token="xoxb-secret", base_url="http://127.0.0.1:9/api/")
>>> "xoxb" in repr(s)
False
"""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping
from typing import Any

from fairmon.alerts.render import EVENT_TYPE, SlackMessage
from fairmon.config import ENV_SLACK_BASE_URL as BASE_URL_ENV
from fairmon.config import ENV_SLACK_TOKEN as TOKEN_ENV
from fairmon.errors import AlertDeliveryError

__all__ = [
    "SlackSender",
    "TOKEN_ENV",
    "BASE_URL_ENV",
    "FATAL_SLACK_ERRORS",
    "CONFIG_SLACK_ERRORS",
    "ERR_NO_TOKEN",
    "ERR_FATAL",
    "ERR_TRANSIENT",
]

DEFAULT_BASE_URL = "https://slack.com/api/"
#: Slack error codes that no retry can fix (configuration problems)
FATAL_SLACK_ERRORS = frozenset({
    "invalid_auth", "not_authed", "account_inactive", "token_revoked", "token_expired", "no_permission",
    "missing_scope", "channel_not_found", "not_in_channel", "is_archived", "restricted_action",
    "invalid_blocks", "invalid_metadata_format", "invalid_arguments", "msg_too_long",
})
#: the fatal errors that are about the token, workspace or channel, not the message: fixing the
#: configuration makes the same alert deliverable, so the outbox keeps it queued
CONFIG_SLACK_ERRORS = frozenset({
    "invalid_auth", "not_authed", "account_inactive", "token_revoked", "token_expired", "no_permission",
    "missing_scope", "channel_not_found", "not_in_channel", "is_archived", "restricted_action",
})

ERR_NO_TOKEN = f"no Slack token: set {TOKEN_ENV} (or the DAG's Slack connection)"
ERR_FATAL = "Slack refused {method} for channel {channel}: {error} (not retried; fix the token/channel)"
ERR_TRANSIENT = "Slack {method} for channel {channel} failed after retries: {error} (will be re-delivered)"

_log = logging.getLogger(__name__)


def _client_logger() -> logging.Logger:
    lg = logging.getLogger("fairmon.alerts.slack_sdk_client")
    lg.setLevel(logging.INFO)  # never DEBUG: slack-sdk's debug lines include the Authorization header
    return lg


class SlackSender:
    """Posts rendered messages and finds earlier ones by fingerprint.

    Parameters
    ----------
    token : str, optional
        Bot token; default ``FAIRMON_SLACK_TOKEN``.
    base_url : str, optional
        Web API base; default ``FAIRMON_SLACK_BASE_URL`` or ``https://slack.com/api/``.
    max_retries : int
        Retries per handler (429 / 5xx / connection) within one call.
    backoff_factor : float
        Backoff of the 5xx and connection handlers (seconds × 2^attempt).
    timeout : int
        HTTP timeout in seconds.
    history_pages : int
        How many ``conversations.history`` pages (200 messages each) :meth:`find` scans.
    """

    def __init__(
        self,
        token: str | None = None,
        *,
        base_url: str | None = None,
        max_retries: int = 2,
        backoff_factor: float = 0.5,
        timeout: int = 30,
        history_pages: int = 5,
    ) -> None:
        from slack_sdk import WebClient
        from slack_sdk.http_retry.builtin_handlers import (
            ConnectionErrorRetryHandler,
            RateLimitErrorRetryHandler,
            ServerErrorRetryHandler,
        )
        from slack_sdk.http_retry.builtin_interval_calculators import BackoffRetryIntervalCalculator

        tok = token or os.environ.get(TOKEN_ENV)
        if not tok:
            raise AlertDeliveryError(ERR_NO_TOKEN)
        self.base_url = base_url or os.environ.get(BASE_URL_ENV) or DEFAULT_BASE_URL
        backoff = BackoffRetryIntervalCalculator(backoff_factor=backoff_factor)
        self.history_pages = history_pages
        self._client = WebClient(
            token=tok,
            base_url=self.base_url,
            timeout=timeout,
            logger=_client_logger(),
            retry_handlers=[
                RateLimitErrorRetryHandler(max_retry_count=max_retries),
                ServerErrorRetryHandler(max_retry_count=max_retries, interval_calculator=backoff),
                ConnectionErrorRetryHandler(max_retry_count=max_retries, interval_calculator=backoff),
            ],
        )

    def __repr__(self) -> str:
        return f"SlackSender(base_url={self.base_url!r}, token=***)"

    def _call(self, method: str, where: str, fn: Any, **kwargs: Any) -> Mapping[str, Any]:
        from slack_sdk.errors import SlackApiError

        try:
            resp = fn(**kwargs)
        except SlackApiError as exc:
            status = getattr(exc.response, "status_code", None)
            data = getattr(exc.response, "data", None)
            error = data.get("error") if isinstance(data, Mapping) else None
            error = error or f"HTTP {status}"
            if error in FATAL_SLACK_ERRORS:
                raise AlertDeliveryError(ERR_FATAL.format(method=method, channel=where, error=error),
                                         retryable=False, configuration=error in CONFIG_SLACK_ERRORS) from None
            raise AlertDeliveryError(ERR_TRANSIENT.format(method=method, channel=where, error=error),
                                     retryable=True) from None
        except OSError as exc:  # URLError, ConnectionError, timeouts after the handlers gave up
            raise AlertDeliveryError(
                ERR_TRANSIENT.format(method=method, channel=where, error=type(exc).__name__), retryable=True
            ) from None
        return resp.data if isinstance(resp.data, Mapping) else {}

    def post(self, channel: str, message: SlackMessage, *, thread_ts: str | None = None,
             reply_broadcast: bool | None = None) -> str:
        """``chat.postMessage`` with blocks, fallback text and metadata; returns the message ``ts``."""
        data = self._call(
            "chat.postMessage", channel, self._client.chat_postMessage,
            channel=channel, text=message.text, blocks=message.blocks, metadata=message.metadata,
            thread_ts=thread_ts, reply_broadcast=reply_broadcast, unfurl_links=False,
        )
        ts = data.get("ts")
        if not ts:
            raise AlertDeliveryError(
                ERR_TRANSIENT.format(method="chat.postMessage", channel=channel, error="no ts in reply"), retryable=True
            )
        _log.info("posted fairmon alert %s to %s (ts %s)", message.fingerprint, channel, ts)
        return str(ts)

    def find(self, channel: str, fingerprint: str, *, oldest: str | None = None) -> str | None:
        """``ts`` of a message in ``channel`` whose fairmon metadata carries ``fingerprint``, else None.

        Scans ``conversations.history`` with ``include_all_metadata`` (newest first, up to
        ``history_pages`` pages).
        """
        cursor = None
        for _ in range(self.history_pages):
            data = self._call(
                "conversations.history", channel, self._client.conversations_history,
                channel=channel, include_all_metadata=True, limit=200, cursor=cursor, oldest=oldest,
            )
            for msg in data.get("messages") or []:
                meta = msg.get("metadata") or {}
                if meta.get("event_type") == EVENT_TYPE and (meta.get("event_payload") or {}).get(
                    "fingerprint"
                ) == fingerprint:
                    return str(msg.get("ts"))
            cursor = (data.get("response_metadata") or {}).get("next_cursor")
            if not cursor or not data.get("has_more", True):
                return None
        return None
