-- Latest DP difference per monitor and protected attribute, worst first (dashboard table).
SELECT monitor,
       attribute,
       window_start,
       round(value::numeric, 4) AS dp_difference,
       round(ci_low::numeric, 4) AS ci_low,
       round(ci_high::numeric, 4) AS ci_high
FROM latest_metrics
WHERE metric = 'dp_difference'
  AND group_key = ''
ORDER BY value DESC NULLS LAST, monitor, attribute;
