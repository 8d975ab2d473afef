-- 006: events for the game. Delivering a transaction, refunding a delivered one and reversing that
-- refund each add a row here in the same database transaction as the change, so that the game's own
-- code can grant or take back goods exactly once: by pull (it sets consumed_at in the database
-- transaction that grants) or by push (the webhook dispatcher POSTs each row to IAP_WEBHOOK_URL).
CREATE TABLE events (
  event_id                BIGINT UNSIGNED NOT NULL AUTO_INCREMENT
    COMMENT 'The game''s idempotency key; a user''s events are sent in the order of their ids',
  type                    ENUM('delivered','refunded','refund_reversed') NOT NULL
    COMMENT 'delivered: grant the goods; refunded: take them back; refund_reversed: grant them again',
  transaction_id          VARCHAR(64) CHARACTER SET ascii NOT NULL COMMENT 'transactions.transaction_id',
  original_transaction_id VARCHAR(64) CHARACTER SET ascii NOT NULL COMMENT 'Apple original transaction id',
  order_id                CHAR(36) CHARACTER SET ascii NOT NULL COMMENT 'orders.order_id the goods went to',
  user_id                 VARCHAR(64) NOT NULL COMMENT 'The user whose goods change',
  product_id              VARCHAR(128) NOT NULL COMMENT 'Apple product id',
  quantity                INT NOT NULL COMMENT 'Apple quantity',
  environment             VARCHAR(16) CHARACTER SET ascii NOT NULL COMMENT 'Production or Sandbox',
  occurred_at             DATETIME(3) NOT NULL
    COMMENT 'UTC: when the change happened (delivery; for a refund, Apple''s revocation date when it gave one)',
  created_at              DATETIME(3) NOT NULL COMMENT 'UTC: when the row was written, with the change',
  status                  ENUM('pending','sent','failed') NOT NULL DEFAULT 'pending'
    COMMENT 'Push only: pending (not yet acknowledged by the webhook; stays so without IAP_WEBHOOK_URL), sent (a 2xx), failed (72 hours without one)',
  attempts                INT NOT NULL DEFAULT 0 COMMENT 'Webhook POSTs made',
  next_attempt_at         DATETIME(3) NULL COMMENT 'UTC: the next POST is not made before this; NULL: at once',
  lease_expires_at        DATETIME(3) NULL
    COMMENT 'UTC: a dispatcher has claimed the row until then (several iap-fcgi on one database never POST one event at once)',
  sent_at                 DATETIME(3) NULL COMMENT 'UTC: when the webhook answered 2xx',
  last_error              VARCHAR(255) NULL COMMENT 'The last failed POST: HTTP status or network error',
  consumed_at             DATETIME(3) NULL
    COMMENT 'Pull: set by the game''s code in the database transaction that grants (UPDATE ... WHERE consumed_at IS NULL)',
  PRIMARY KEY (event_id),
  KEY events_dispatch (status, next_attempt_at),
  KEY events_user (user_id, event_id),
  KEY events_transaction (transaction_id),
  KEY events_unconsumed (consumed_at, event_id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin
  COMMENT='Goods to grant or take back, one row per change, written in the database transaction of the change';
