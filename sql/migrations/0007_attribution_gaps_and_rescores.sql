-- 0007 issue 19: "why disfavored" and "model or data?" results of a window, keyed like the evidence
-- (run, with monitor_id and window_start denormalised for time-series scans). Written by the
-- pipeline's diagnose step after the window's rows are stored; cleared with the window's other result
-- rows when it is re-run or fails.

CREATE TABLE attribution_gaps (
    run_id                   bigint NOT NULL REFERENCES runs (run_id) ON DELETE CASCADE,
    monitor_id               integer NOT NULL,
    window_start             timestamptz NOT NULL,
    group_kind               text NOT NULL CHECK (group_kind IN ('rumie', 'declared')),
    group_label              text NOT NULL DEFAULT '',   -- RUMIE rules, or 'sex=Female'
    status                   text NOT NULL,              -- ok | insufficient: ... (then no features)
    reason                   text NOT NULL DEFAULT '',
    explainer                text NOT NULL DEFAULT '',
    n_inside                 integer,                    -- explained rows inside / outside the group
    n_outside                integer,
    population_inside        integer,                    -- the window's rows inside / outside
    population_outside       integer,
    favorable_rate_inside    double precision,
    favorable_rate_outside   double precision,
    n_bootstrap              integer,
    confidence               double precision,
    top_feature              text,                       -- the feature with the largest |difference|
    top_difference           double precision,
    -- every feature ranked by |difference|: [{feature, inside, outside, difference, ci_low, ci_high}]
    features                 jsonb NOT NULL DEFAULT '[]'::jsonb,
    CONSTRAINT attribution_gaps_pkey PRIMARY KEY (run_id, group_kind)
);
COMMENT ON TABLE attribution_gaps IS 'Why a group is disfavored: mean attribution of P(favourable) per feature '
    'inside the group minus outside it (KernelSHAP on a sample of each side, percentile-bootstrap interval), '
    'for the RUMIE group and the declared group with the lowest favourable rate.';
CREATE INDEX attribution_gaps_monitor_idx ON attribution_gaps (monitor_id, group_kind, window_start);

CREATE TABLE model_rescores (
    run_id          bigint NOT NULL REFERENCES runs (run_id) ON DELETE CASCADE,
    monitor_id      integer NOT NULL,
    window_start    timestamptz NOT NULL,
    kind            text NOT NULL,                       -- the fired finding's key (findings.kind, metric,
    metric          text NOT NULL,                       -- and its series: 'sex', 'sex=F' or '')
    group_key       text NOT NULL DEFAULT '',
    old_version     text NOT NULL,                       -- the earlier production version scored
    new_version     text NOT NULL,                       -- the version the window was scored with
    value_fired     double precision,                    -- the finding's value
    value_new       double precision,                    -- the metric (definition) under each version
    ci_new_low      double precision,
    ci_new_high     double precision,
    value_old       double precision,
    ci_old_low      double precision,
    ci_old_high     double precision,
    baseline        double precision,
    verdict         text NOT NULL CHECK (verdict IN ('model', 'data', 'undetermined')),
    definition      text NOT NULL DEFAULT '',
    status          text NOT NULL DEFAULT 'ok',
    reason          text NOT NULL DEFAULT '',
    CONSTRAINT model_rescores_pkey PRIMARY KEY (run_id, kind, metric, group_key)
);
COMMENT ON TABLE model_rescores IS 'Model or data? A fired finding''s metric on the same window under the earlier '
    'production model version; verdict model = the earlier version lies outside the current interval and '
    'closer to the baseline, data = within the interval (or no closer).';
CREATE INDEX model_rescores_monitor_idx ON model_rescores (monitor_id, window_start);
