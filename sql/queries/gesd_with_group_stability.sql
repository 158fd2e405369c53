-- GESD (explanation-stability disparity) per window and sensitive attribute with each group's mean
-- stability and the Mann-Whitney p-value, for one monitor. GESD rows are keyed by the attribute
-- (group_key); windows stored before GESD covered every attribute have group_key '' and the
-- attribute in details. A NULL gesd is undefined for that window (details->>'status' says why).
SELECT mo.name AS monitor,
       x.window_start,
       coalesce(nullif(x.group_key, ''), x.details ->> 'attribute') AS attribute,
       x.explainer,
       round(x.value::numeric, 4) AS gesd,
       x.p_value,
       s.key AS group_value,
       round((s.value)::numeric, 4) AS stability
FROM explanation_metrics x
JOIN monitors mo ON mo.monitor_id = x.monitor_id
CROSS JOIN LATERAL jsonb_each_text(coalesce(x.group_stability, '{}'::jsonb)) AS s(key, value)
WHERE mo.name = 'demo'
  AND x.family = 'gesd'
  AND x.metric = 'gesd'
ORDER BY x.window_start, attribute, s.key;
