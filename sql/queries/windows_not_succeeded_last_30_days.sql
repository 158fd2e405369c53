-- Windows whose latest run did not succeed in the last 30 days (failed, invalid data, skipped, labels
-- pending), windows stuck in 'running' (no progress for 6 hours: the worker died mid-window, e.g.
-- the database went away after the computation), stored windows whose later steps stopped (results
-- stored, then no progress for 6 hours before their drift decision and alerts: details.next_step;
-- the monitor's next run fails them as stale) and windows whose FEU candidates or follow-up never
-- finished after their alerts went out (details.later_step stuck, or details.unfinished once swept),
-- per monitor: the pipeline-health view an on-call engineer checks first. A stuck or failed window is
-- fixed by re-running it (fairmon run / backfill), missing FEU candidates by fairmon feu. A failed
-- re-run keeps the rows an earlier attempt wrote: results_kept says so.
-- Relative to now(): windows older than 30 days are not returned.
SELECT m.name AS monitor,
       r.window_start,
       CASE WHEN r.status = 'running' THEN 'running (stale)'
            WHEN r.status IN ('succeeded', 'labels_pending') AND r.details ? 'next_step'
            THEN r.status || ' (stopped before ' || (r.details ->> 'next_step') || ')'
            WHEN r.status IN ('succeeded', 'labels_pending') AND (r.details ? 'later_step' OR r.details ? 'unfinished')
            THEN r.status || ' (alerts sent; '
                 || coalesce(r.details ->> 'later_step', r.details -> 'unfinished' ->> 'step') || ' unfinished)'
            ELSE r.status END AS status,
       CASE WHEN r.status = 'running'
              OR (r.status IN ('succeeded', 'labels_pending') AND (r.details ? 'next_step' OR r.details ? 'later_step'))
            THEN 'no progress for ' || floor(extract(epoch FROM now() - r.updated_at) / 3600)::int || ' hours'
            WHEN r.status IN ('succeeded', 'labels_pending') AND r.details ? 'unfinished'
            THEN left(r.details -> 'unfinished' ->> 'error', 200)
            ELSE left(r.error, 200) END AS error,
       coalesce((r.details ->> 'results_kept')::boolean, false) AS results_kept
FROM runs r
JOIN monitors m ON m.monitor_id = r.monitor_id
WHERE (r.status NOT IN ('succeeded', 'running')
       OR ((r.status = 'running'
            OR (r.status IN ('succeeded', 'labels_pending') AND (r.details ? 'next_step' OR r.details ? 'later_step')))
           AND r.updated_at < now() - interval '6 hours')
       OR (r.status IN ('succeeded', 'labels_pending') AND r.details ? 'unfinished'))
  AND r.window_start >= now() - interval '30 days'
ORDER BY r.window_start DESC, monitor;
