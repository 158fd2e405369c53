-- Alerts not delivered (still pending, stuck sending, or failed) with their last error; withdrawn ones
-- (a later attempt of their window no longer raised them, session 23) are left out.
SELECT monitor,
       window_start,
       kind,
       severity,
       state,
       attempts,
       last_error,
       created_at,
       fingerprint
FROM alert_history
WHERE state NOT IN ('sent', 'withdrawn')  -- withdrawn: a re-run of its window no longer raised it (never sent)
ORDER BY created_at;
