-- 004: `iapctl retry-pending` keeps count of its attempts on each unverified receipt, waits longer
-- between them (backoff), and closes a row for good with a final state it reports: given up (after
-- --max-attempts, or at once when Apple says asking again will not help), or superseded (the same
-- bytes completed in another row, so Apple is not asked again). A run takes only rows that are due,
-- so rows Apple never settles can no longer fill every run's --limit and keep newer ones waiting.
ALTER TABLE receipts
  ADD COLUMN retry_attempts INT UNSIGNED NOT NULL DEFAULT 0
    COMMENT 'Verifications iapctl retry-pending made of this row' AFTER verified_at,
  ADD COLUMN retry_next_at DATETIME(3) NULL
    COMMENT 'UTC: retry-pending leaves the row alone until then (backoff); NULL: due once older than --minimum-age' AFTER retry_attempts,
  ADD COLUMN retry_final_state VARCHAR(16) CHARACTER SET ascii NULL
    COMMENT 'NULL: retry-pending still tries it; gave_up: no more tries (see retry_final_reason); superseded: the same bytes completed in superseded_by' AFTER retry_next_at,
  ADD COLUMN retry_final_reason VARCHAR(255) NULL
    COMMENT 'Why retry-pending gave up, e.g. the attempts made and Apple''s last status' AFTER retry_final_state,
  ADD COLUMN superseded_by BIGINT UNSIGNED NULL
    COMMENT 'receipts.receipt_id of the completed verification of the same bytes that closed this row' AFTER retry_final_reason,
  DROP KEY receipts_unverified,
  ADD KEY receipts_retry_due (verified_at, retry_final_state, received_at, retry_next_at);
