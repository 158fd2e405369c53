-- FEU retraining candidates that were recommended (selected), with their objectives and registry version.
-- run_status: 'failed' (details ->> 'results_kept') when a later re-run of the window failed and kept
-- the results this recommendation was computed from. candidate_number is the "#N" of the Slack follow-up
-- and the report (candidate_index counts from 0); evaluation the search's evaluation that trained it;
-- dp_target what its DP compares (see feu_recommendation_vs_baselines.sql). A recommendation is only
-- registered (status 'candidate'), never deployed by fairmon: feu_recommendation_deployed.sql says whether
-- a later window was scored with it.
SELECT mo.name AS monitor,
       r.window_start,
       r.status AS run_status,
       c.candidate_index + 1 AS candidate_number,
       c.candidate_index,
       (c.metrics ->> 'evaluation')::int AS evaluation,
       c.metrics -> 'target' AS dp_target,
       c.hyperparameters,
       c.metrics,
       c.registry_version
FROM feu_candidates c
JOIN runs r ON r.run_id = c.run_id
JOIN monitors mo ON mo.monitor_id = r.monitor_id
WHERE c.selected
ORDER BY r.window_start DESC, monitor;
