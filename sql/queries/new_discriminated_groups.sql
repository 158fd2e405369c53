-- Windows where RUMIE's group CHANGED against the previous window: no key attribute in common with it,
-- or (when the pipeline measured it) a Jaccard overlap of the two groups' rows below 0.5.
-- Descriptive, not a decision: the 0.5 is fixed in the view (is_new_group), not the monitor's
-- drift.rumie.min_jaccard, and there is no significance test, so a window whose group is noise (a small
-- honest DScore) can appear and a real change with an overlap just above 0.5 does not. What the drift
-- check decided is in drift_events with kind = 'rumie_new_group' (numbers ->> 'jaccard',
-- numbers ->> 'min_jaccard', numbers ->> 'p_value': its test of the honest DScore against
-- drift.rumie.honest_dscore_threshold). p_value below is evidence.p_value: the held-out test of
-- DScore > 0 for this window's group, not corrected for the search.
SELECT monitor,
       window_start,
       prev_rules_text AS previous_group,
       rules_text AS new_group,
       attributes_added,
       attributes_removed,
       round(group_overlap::numeric, 3) AS jaccard_with_previous,
       round(dscore::numeric, 3) AS dscore,
       round(honest_dscore::numeric, 3) AS honest_dscore,
       p_value
FROM rumie_rule_changes
WHERE is_new_group
  AND method = 'ie-dt'
ORDER BY window_start DESC, monitor;
