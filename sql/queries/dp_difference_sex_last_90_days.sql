-- DP difference for sex over the last 90 days, with its CI and 7-window rolling mean.
-- Adapt: the monitor name, the metric (selection_rate, dp_ratio, eo_difference, ...), attribute and group.
SELECT window_start,
       value AS dp_difference,
       ci_low,
       ci_high,
       rolling_mean_7,
       status
FROM metric_series
WHERE monitor = 'demo'
  AND metric = 'dp_difference'
  AND attribute = 'sex'
  AND group_key = ''
  AND window_start >= now() - interval '90 days'
ORDER BY window_start;
