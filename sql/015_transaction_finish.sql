-- 015: Finish Transaction for deliveries with no client in the loop. A transaction delivered by a
-- notification, `iapctl lookup --deliver` or `iapctl notifications sync` has no app to call
-- StoreKit's finish(), so the service tells Apple (POST {Server API}/inApps/v1/transactions/{id}/finish).
-- The delivery writes a row in transaction_finishes in its own database transaction (an outbox: a
-- crash leaves no delivery unfinished); the service's finish worker leases the row, calls Apple, and
-- on a 2xx sets transactions.finished_at and deletes the row. A delivery a client posted is never
-- written here: the app finishes it itself.

ALTER TABLE transactions
  ADD COLUMN finished_at DATETIME(3) NULL
    COMMENT 'UTC, when Apple answered 2xx to the service''s Finish Transaction; NULL: not finished by the service (a client''s delivery is finished by the app)'
    AFTER delivered_at;

CREATE TABLE transaction_finishes (
  transaction_id    VARCHAR(64) CHARACTER SET ascii NOT NULL COMMENT 'transactions.transaction_id to finish at Apple',
  environment       VARCHAR(16) CHARACTER SET ascii NOT NULL
    COMMENT 'Production or Sandbox: the Server API the finish goes to (the transaction''s environment)',
  created_at        DATETIME(3) NOT NULL COMMENT 'UTC, when the delivery wrote the row',
  attempts          INT NOT NULL DEFAULT 0 COMMENT 'Finish calls made that got no 2xx',
  next_attempt_at   DATETIME(3) NOT NULL COMMENT 'UTC: the next call is not made before this (created_at at first)',
  lease_expires_at  DATETIME(3) NULL
    COMMENT 'UTC: a finish worker has claimed the row until then (several iap-fcgi on one database never call twice for one row)',
  last_error        VARCHAR(255) NULL
    COMMENT 'The last call without a 2xx: HTTP status and Apple errorCode, or the network error',
  PRIMARY KEY (transaction_id),
  KEY transaction_finishes_due (next_attempt_at)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin
  COMMENT='Finish Transaction calls owed to Apple (outbox): a row until Apple answers 2xx, then transactions.finished_at';
