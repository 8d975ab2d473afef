-- 003: keep what the request said beside its receipt, so that `iapctl retry-pending`
-- can finish a verification exactly as the request would have (the named transaction,
-- the app version for the sandbox policy).
ALTER TABLE receipts
  ADD COLUMN transaction_id VARCHAR(64) CHARACTER SET ascii NULL
    COMMENT 'transaction_id named by the request, if any' AFTER order_id,
  ADD COLUMN app_version VARCHAR(32) CHARACTER SET ascii NULL
    COMMENT 'app_version sent by the request, if any (the sandbox policy reads it)' AFTER transaction_id;
