-- Was an FEU recommendation put into production? fairmon registers the recommended candidate (registry
-- status 'candidate') and never promotes it; a team that deploys it promotes that version, and the
-- windows scored after that record it in runs.model_version. first_window_scored_with_it is NULL while
-- no later window used it (the candidates' metrics ->> 'deployment' says what was registered — the
-- searched network or its fold ensemble —, not whether it went live).
SELECT mo.name AS monitor,
       r.window_start AS recommended_in_window,
       c.candidate_index + 1 AS candidate_number,
       c.registry_version,
       min(later.window_start) AS first_window_scored_with_it,
       count(later.run_id) AS windows_scored_with_it
FROM feu_candidates c
JOIN runs r ON r.run_id = c.run_id
JOIN monitors mo ON mo.monitor_id = r.monitor_id
LEFT JOIN runs later ON later.monitor_id = r.monitor_id
                    AND later.window_start > r.window_start
                    AND later.model_version = c.registry_version
WHERE c.selected AND c.registry_version IS NOT NULL
GROUP BY mo.name, r.window_start, c.candidate_index, c.registry_version
ORDER BY r.window_start DESC, monitor;
