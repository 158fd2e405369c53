-- 0012 say what a failed run's result rows are (0001 is applied and never edited). A status mark never
-- removes a window's result rows: a re-run that fails, crashes or finds its data gone keeps the rows an
-- earlier attempt wrote, and the run says so (details ->> 'results_kept', details ->> 'persisted_status').
-- Only the next successful write of the window replaces them.

COMMENT ON TABLE runs IS 'One row per (monitor, window): status, model version, timings, error text. '
    'A window that never completed carries no result rows (never zeros); a failed, data_invalid or '
    'skipped re-run keeps the rows an earlier attempt wrote, marked by details ->> ''results_kept'' = '
    '''true'' and details ->> ''persisted_status'' (model_version and n_rows describe those rows).';
