-- 0002 results of a window: outcome metrics (the big time series), RUMIE evidence, explanation metrics,
-- drift findings and FEU retraining candidates. Every result table carries monitor_id and window_start
-- denormalised from runs, so time-series queries never join the runs table and BRIN on window_start
-- serves retention and "last N days across all monitors" scans.

CREATE TABLE metrics (
    run_id        bigint NOT NULL REFERENCES runs (run_id) ON DELETE CASCADE,
    monitor_id    integer NOT NULL,
    window_start  timestamptz NOT NULL,
    metric        text NOT NULL,                 -- e.g. selection_rate, dp_difference, eo_difference
    attribute     text NOT NULL DEFAULT '',      -- protected attribute (or 'sex&race' intersection); '' = overall
    group_key     text NOT NULL DEFAULT '',      -- group value (e.g. 'Female'); '' = attribute-level metric
    value         double precision,              -- NULL = undefined (never stored as 0)
    ci_low        double precision,
    ci_high       double precision,
    n             integer,
    n_nan         integer,
    CONSTRAINT metrics_pkey PRIMARY KEY (run_id, metric, attribute, group_key)
);
COMMENT ON TABLE metrics IS 'Outcome-fairness metrics per window with bootstrap CIs: one row per '
    '(run, metric, attribute, group).';
-- "this metric over time for this monitor": index-only range scan of one series
CREATE INDEX metrics_series_idx ON metrics (monitor_id, metric, attribute, group_key, window_start)
    INCLUDE (value, ci_low, ci_high, n);
-- retention (DELETE ... WHERE window_start < X) and cross-monitor time-range scans; rows arrive in
-- window order so the BRIN summary stays tight
CREATE INDEX metrics_window_brin ON metrics USING brin (window_start) WITH (pages_per_range = 32);

-- Latest value per (monitor, metric, attribute, group), maintained by the store on every window write.
-- DISTINCT ON over the whole history scans every row (seconds at 11 M rows); this table is O(series).
CREATE TABLE metric_latest (
    monitor_id    integer NOT NULL REFERENCES monitors (monitor_id) ON DELETE CASCADE,
    metric        text NOT NULL,
    attribute     text NOT NULL DEFAULT '',
    group_key     text NOT NULL DEFAULT '',
    run_id        bigint NOT NULL REFERENCES runs (run_id) ON DELETE CASCADE,
    window_start  timestamptz NOT NULL,
    window_end    timestamptz NOT NULL,
    value         double precision,
    ci_low        double precision,
    ci_high       double precision,
    n             integer,
    n_nan         integer,
    CONSTRAINT metric_latest_pkey PRIMARY KEY (monitor_id, metric, attribute, group_key)
);
CREATE INDEX metric_latest_run_idx ON metric_latest (run_id);

CREATE TABLE evidence (
    run_id          bigint NOT NULL REFERENCES runs (run_id) ON DELETE CASCADE,
    monitor_id      integer NOT NULL,
    window_start    timestamptz NOT NULL,
    method          text NOT NULL,               -- ie, ie-dt, enum
    dscore          double precision,
    honest_dscore   double precision,
    p_value         double precision,
    key_attributes  text[] NOT NULL DEFAULT '{}',
    rules           jsonb,                       -- structured rules (list of conjunctions)
    rules_text      text,                        -- human-readable, e.g. 'age <= 25 OR priors_count > 3'
    tree            jsonb,
    group_size      integer,
    group_fraction  double precision,
    p_fav_in        double precision,
    p_fav_out       double precision,
    n               integer,
    group_overlap   double precision,            -- overlap with the previous window's group (pipeline-computed)
    details         jsonb NOT NULL DEFAULT '{}'::jsonb,
    CONSTRAINT evidence_pkey PRIMARY KEY (run_id, method)
);
COMMENT ON TABLE evidence IS 'RUMIE evidence per window and method: the most discriminated group nobody declared.';
CREATE INDEX evidence_monitor_idx ON evidence (monitor_id, method, window_start);

CREATE TABLE explanation_metrics (
    run_id           bigint NOT NULL REFERENCES runs (run_id) ON DELETE CASCADE,
    monitor_id       integer NOT NULL,
    window_start     timestamptz NOT NULL,
    family           text NOT NULL CHECK (family IN ('gesd', 'openxai')),
    metric           text NOT NULL,              -- gesd | PRA, RC, FA, RA, SA, SRA, PGI, PGU, RIS, RRS, ROS (+ _fairness)
    explainer        text NOT NULL DEFAULT '',
    group_key        text NOT NULL DEFAULT '',   -- '' = all instances / the disparity itself
    value            double precision,
    p_value          double precision,
    n                integer,
    n_nan            integer,
    group_stability  jsonb,                      -- GESD: per-group mean stability {group: S_g}
    details          jsonb NOT NULL DEFAULT '{}'::jsonb,
    CONSTRAINT explanation_metrics_pkey PRIMARY KEY (run_id, family, metric, explainer, group_key)
);
CREATE INDEX explanation_metrics_series_idx
    ON explanation_metrics (monitor_id, family, metric, explainer, group_key, window_start);

CREATE TABLE findings (
    run_id        bigint NOT NULL REFERENCES runs (run_id) ON DELETE CASCADE,
    monitor_id    integer NOT NULL,
    window_start  timestamptz NOT NULL,
    kind          text NOT NULL,                 -- outcome, rumie, gesd, openxai, data
    metric        text NOT NULL,
    attribute     text NOT NULL DEFAULT '',
    group_key     text NOT NULL DEFAULT '',
    severity      text NOT NULL CHECK (severity IN ('info', 'warning', 'critical')),
    -- pending: violated, not yet persistent; open: a drift starts (alerted); ongoing: still drifting;
    -- resolved: a drift cleared at this window; event: one-off (e.g. data validation)
    status        text NOT NULL CHECK (status IN ('pending', 'open', 'ongoing', 'resolved', 'event')),
    value         double precision,
    ci_low        double precision,
    ci_high       double precision,
    baseline      double precision,
    since         timestamptz,                   -- window start where this drift opened
    fingerprint   text,                          -- the alert fingerprint (outbox dedup key)
    numbers       jsonb NOT NULL DEFAULT '{}'::jsonb,
    message       text NOT NULL DEFAULT '',
    created_at    timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT findings_pkey PRIMARY KEY (run_id, kind, metric, attribute, group_key)
);
COMMENT ON TABLE findings IS 'Drift decisions of a window (status pending/open/ongoing/resolved/event) with the numbers behind them.';
CREATE INDEX findings_window_idx ON findings (window_start, monitor_id);
CREATE INDEX findings_monitor_idx ON findings (monitor_id, kind, metric, attribute, group_key, window_start);

CREATE TABLE feu_candidates (
    run_id            bigint NOT NULL REFERENCES runs (run_id) ON DELETE CASCADE,
    candidate_index   integer NOT NULL CHECK (candidate_index >= 0),
    hyperparameters   jsonb NOT NULL DEFAULT '{}'::jsonb,
    metrics           jsonb NOT NULL DEFAULT '{}'::jsonb,
    pareto            boolean NOT NULL DEFAULT false,
    selected          boolean NOT NULL DEFAULT false,
    registry_version  text,
    created_at        timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT feu_candidates_pkey PRIMARY KEY (run_id, candidate_index)
);
COMMENT ON TABLE feu_candidates IS 'FEU retraining candidates (NSGA-II Pareto set); proposed, never deployed.';
CREATE UNIQUE INDEX feu_candidates_one_selected ON feu_candidates (run_id) WHERE selected;
