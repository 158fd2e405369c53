-- Each FEU recommendation beside what it was compared with (test split): production, approve-everyone
-- and fairlearn's mitigators, with whether each mitigator kept FEU's positive-rate band on validation.
-- A window whose FEU recommended nothing still lists its baselines (candidate_number is NULL).
-- dp_target: what DP compares here — the declared attribute, or the window's RUMIE group against everyone
-- else (retraining.target: auto, when the alert was about that group); it is NOT metric_series'
-- dp_difference of an attribute. candidate_number is the "#N" of the Slack follow-up and the report.
SELECT mo.name AS monitor,
       r.window_start,
       c.candidate_index + 1 AS candidate_number,
       coalesce(c.metrics -> 'target', b.metrics -> 'target') AS dp_target,
       (c.metrics -> 'test' ->> 'balanced_accuracy')::double precision AS candidate_balanced_accuracy,
       (c.metrics -> 'test' ->> 'dp')::double precision AS candidate_dp,
       b.baseline,
       (b.metrics -> 'test' ->> 'balanced_accuracy')::double precision AS baseline_balanced_accuracy,
       (b.metrics -> 'test' ->> 'dp')::double precision AS baseline_dp,
       (b.metrics -> 'validation' ->> 'band_ok')::boolean AS baseline_inside_band
FROM feu_baselines b
JOIN runs r ON r.run_id = b.run_id
JOIN monitors mo ON mo.monitor_id = r.monitor_id
LEFT JOIN feu_candidates c ON c.run_id = b.run_id AND c.selected
ORDER BY r.window_start DESC, monitor, b.baseline;
