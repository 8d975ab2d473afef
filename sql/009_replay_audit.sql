-- 009: every verify request past the input checks leaves its audit row, a replay answered from the
-- database without Apple (the replay short-cut) included: who (user, order, client address), when,
-- which receipt (by SHA-256) and what was answered from. A replay's row does not store the receipt's
-- bytes again: they are in the row it reused the answer of (`replay_of`, same sha256). A replay by
-- another user is then visible to anyone investigating fraud. `iapctl prune --older-than 400d` sets the
-- bytes of old rows to NULL and keeps everything else.
ALTER TABLE receipts
  MODIFY COLUMN receipt_data MEDIUMTEXT CHARACTER SET ascii NULL
    COMMENT 'The receipt as posted (base64, normalised), or the JWS; NULL for a replay (replay_of holds the same bytes) or once iapctl prune removed the bytes (sha256 stays)',
  ADD COLUMN replay_of BIGINT UNSIGNED NULL
    COMMENT 'A replay answered from the database without calling Apple: the receipt_id whose answer it reused (NULL: the request went its full way)';
