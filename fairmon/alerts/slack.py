"""Slack delivery over slack-sdk's ``WebClient``: at most one message per post, whatever the network does.

* Token: ``token=`` or ``FAIRMON_SLACK_TOKEN`` (the DAG passes its Slack connection's password).
  It is never logged: the clients get their own logger pinned at INFO, because slack-sdk's DEBUG log
  prints request headers (``Authorization: Bearer ...``), and ``repr(sender)`` hides it.
* ``base_url``: ``FAIRMON_SLACK_BASE_URL`` (tests point it at a local server), default Slack's.
* Why no blind re-post: a dropped connection, a timeout or a 5xx after Slack stored the message
  looks like a failure to the caller, and slack-sdk's server/connection retry handlers would post it
  a second time. So ``chat.postMessage`` runs on a client with only the rate-limit handler (a 429 is
  Slack's promise that nothing was posted); after an ambiguous failure :meth:`SlackSender.post` looks
  the message up by the fingerprint in its metadata (``conversations.history``, or
  ``conversations.replies`` inside a thread, with ``include_all_metadata`` — the lookup the outbox's
  crash recovery uses) and re-posts only when it is not there. Reads are idempotent and keep all
  three slack-sdk handlers (429, 500/503, reset/refused). The lookup needs the bot's
  ``channels:history`` (``groups:history`` for private channels) scope; without it the error is a
  configuration error (``missing_scope``) and the alert stays queued rather than risk a duplicate.
* Rate limits: a ``Retry-After`` up to ``max_rate_limit_wait_s`` (default ``FAIRMON_SLACK_MAX_RETRY_WAIT_S``,
  else 10 s) is slept inside the
  call; a longer one is not: it raises
  :class:`RateLimitedError` (retryable) with ``retry_after_s`` / ``retry_at``, so the caller schedules
  the alert instead of a step sleeping for minutes.
* Errors become :class:`~fairmon.errors.AlertDeliveryError` naming the channel. Configuration errors
  (``invalid_auth``, ``channel_not_found``, ...) are ``retryable=False`` — the outbox stops at once, no
  retry storm — and, when they are about the token or channel (:data:`CONFIG_SLACK_ERRORS`),
  ``configuration=True``: the alert stays queued for when the configuration is fixed; outages (retries
  exhausted, or a lookup that could not run) are ``retryable=True`` — the outbox re-delivers next run,
  looking the message up first.

Example
-------
>>> s = SlackSender(token="xoxb-secret", base_url="http://127.0.0.1:9/api/")
>>> "xoxb" in repr(s)
False
>>> retry_after_seconds({"Retry-After": ["30"]})
30.0
"""

from __future__ import annotations

import http.client
import logging
import os
import time
from collections.abc import Callable, Mapping
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

from fairmon.alerts.render import EVENT_TYPE, SlackMessage
from fairmon.config import ENV_SLACK_BASE_URL as BASE_URL_ENV
from fairmon.config import ENV_SLACK_MAX_RETRY_WAIT_S as MAX_WAIT_ENV
from fairmon.config import ENV_SLACK_TOKEN as TOKEN_ENV
from fairmon.errors import AlertDeliveryError

if TYPE_CHECKING:
    from slack_sdk.http_retry import RetryHandler

__all__ = [
    "SlackSender",
    "RateLimitedError",
    "retry_after_seconds",
    "TOKEN_ENV",
    "BASE_URL_ENV",
    "DEFAULT_MAX_WAIT_S",
    "FATAL_SLACK_ERRORS",
    "CONFIG_SLACK_ERRORS",
    "AMBIGUOUS_SLACK_ERRORS",
    "ERR_NO_TOKEN",
    "ERR_FATAL",
    "ERR_TRANSIENT",
    "ERR_RATE_LIMITED",
    "ERR_MAX_WAIT",
    "ERR_MAX_WAIT_ENV",
    "MAX_WAIT_ENV",
    "max_wait_from_env",
]

