-- 013: a refund seen by POST /v1/transactions/verify takes its place in the same order as notifications:
-- it applies only when it is not older than the last refund-state change applied to the transaction, and
-- when it applies its date becomes the last one (a JWS's signedDate; a receipt, signed by no one, by its
-- cancellation_date). The column that records it exists since 007; only what it means is wider now, so
-- this changes its COMMENT and nothing else (metadata only: no table copy, instant on Galera too).
ALTER TABLE transactions
  MODIFY COLUMN notification_signed_at DATETIME(3) NULL
    COMMENT 'UTC, date of the last refund-state change applied to it: signedDate of a notification (ONE_TIME_CHARGE, REFUND, REVOKE, REFUND_REVERSED), or of a refunded JWS a verify showed (a receipt: its cancellation_date); an older notification or verified refund changes nothing';
