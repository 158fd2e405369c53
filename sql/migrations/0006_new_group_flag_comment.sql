-- 0006 say what rumie_rule_changes.is_new_group is (0004 is applied and never edited). It is a
-- descriptive flag with a FIXED overlap of 0.5 and no significance test, so it can differ from the
-- drift check, which uses each monitor's drift.rumie.min_jaccard (a view cannot read the YAML) and
-- only counts a significant, discriminated group. The check's decisions are findings of kind
-- 'rumie_new_group', with the overlap and the threshold used in numbers ->> 'jaccard' / 'min_jaccard'.

COMMENT ON COLUMN rumie_rule_changes.is_new_group IS
    'Descriptive: no key attribute in common with the previous window''s group, or group_overlap < 0.5 '
    '(a fixed 0.5, NOT the monitor''s drift.rumie.min_jaccard; no significance test). What the drift '
    'check decided: findings / drift_events with kind = ''rumie_new_group'' (numbers ->> ''jaccard'', '
    'numbers ->> ''min_jaccard'').';

COMMENT ON VIEW rumie_rule_changes IS
    'RUMIE rules, key attributes and DScore against the previous window. is_new_group uses a fixed 0.5 '
    'overlap; the drift check''s new-group decisions are findings with kind = ''rumie_new_group''.';
