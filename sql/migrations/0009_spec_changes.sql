-- 0009 spec versions (issue 20): a run whose spec fingerprint differs from the series' previous window
-- (or from an earlier run of the same window) records a spec_changed event here, so a series computed
-- under two specs is marked, never silently mixed. One row per run (the latest change of that window).
-- metric_series gains the run's spec_fingerprint and spec_changed (the window where the spec changed),
-- appended at the end so the view's earlier columns keep their places.

CREATE TABLE spec_changes (
    run_id                 bigint PRIMARY KEY REFERENCES runs (run_id) ON DELETE CASCADE,
    monitor_id             integer NOT NULL REFERENCES monitors (monitor_id) ON DELETE CASCADE,
    window_start           timestamptz NOT NULL,
    previous_window_start  timestamptz NOT NULL,
    previous_fingerprint   text NOT NULL,
    spec_fingerprint       text NOT NULL CHECK (spec_fingerprint <> previous_fingerprint),
    recorded_at            timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX spec_changes_monitor_idx ON spec_changes (monitor_id, window_start);
COMMENT ON TABLE spec_changes IS 'spec_changed events: the run''s spec fingerprint differs from the one the '
    'series'' previous window (or an earlier run of this window) was computed with.';

CREATE OR REPLACE VIEW metric_series AS
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
       count(m.value) OVER w AS rolling_n,
       r.spec_fingerprint,
       (sc.run_id IS NOT NULL) AS spec_changed
FROM metrics m
JOIN monitors mo ON mo.monitor_id = m.monitor_id
JOIN runs r ON r.run_id = m.run_id
LEFT JOIN spec_changes sc ON sc.run_id = m.run_id
WINDOW w AS (PARTITION BY m.monitor_id, mo.name, m.metric, m.attribute, m.group_key
             ORDER BY m.window_start ROWS BETWEEN 6 PRECEDING AND CURRENT ROW);
COMMENT ON VIEW metric_series IS 'Each metric series over time with a 7-window rolling mean; spec_changed '
    'marks the window whose run used a different spec than the previous window (spec_changes).';
