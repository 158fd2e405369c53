-- 0003 alert outbox: one row per alert fingerprint (monitor, window, finding). The UNIQUE fingerprint
-- makes enqueueing idempotent across task retries; state moves by compare-and-set
-- pending -> sending -> sent | failed (| pending again for a retry).

CREATE TABLE alerts (
    alert_id      bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    fingerprint   text NOT NULL UNIQUE,
    kind          text NOT NULL CHECK (kind IN ('fairness', 'data')),
    monitor_id    integer REFERENCES monitors (monitor_id) ON DELETE CASCADE,
    run_id        bigint REFERENCES runs (run_id) ON DELETE SET NULL,
    window_start  timestamptz,
    severity      text,
    channel       text,
    payload       jsonb NOT NULL DEFAULT '{}'::jsonb,
    state         text NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'sending', 'sent', 'failed')),
    attempts      integer NOT NULL DEFAULT 0,
    last_error    text,
    slack_ts      text,
    thread_ts     text,
    created_at    timestamptz NOT NULL DEFAULT now(),
    updated_at    timestamptz NOT NULL DEFAULT now(),
    sent_at       timestamptz
);
COMMENT ON TABLE alerts IS 'Alert outbox and history (Slack): fingerprint-deduplicated, compare-and-set state.';
CREATE INDEX alerts_pending_idx ON alerts (updated_at) WHERE state IN ('pending', 'sending');
CREATE INDEX alerts_monitor_idx ON alerts (monitor_id, created_at);
