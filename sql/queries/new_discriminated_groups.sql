-- Windows where RUMIE found a NEW discriminated group: no key attribute in common with the previous
-- window's group (or, when the pipeline measured it, less than half of the group overlaps).
-- The 0.5 is fixed in the view (is_new_group), not the monitor's drift.rumie.min_jaccard, and there is
-- no significance test: what the drift check decided is in drift_events with kind = 'rumie_new_group'
-- (numbers ->> 'jaccard', numbers ->> 'min_jaccard').
SELECT monitor,
       window_start,
       prev_rules_text AS previous_group,
       rules_text AS new_group,
       attributes_added,
       attributes_removed,
       round(dscore::numeric, 3) AS dscore,
       round(honest_dscore::numeric, 3) AS honest_dscore,
       p_value
FROM rumie_rule_changes
WHERE is_new_group
  AND method = 'ie-dt'
ORDER BY window_start DESC, monitor;
