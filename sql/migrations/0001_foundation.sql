-- 0001 foundation: monitors and their runs (one row per monitor and window).
-- A run is keyed by (monitor, window_start, window_end): re-running a window updates this row in place,
-- so run_id stays stable for links (reports, alerts) across Airflow retries and re-runs.

CREATE TABLE monitors (
    monitor_id        integer GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    name              text NOT NULL UNIQUE CHECK (name <> ''),
    owner             text,
    tags              text[] NOT NULL DEFAULT '{}',
    spec              jsonb,
    spec_fingerprint  text,
    created_at        timestamptz NOT NULL DEFAULT now(),
    updated_at        timestamptz NOT NULL DEFAULT now()
);
COMMENT ON TABLE monitors IS 'One row per monitored model (MonitorSpec identity.name).';

CREATE TABLE runs (
    run_id            bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    monitor_id        integer NOT NULL REFERENCES monitors (monitor_id) ON DELETE CASCADE,
    window_start      timestamptz NOT NULL,
    window_end        timestamptz NOT NULL,
    status            text NOT NULL CHECK (status IN
                        ('running', 'succeeded', 'failed', 'data_invalid', 'skipped', 'labels_pending')),
    model_version     text,
    spec_fingerprint  text,
    n_rows            integer CHECK (n_rows >= 0),
    timings           jsonb NOT NULL DEFAULT '{}'::jsonb,
    error             text,
    details           jsonb NOT NULL DEFAULT '{}'::jsonb,
    created_at        timestamptz NOT NULL DEFAULT now(),
    updated_at        timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT runs_window_order CHECK (window_end > window_start),
    CONSTRAINT runs_monitor_window_key UNIQUE (monitor_id, window_start, window_end)
);
COMMENT ON TABLE runs IS 'One row per (monitor, window): status, model version, timings, error text. '
    'failed/data_invalid/skipped windows carry no result rows (never zeros).';
-- "completed runs of this monitor before window W" (drift history) and per-monitor timelines
CREATE INDEX runs_monitor_start_idx ON runs (monitor_id, window_start DESC) INCLUDE (status);