#: the longest ``Retry-After`` (seconds) a call sleeps by default; longer waits go back to the caller
DEFAULT_MAX_WAIT_S = 10.0
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
#: Slack error codes after which the message may have been stored (besides any HTTP 5xx)
AMBIGUOUS_SLACK_ERRORS = frozenset({"internal_error", "fatal_error", "request_timeout", "service_unavailable"})

ERR_NO_TOKEN = f"no Slack token: set {TOKEN_ENV} (or the DAG's Slack connection)"
ERR_FATAL = "Slack refused {method} for channel {channel}: {error} (not retried; fix the token/channel)"
ERR_TRANSIENT = "Slack {method} for channel {channel} failed after retries: {error} (will be re-delivered)"
ERR_RATE_LIMITED = ("Slack rate-limited {method} for channel {channel}: retry after {seconds:g} s "
                    "(nothing was posted; will be re-delivered)")
ERR_MAX_WAIT = "max_rate_limit_wait_s must be a number of seconds >= 0, got {value!r}"
ERR_MAX_WAIT_ENV = "{name} must be a number of seconds >= 0, got {value!r}"


def max_wait_from_env(environ: Mapping[str, str] | None = None) -> float:
    """The Retry-After cap: ``FAIRMON_SLACK_MAX_RETRY_WAIT_S`` when set, else :data:`DEFAULT_MAX_WAIT_S`.

    >>> max_wait_from_env({"FAIRMON_SLACK_MAX_RETRY_WAIT_S": "2.5"}), max_wait_from_env({})
    (2.5, 10.0)
    """
    raw = (os.environ if environ is None else environ).get(MAX_WAIT_ENV)
    if raw is None or not raw.strip():
        return DEFAULT_MAX_WAIT_S
    try:
        value = float(raw)
    except ValueError:
        raise AlertDeliveryError(ERR_MAX_WAIT_ENV.format(name=MAX_WAIT_ENV, value=raw)) from None
    if not 0 <= value < float("inf"):  # also refuses NaN
        raise AlertDeliveryError(ERR_MAX_WAIT_ENV.format(name=MAX_WAIT_ENV, value=raw))
    return value

_log = logging.getLogger(__name__)


class RateLimitedError(AlertDeliveryError):
    """Slack answered 429 with a ``Retry-After`` beyond the wait cap: nothing was posted.

    Retryable; ``retry_after_s`` is the remaining wait and ``retry_at`` the UTC time to retry at.

    Examples
    --------
    >>> e = RateLimitedError("rate-limited", retry_after_s=30.0)
    >>> e.retryable, e.retry_after_s, e.retry_at > datetime.now(UTC)
    (True, 30.0, True)
    """

    def __init__(self, message: str, *, retry_after_s: float) -> None:
        super().__init__(message, retryable=True)
        self.retry_after_s = retry_after_s
        self.retry_at = datetime.now(UTC) + timedelta(seconds=retry_after_s)


class _LostReplyError(AlertDeliveryError):
    """A failure after which the request may have been carried out (5xx, dropped connection, timeout)."""

    def __init__(self, message: str) -> None:
        super().__init__(message, retryable=True)


def retry_after_seconds(headers: Mapping[str, Any] | None) -> float:
    """Seconds of a ``Retry-After`` header (any case; a value or a one-item list), 1 s when absent.

    >>> retry_after_seconds({"retry-after": "2"}), retry_after_seconds({})
    (2.0, 1.0)
    """
    for key, value in (headers or {}).items():
        if key.lower() == "retry-after":
            raw = value[0] if isinstance(value, list | tuple) and value else value
            try:
                return max(float(raw), 0.0)
            except (TypeError, ValueError):
                return 1.0
    return 1.0


def _client_logger() -> logging.Logger:
    lg = logging.getLogger("fairmon.alerts.slack_sdk_client")
    lg.setLevel(logging.INFO)  # never DEBUG: slack-sdk's debug lines include the Authorization header
    return lg


