-- DP difference for sex over the last 90 days for EVERY monitor (a dashboard panel across monitors).
-- The LATERAL subquery makes this one index-only range scan per monitor on metrics_series_idx
-- (~50 ms for 200 monitors x 3 years); a plain WHERE on metric/window_start would scan every series.
-- Relative to now(): windows older than 90 days are not returned (widen the interval for old data).
SELECT mo.name AS monitor,
       m.window_start,
       m.value AS dp_difference,
       m.ci_low,
       m.ci_high
FROM monitors mo
CROSS JOIN LATERAL (
    SELECT window_start, value, ci_low, ci_high
    FROM metrics
    WHERE monitor_id = mo.monitor_id
      AND metric = 'dp_difference'
      AND attribute = 'sex'
      AND group_key = ''
      AND window_start >= now() - interval '90 days'
) m
ORDER BY mo.name, m.window_start;
