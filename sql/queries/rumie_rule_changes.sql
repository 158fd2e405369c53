-- How did the RUMIE rules of a monitor change between consecutive windows?
-- One row per window whose rule text differs from the previous window's. attributes_added/_removed
-- compare RUMIE's key attributes (its top-k), not the attributes the two rule texts mention.
SELECT window_start,
       prev_window_start,
       prev_rules_text,
       rules_text,
       attributes_added,
       attributes_removed,
       round(dscore_change::numeric, 3) AS dscore_change,
       is_new_group
FROM rumie_rule_changes
WHERE monitor = 'demo'
  AND method = 'ie-dt'
  AND rules_changed
ORDER BY window_start;
