-- Windows whose latest run did not succeed in the last 30 days (failed, invalid data, skipped, labels
-- pending) and windows stuck in 'running' (no progress for 6 hours: the worker died mid-window, e.g.
-- the database went away after the computation), per monitor: the pipeline-health view an on-call
-- engineer checks first. A stuck window is fixed by re-running it (fairmon run / backfill). A failed
-- re-run keeps the rows an earlier attempt wrote: results_kept says so.
-- Relative to now(): windows older than 30 days are not returned.
SELECT m.name AS monitor,
       r.window_start,
       CASE WHEN r.status = 'running' THEN 'running (stale)' ELSE r.status END AS status,
       CASE WHEN r.status = 'running'
            THEN 'no progress for ' || floor(extract(epoch FROM now() - r.updated_at) / 3600)::int || ' hours'
            ELSE left(r.error, 200) END AS error,
       coalesce((r.details ->> 'results_kept')::boolean, false) AS results_kept
FROM runs r
JOIN monitors m ON m.monitor_id = r.monitor_id
WHERE (r.status NOT IN ('succeeded', 'running')
       OR (r.status = 'running' AND r.updated_at < now() - interval '6 hours'))
  AND r.window_start >= now() - interval '30 days'
ORDER BY r.window_start DESC, monitor;
