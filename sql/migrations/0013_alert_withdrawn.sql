-- 0013 (session 23): a queued alert that a later attempt of its window no longer raises is withdrawn,
-- never sent; drift_events says the status of the run its findings belong to.
-- Before, a window re-run after a data fix (or out of order) left the first attempt's still-pending
-- alerts in the outbox, and the next delivery posted what the stored results no longer say ("data
-- validation failed" for a window that is now fine, a drift that the re-run does not open).
-- A new attempt of a window moves the window's pending alerts to 'withdrawn' when it starts (last_error
-- says why); what the attempt raises again is queued again, with its text; a reply whose parent was
-- withdrawn is withdrawn with it. An alert already sent stays sent: Slack cannot unsay it.

ALTER TABLE alerts DROP CONSTRAINT alerts_state_check;
ALTER TABLE alerts ADD CONSTRAINT alerts_state_check
    CHECK (state IN ('pending', 'sending', 'sent', 'failed', 'withdrawn'));
COMMENT ON COLUMN alerts.state IS 'pending -> sending -> sent | failed (Slack refused it) | pending (retry); '
    'pending -> withdrawn (a new attempt of its window started and did not raise it again; never sent; '
    'last_error says why).';

-- drift_events: a window whose re-run failed keeps its findings (results_kept), and they were listed as
-- if current; run_status and results_kept say so (appended: CREATE OR REPLACE keeps the columns before).
-- The 'event' status is reserved: no finding is stored with it (data-validation failures are runs with
-- status data_invalid and alerts of kind 'data').
CREATE OR REPLACE VIEW drift_events AS
SELECT mo.name AS monitor,
       f.monitor_id,
       f.run_id,
       f.window_start,
       r.window_end,
       f.kind,
       f.metric,
       f.attribute,
       f.group_key,
       f.severity,
       f.status,
       (f.status IN ('open', 'event')) AS is_onset,
       f.since,
       f.value,
       f.ci_low,
       f.ci_high,
       f.baseline,
       f.numbers,
       f.message,
       f.fingerprint,
       r.status AS run_status,
       coalesce((r.details ->> 'results_kept')::boolean, false) AS results_kept
FROM findings f
JOIN monitors mo ON mo.monitor_id = f.monitor_id
JOIN runs r ON r.run_id = f.run_id
WHERE f.status IN ('open', 'ongoing', 'event');
COMMENT ON VIEW drift_events IS 'Windows with an active drift finding (one row per window and finding); '
    'run_status / results_kept: the run the finding belongs to (a failed re-run keeps its findings). '
    'Data-validation failures are not here: runs.status = ''data_invalid'', alert_history.kind = ''data''.';

-- What 0002's inline notes got wrong (0002 is applied and never edited), on the columns, where psql's
-- \d+ shows it: the finding kinds, the 'event' status, and that a finding's fingerprint is its own (a
-- window's findings share ONE Slack message: alert_history_findings maps each to it).
COMMENT ON COLUMN findings.kind IS 'ci_outside_range, significant_change, rumie_dscore, rumie_rise, '
    'rumie_new_group, rumie_key_attributes or gesd_rise (the drift check that decided).';
COMMENT ON COLUMN findings.status IS 'pending (violated, not yet persistent), open (a drift starts), ongoing, '
    'resolved; event is reserved and unused (data-validation failures: runs.status = ''data_invalid'').';
COMMENT ON COLUMN findings.fingerprint IS 'The finding''s own fingerprint; the Slack message that carried it: '
    'alert_history_findings (finding_fingerprint -> message_fingerprint = alerts.fingerprint).';
COMMENT ON TABLE metrics IS 'Outcome-fairness metrics per window: one row per (run, metric, attribute, '
    'group); per-group rates with the Wilson score interval (outcome.ci_method), disparities with the '
    'simultaneous bootstrap interval over all group pairs (ci_low 0: not distinguishable from none).';
