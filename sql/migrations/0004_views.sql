-- 0004 views for the common analyst / dashboard questions. Window functions partition by both
-- monitor_id and monitor name so a filter on either is pushed down into the view (only the filtered
-- series is computed, not the whole table).

-- A metric as a time series with a 7-window rolling mean (rows of result-bearing runs only).
CREATE VIEW metric_series AS
SELECT mo.name AS monitor,
       m.monitor_id,
       m.run_id,
       r.status,
       m.window_start,
       r.window_end,
       m.metric,
       m.attribute,
       m.group_key,
       m.value,
       m.ci_low,
       m.ci_high,
       m.n,
       m.n_nan,
       avg(m.value) OVER w AS rolling_mean_7,
       count(m.value) OVER w AS rolling_n
FROM metrics m
JOIN monitors mo ON mo.monitor_id = m.monitor_id
JOIN runs r ON r.run_id = m.run_id
WINDOW w AS (PARTITION BY m.monitor_id, mo.name, m.metric, m.attribute, m.group_key
             ORDER BY m.window_start ROWS BETWEEN 6 PRECEDING AND CURRENT ROW);
COMMENT ON VIEW metric_series IS 'Each metric series over time with a 7-window rolling mean.';

-- Latest value per monitor and metric series (reads the maintained metric_latest table).
CREATE VIEW latest_metrics AS
SELECT mo.name AS monitor,
       l.monitor_id,
       l.metric,
       l.attribute,
       l.group_key,
       l.window_start,
       l.window_end,
       l.value,
       l.ci_low,
       l.ci_high,
       l.n,
       l.n_nan,
       l.run_id
FROM metric_latest l
JOIN monitors mo ON mo.monitor_id = l.monitor_id;
COMMENT ON VIEW latest_metrics IS 'Latest value per (monitor, metric, attribute, group).';

-- Drift events: findings of windows where a drift was active (it opened, was ongoing, or a one-off
-- event such as a data-validation failure). is_onset marks the window where the drift opened.
CREATE VIEW drift_events AS
SELECT mo.name AS monitor,
       f.monitor_id,
       f.run_id,
       f.window_start,
       r.window_end,
       f.kind,
       f.metric,
       f.attribute,
       f.group_key,
       f.severity,
       f.status,
       (f.status IN ('open', 'event')) AS is_onset,
       f.since,
       f.value,
       f.ci_low,
       f.ci_high,
       f.baseline,
       f.numbers,
       f.message,
       f.fingerprint
FROM findings f
JOIN monitors mo ON mo.monitor_id = f.monitor_id
JOIN runs r ON r.run_id = f.run_id
WHERE f.status IN ('open', 'ongoing', 'event');
COMMENT ON VIEW drift_events IS 'Windows with an active drift finding (one row per window and finding).';

-- Alert history: the outbox with monitor names and the alert headline.
CREATE VIEW alert_history AS
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
       coalesce(a.payload ->> 'text', a.payload ->> 'headline') AS headline
FROM alerts a
LEFT JOIN monitors mo ON mo.monitor_id = a.monitor_id;
COMMENT ON VIEW alert_history IS 'Every alert fairmon enqueued, with its delivery state.';

-- RUMIE rules between consecutive windows of a monitor (per mining method).
CREATE VIEW rumie_rule_changes AS
WITH ev AS (
    SELECT mo.name AS monitor,
           e.monitor_id,
           e.method,
           e.run_id,
           e.window_start,
           e.dscore,
           e.honest_dscore,
           e.p_value,
           e.rules_text,
           e.key_attributes,
           e.group_fraction,
           e.group_overlap,
           lag(e.window_start) OVER w AS prev_window_start,
           lag(e.rules_text) OVER w AS prev_rules_text,
           lag(e.key_attributes) OVER w AS prev_key_attributes,
           lag(e.dscore) OVER w AS prev_dscore,
           lag(e.honest_dscore) OVER w AS prev_honest_dscore
    FROM evidence e
    JOIN monitors mo ON mo.monitor_id = e.monitor_id
    WINDOW w AS (PARTITION BY e.monitor_id, mo.name, e.method ORDER BY e.window_start)
)
SELECT ev.*,
       (ev.prev_window_start IS NOT NULL AND ev.rules_text IS DISTINCT FROM ev.prev_rules_text) AS rules_changed,
       ARRAY(SELECT unnest(ev.key_attributes) EXCEPT SELECT unnest(ev.prev_key_attributes) ORDER BY 1)
           AS attributes_added,
       ARRAY(SELECT unnest(ev.prev_key_attributes) EXCEPT SELECT unnest(ev.key_attributes) ORDER BY 1)
           AS attributes_removed,
       ev.dscore - ev.prev_dscore AS dscore_change,
       -- a new group: no key attribute in common with the previous window's group, or (when the
       -- pipeline measured it) less than half of the group overlaps the previous one
       (ev.prev_window_start IS NOT NULL
        AND (NOT (ev.key_attributes && ev.prev_key_attributes) OR coalesce(ev.group_overlap, 1.0) < 0.5))
           AS is_new_group
FROM ev;
COMMENT ON VIEW rumie_rule_changes IS 'RUMIE rules, key attributes and DScore against the previous window.';
