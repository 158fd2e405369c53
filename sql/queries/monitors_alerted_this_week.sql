-- Which monitors alerted this week (since Monday 00:00 in the session time zone), how often, how badly.
-- Relative to now(): alerts created before this Monday are not counted. alerts counts every Slack
-- message: a window's drift message, the resolutions and FEU follow-ups in its thread, and data alerts
-- (data_alerts: a window whose data failed validation); withdrawn ones (a re-run no longer raised them,
-- never sent) are left out.
SELECT monitor,
       count(*) AS alerts,
       count(*) FILTER (WHERE kind = 'data') AS data_alerts,
       count(*) FILTER (WHERE state = 'sent') AS delivered,
       array_agg(DISTINCT kind ORDER BY kind) AS kinds,
       max(CASE severity WHEN 'critical' THEN 3 WHEN 'warning' THEN 2 WHEN 'info' THEN 1 ELSE 0 END) AS max_severity_level,
       max(created_at) AS last_alert_at
FROM alert_history
WHERE created_at >= date_trunc('week', now())
  AND state <> 'withdrawn'
GROUP BY monitor
ORDER BY alerts DESC, monitor;
