-- 0013: a queued alert that a later attempt of its window no longer raises is withdrawn, never sent.
-- Before, a window re-run after a data fix (or out of order) left the first attempt's still-pending
-- alerts in the outbox, and the next delivery posted what the stored results no longer say ("data
-- validation failed" for a window that is now fine, a drift that the re-run does not open).
-- The alert step of every attempt moves its window's pending alerts that it did not raise again to
-- 'withdrawn' (last_error says why); a reply whose parent was withdrawn is withdrawn with it. An alert
-- already sent stays sent: Slack cannot unsay it.

ALTER TABLE alerts DROP CONSTRAINT alerts_state_check;
ALTER TABLE alerts ADD CONSTRAINT alerts_state_check
    CHECK (state IN ('pending', 'sending', 'sent', 'failed', 'withdrawn'));
COMMENT ON COLUMN alerts.state IS 'pending -> sending -> sent | failed (Slack refused it) | pending (retry); '
    'pending -> withdrawn (a later attempt of its window no longer raises it; never sent; last_error says why).';
