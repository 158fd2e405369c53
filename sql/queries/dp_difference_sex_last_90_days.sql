-- DP difference for sex over the last 90 days, with its CI and 7-window rolling mean.
-- Relative to now(): windows older than 90 days are not returned (widen the interval for old data).
-- Adapt: the monitor name, the metric (selection_rate, dp_ratio, eop_difference, eodds_difference, tpr,
-- fpr, fnr), attribute and group (group_key '' is the attribute-level disparity).
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
