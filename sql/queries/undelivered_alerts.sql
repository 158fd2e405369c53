-- Alerts not delivered (still pending, stuck sending, or failed) with their last error.
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
WHERE state <> 'sent'
ORDER BY created_at;
