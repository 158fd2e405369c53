-- 0008 one Slack message per monitor-window (issue 19). A fairness message (an `alerts` row) now
-- carries every finding of its window, merged per phenomenon; the message lists them in
-- payload -> 'extra' -> 'findings' (fingerprint, key, kind, metric, group, severity, status, entry).
-- alert_history stays one row per message, with n_findings appended (NULL: not a findings message,
-- e.g. data validation or an FEU follow-up); alert_history_findings has one row per finding of each
-- message, with the message's delivery state. Rows enqueued before 0008 (one message per finding)
-- appear there with the finding key of their metadata.

CREATE OR REPLACE VIEW alert_history AS
SELECT a.alert_id,
       mo.name AS monitor,
       a.monitor_id,
       a.run_id,
       a.window_start,
       a.kind,
       a.severity,
       a.channel,
       a.state,
       a.attempts,
       a.last_error,
       a.slack_ts,
       a.thread_ts,
       a.created_at,
       a.sent_at,
       a.fingerprint,
       coalesce(a.payload ->> 'text', a.payload ->> 'headline') AS headline,
       CASE WHEN jsonb_typeof(a.payload -> 'extra' -> 'findings') = 'array'
            THEN jsonb_array_length(a.payload -> 'extra' -> 'findings') END AS n_findings
FROM alerts a
LEFT JOIN monitors mo ON mo.monitor_id = a.monitor_id;
COMMENT ON VIEW alert_history IS
    'Every Slack message fairmon enqueued (one per monitor-window, plus resolutions and follow-ups), with its delivery state; its findings: alert_history_findings.';

CREATE VIEW alert_history_findings AS
SELECT a.alert_id,
       mo.name AS monitor,
       a.monitor_id,
       a.run_id,
       a.window_start,
       a.channel,
       a.state,
       a.slack_ts,
       a.created_at,
       a.sent_at,
       a.fingerprint AS message_fingerprint,
       f.item ->> 'entry' AS entry,
       f.item ->> 'key' AS finding_key,
       f.item ->> 'kind' AS finding_kind,
       f.item ->> 'metric' AS metric,
       f.item ->> 'group' AS attribute,
       f.item ->> 'severity' AS severity,
       f.item ->> 'status' AS status,
       f.item ->> 'fingerprint' AS finding_fingerprint
FROM alerts a
LEFT JOIN monitors mo ON mo.monitor_id = a.monitor_id
CROSS JOIN LATERAL jsonb_array_elements(a.payload -> 'extra' -> 'findings') AS f(item)
WHERE jsonb_typeof(a.payload -> 'extra' -> 'findings') = 'array'
UNION ALL
SELECT a.alert_id,
       mo.name,
       a.monitor_id,
       a.run_id,
       a.window_start,
       a.channel,
       a.state,
       a.slack_ts,
       a.created_at,
       a.sent_at,
       a.fingerprint,
       NULL,
       a.payload -> 'metadata' -> 'event_payload' ->> 'finding_key',
       split_part(a.payload -> 'metadata' -> 'event_payload' ->> 'finding_key', ':', 1),
       split_part(a.payload -> 'metadata' -> 'event_payload' ->> 'finding_key', ':', 2),
       nullif(split_part(a.payload -> 'metadata' -> 'event_payload' ->> 'finding_key', ':', 3), '*'),
       a.severity,
       a.payload -> 'metadata' -> 'event_payload' ->> 'status',
       NULL
FROM alerts a
LEFT JOIN monitors mo ON mo.monitor_id = a.monitor_id
WHERE jsonb_typeof(a.payload -> 'extra' -> 'findings') IS DISTINCT FROM 'array'
  AND a.payload -> 'metadata' -> 'event_payload' ? 'finding_key';
COMMENT ON VIEW alert_history_findings IS
    'One row per finding of each Slack message (message_fingerprint = alert_history.fingerprint), with the message''s delivery state.';
