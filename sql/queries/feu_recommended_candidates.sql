-- FEU retraining candidates that were recommended (selected), with their objectives and registry version.
-- run_status: 'failed' (details ->> 'results_kept') when a later re-run of the window failed and kept
-- the results this recommendation was computed from.
SELECT mo.name AS monitor,
       r.window_start,
       r.status AS run_status,
       c.candidate_index,
       c.hyperparameters,
       c.metrics,
       c.registry_version
FROM feu_candidates c
JOIN runs r ON r.run_id = c.run_id
JOIN monitors mo ON mo.monitor_id = r.monitor_id
WHERE c.selected
ORDER BY r.window_start DESC, monitor;
