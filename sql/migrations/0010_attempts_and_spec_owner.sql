-- 0010 overlap-safe windows and one owning spec file per monitor (issue 15).
--
-- runs.attempt_id: the attempt of the window that holds the run (its lease). Every attempt gets a
-- fresh id when it starts (resolve_window); its artifacts live under <window>/<attempt_id>/ and its
-- writes are refused once a newer attempt took the window over, so two overlapping attempts (an
-- Airflow zombie next to its retry) never disturb each other. NULL for runs written before 0010.
--
-- monitors.spec_path: the spec file that owns the monitor name (identity.name). A run from another
-- file with the same name is refused unless the operator takes the monitor over explicitly
-- (fairmon run --take-over-monitor). NULL: not recorded yet (the next run records its file).

ALTER TABLE runs ADD COLUMN attempt_id text;
ALTER TABLE monitors ADD COLUMN spec_path text;

COMMENT ON COLUMN runs.attempt_id IS
    'The attempt holding the window''s run (a new one per resolve_window); a superseded attempt''s writes are refused.';
COMMENT ON COLUMN monitors.spec_path IS
    'The spec file that owns this monitor name; another file with the same identity.name is refused unless taken over explicitly.';
