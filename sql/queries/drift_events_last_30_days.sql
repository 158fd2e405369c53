-- Drift events across all monitors in the last 30 days, newest first (is_onset marks where each opened),
-- for the on-call overview. Data-validation failures are no drift event: they are runs with status
-- 'data_invalid' and alerts of kind 'data' (alert_history). run_status / results_kept: a finding of a
-- window whose later re-run failed (kept rows) is still listed; filter on run_status = 'succeeded' for
-- the current answer.
-- Relative to now(): events of windows older than 30 days are not returned.
SELECT monitor,
       window_start,
       kind,
       metric,
       group_key,
       severity,
       status,
       is_onset,
       -- for a disparity: the groups with the lowest and highest favorable rate (who is disadvantaged)
       numbers -> 'groups' -> 'disadvantaged' ->> 'group' AS disadvantaged_group,
       numbers -> 'groups' -> 'advantaged' ->> 'group' AS advantaged_group,
       value,
       baseline,
       message,
       run_status,
       results_kept
FROM drift_events
WHERE window_start >= now() - interval '30 days'
ORDER BY window_start DESC, monitor, kind, metric;
