-- 0011 the models an FEU recommendation is compared with (issue 16 req 4), stored beside its candidates.
--
-- One row per (run, baseline): production (the constraints' anchor), constant (approve everyone),
-- fairlearn's threshold_optimizer and exponentiated_gradient (demographic parity), fit on FEU's own
-- split and seed. metrics holds {"validation": {...}, "test": {...}}: AUC, balanced accuracy, F1,
-- positive rate, DP, EOD, GESD (with its note when undefined) and, for the mitigators, whether they
-- keep FEU's constraints (band_ok, utility_ok, rate_diff_vs_production). Replaced with the run's
-- candidates as one set, so the report's Pareto chart and an analyst's SQL see the same comparison.

CREATE TABLE feu_baselines (
    run_id      bigint NOT NULL REFERENCES runs (run_id) ON DELETE CASCADE,
    baseline    text NOT NULL,
    metrics     jsonb NOT NULL DEFAULT '{}'::jsonb,
    created_at  timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT feu_baselines_pkey PRIMARY KEY (run_id, baseline)
);
COMMENT ON TABLE feu_baselines IS
    'What an FEU recommendation is compared with (production, approve-everyone, fairlearn mitigators): '
    'validation and test metrics per baseline, same split and seed as the run''s feu_candidates.';
