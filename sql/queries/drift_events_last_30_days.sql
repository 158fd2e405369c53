-- Drift events across all monitors in the last 30 days (onsets first), for the on-call overview.
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
       message
FROM drift_events
WHERE window_start >= now() - interval '30 days'
ORDER BY window_start DESC, monitor, kind, metric;