def _capped_rate_limit_handler(max_retries: int, max_wait_s: float) -> RetryHandler:
    """slack-sdk's ``RateLimitErrorRetryHandler``, declining waits longer than ``max_wait_s``."""
    from slack_sdk.http_retry.builtin_handlers import (
        RateLimitErrorRetryHandler,  # slack-sdk: lazy, keeps import light
    )
    from slack_sdk.http_retry.request import HttpRequest
    from slack_sdk.http_retry.response import HttpResponse
    from slack_sdk.http_retry.state import RetryState

    class CappedRateLimitErrorRetryHandler(RateLimitErrorRetryHandler):
        def _can_retry(self, *, state: RetryState, request: HttpRequest, response: HttpResponse | None = None,
                       error: Exception | None = None) -> bool:
            return (response is not None and response.status_code == 429
                    and retry_after_seconds(response.headers) <= max_wait_s)

    return CappedRateLimitErrorRetryHandler(max_retry_count=max_retries)


class SlackSender:
    """Posts rendered messages (never twice) and finds earlier ones by fingerprint.

    Parameters
    ----------
    token : str, optional
        Bot token; default ``FAIRMON_SLACK_TOKEN``.
    base_url : str, optional
        Web API base; default ``FAIRMON_SLACK_BASE_URL`` or ``https://slack.com/api/``.
    max_retries : int
        Retries within one call: per handler for reads (429 / 5xx / connection); for a post, the
        re-posts after a lookup found nothing, and the 429 retries.
    backoff_factor : float
        Backoff before a retry after a 5xx or connection error (seconds × 2^attempt).
    timeout : int
        HTTP timeout in seconds.
    history_pages : int
        How many ``conversations.history`` pages (200 messages each) :meth:`find` scans.
    max_rate_limit_wait_s : float
        Longest ``Retry-After`` slept inside a call (seconds); a longer one raises :class:`RateLimitedError`.
        Default: ``FAIRMON_SLACK_MAX_RETRY_WAIT_S``, else 10 s (:func:`max_wait_from_env`).
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
        max_rate_limit_wait_s: float | None = None,
    ) -> None:
        from slack_sdk import WebClient  # slack-sdk: lazy, keeps `import fairmon.alerts` light
        from slack_sdk.http_retry.builtin_handlers import ConnectionErrorRetryHandler, ServerErrorRetryHandler
        from slack_sdk.http_retry.builtin_interval_calculators import BackoffRetryIntervalCalculator

        tok = token or os.environ.get(TOKEN_ENV)
        if not tok:
            raise AlertDeliveryError(ERR_NO_TOKEN)
        self.base_url = base_url or os.environ.get(BASE_URL_ENV) or DEFAULT_BASE_URL
        self.max_retries = max_retries
        self.backoff_factor = backoff_factor
        self.history_pages = history_pages
        if max_rate_limit_wait_s is None:
            max_rate_limit_wait_s = max_wait_from_env()
        if not max_rate_limit_wait_s >= 0:  # also refuses NaN
            raise AlertDeliveryError(ERR_MAX_WAIT.format(value=max_rate_limit_wait_s))
        self.max_rate_limit_wait_s = float(max_rate_limit_wait_s)
        backoff = BackoffRetryIntervalCalculator(backoff_factor=backoff_factor)
        common: dict[str, Any] = {"token": tok, "base_url": self.base_url, "timeout": timeout,
                                  "logger": _client_logger()}
        #: reads: idempotent, so every slack-sdk handler may repeat them
        self._client = WebClient(**common, retry_handlers=[
            _capped_rate_limit_handler(max_retries, self.max_rate_limit_wait_s),
            ServerErrorRetryHandler(max_retry_count=max_retries, interval_calculator=backoff),
            ConnectionErrorRetryHandler(max_retry_count=max_retries, interval_calculator=backoff),
        ])
        #: posts: only 429 is repeated blindly (Slack did not post); the rest goes through post()'s lookup
        self._post_client = WebClient(**common, retry_handlers=[
            _capped_rate_limit_handler(max_retries, self.max_rate_limit_wait_s),
        ])

    def __repr__(self) -> str:
        return f"SlackSender(base_url={self.base_url!r}, token=***)"

    def _call(self, method: str, where: str, fn: Callable[..., Any], **kwargs: Any) -> Mapping[str, Any]:
        from slack_sdk.errors import SlackApiError  # slack-sdk: lazy, keeps import light

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
            if status == 429:
                wait = retry_after_seconds(getattr(exc.response, "headers", None))
                raise RateLimitedError(ERR_RATE_LIMITED.format(method=method, channel=where, seconds=wait),
                                       retry_after_s=wait) from None
            message = ERR_TRANSIENT.format(method=method, channel=where, error=error)
            if (isinstance(status, int) and status >= 500) or error in AMBIGUOUS_SLACK_ERRORS:
                raise _LostReplyError(message) from None
            raise AlertDeliveryError(message, retryable=True) from None
        except (OSError, http.client.HTTPException) as exc:  # reset, dropped, timed out, truncated reply
            raise _LostReplyError(
                ERR_TRANSIENT.format(method=method, channel=where, error=type(exc).__name__)
            ) from None
        return resp.data if isinstance(resp.data, Mapping) else {}

    def post(self, channel: str, message: SlackMessage, *, thread_ts: str | None = None,
             reply_broadcast: bool | None = None) -> str:
        """``chat.postMessage`` with blocks, fallback text and metadata; returns the message ``ts``.

        After a failure that may have posted (5xx, dropped connection, timeout) it backs off, looks the
        message up by its fingerprint and re-posts only if Slack does not have it; when the lookup
        itself fails, it raises a retryable error without re-posting (the outbox looks it up first
        on its next delivery).
        """
        lost: _LostReplyError | None = None
        for attempt in range(self.max_retries + 1):
            if lost is not None:
                time.sleep(self.backoff_factor * 2 ** (attempt - 1))
                found = self.find(channel, message.fingerprint, thread_ts=thread_ts)
                if found is not None:
                    _log.warning("fairmon alert %s was posted to %s (ts %s) though the reply was lost; "
                                 "not posting it again", message.fingerprint, channel, found)
                    return found
            try:
                data = self._call(
                    "chat.postMessage", channel, self._post_client.chat_postMessage,
                    channel=channel, text=message.text, blocks=message.blocks, metadata=message.metadata,
                    thread_ts=thread_ts, reply_broadcast=reply_broadcast, unfurl_links=False,
                )
            except _LostReplyError as exc:
                lost = exc
                continue
            ts = data.get("ts")
            if not ts:
                raise AlertDeliveryError(
                    ERR_TRANSIENT.format(method="chat.postMessage", channel=channel, error="no ts in reply"),
                    retryable=True,
                )
            _log.info("posted fairmon alert %s to %s (ts %s)", message.fingerprint, channel, ts)
            return str(ts)
        raise AlertDeliveryError(str(lost), retryable=True)

    def find(self, channel: str, fingerprint: str, *, oldest: str | None = None,
             thread_ts: str | None = None) -> str | None:
        """``ts`` of a message in ``channel`` whose fairmon metadata carries ``fingerprint``, else None.

        Scans ``conversations.history`` (or, with ``thread_ts``, the thread's ``conversations.replies``:
        history does not list thread replies) with ``include_all_metadata``, up to ``history_pages``
        pages of 200.
        """
        method = "conversations.history" if thread_ts is None else "conversations.replies"
        fn = self._client.conversations_history if thread_ts is None else self._client.conversations_replies
        where = {} if thread_ts is None else {"ts": thread_ts}
        cursor = None
        for _ in range(self.history_pages):
            try:
                data = self._call(method, channel, fn, channel=channel, include_all_metadata=True, limit=200,
                                  cursor=cursor, oldest=oldest, **where)
            except _LostReplyError as exc:  # a read: nothing to be ambiguous about, just an outage
                raise AlertDeliveryError(str(exc), retryable=True) from None
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
