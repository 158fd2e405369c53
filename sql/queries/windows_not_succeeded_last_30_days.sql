-- Windows that did not produce results in the last 30 days (failed, invalid data, skipped, labels
-- pending), per monitor: the pipeline-health view an on-call engineer checks first.
SELECT m.name AS monitor,
       r.window_start,
       r.status,
       left(r.error, 200) AS error
FROM runs r
JOIN monitors m ON m.monitor_id = r.monitor_id
WHERE r.status NOT IN ('succeeded', 'running')
  AND r.window_start >= now() - interval '30 days'
ORDER BY r.window_start DESC, monitor;
