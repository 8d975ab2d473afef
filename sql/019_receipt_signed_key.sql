-- 019: the replay short-cut knows a receipt by what its signature covers, not by its bytes. The bytes of
-- an app receipt can change without its signature changing (a certificate added to or moved in the
-- unsigned certificate set, lengths written in more bytes), and a copy so re-encoded went to Apple again
-- and left a new row each time. signed_key is the SHA-256 of the signed payload and the signers'
-- signatures for an app receipt in DER, else the receipt's sha256. A replay row's replay_of names a row
-- with the same signed_key: its receipt may be another encoding of the same signed content. Rows from
-- before this migration have none: their receipts are verified with Apple once more. Online: a nullable
-- column and a secondary index are added without copying the table or blocking writes.
ALTER TABLE receipts
  ADD COLUMN signed_key CHAR(64) CHARACTER SET ascii NULL
    COMMENT 'kind receipt: the replay short-cut''s key, SHA-256 (hex) of what the receipt''s signature covers (payload and signatures of an app receipt in DER), else of its bytes (= sha256); NULL for other kinds and rows from before 019'
    AFTER sha256,
  ALGORITHM=INSTANT;
ALTER TABLE receipts
  ADD KEY receipts_signed_key (signed_key),
  ALGORITHM=INPLACE, LOCK=NONE;
