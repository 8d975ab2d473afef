-- 007: App Store Server Notifications V2 (POST /v1/notifications/apple, iapctl notifications sync).
-- Each notification Apple sends is stored once, keyed by its notificationUUID, in the same database
-- transaction as its effect on `transactions`, `orders` and `events`. Apple may send one up to six
-- times and out of order: the primary key makes a repeat change nothing, and each transaction keeps
-- the signedDate of the last notification applied to it, so an older one arriving later changes nothing.
CREATE TABLE notifications (
  notification_uuid  CHAR(36) CHARACTER SET ascii NOT NULL
    COMMENT 'Apple notificationUUID; the primary key makes a notification sent again (up to six times) change nothing',
  notification_type  VARCHAR(64) CHARACTER SET ascii NOT NULL
    COMMENT 'Apple notificationType: ONE_TIME_CHARGE, REFUND, REVOKE, REFUND_REVERSED, REFUND_DECLINED, CONSUMPTION_REQUEST, TEST, ...',
  subtype            VARCHAR(64) CHARACTER SET ascii NULL COMMENT 'Apple subtype; NULL when it has none',
  environment        VARCHAR(16) CHARACTER SET ascii NOT NULL COMMENT 'data.environment: Production or Sandbox',
  transaction_id     VARCHAR(64) CHARACTER SET ascii NULL
    COMMENT 'transactionId of data.signedTransactionInfo; NULL when it carries none (TEST)',
  signed_date        DATETIME(3) NOT NULL COMMENT 'UTC, Apple signedDate: notifications apply in this order',
  signed_payload     MEDIUMTEXT CHARACTER SET ascii NOT NULL COMMENT 'The signedPayload JWS as Apple sent it (verified)',
  received_at        DATETIME(3) NOT NULL COMMENT 'UTC, when it was stored',
  source             VARCHAR(8) CHARACTER SET ascii NOT NULL
    COMMENT 'post: Apple POSTed it; sync: iapctl notifications sync found it in Get Notification History',
  applied            TINYINT(1) NOT NULL
    COMMENT '1: it took its place in its transaction''s history (effect says what changed); 0: stored only (a type without effect, or older than the last one applied to its transaction)',
  effect             VARCHAR(16) CHARACTER SET ascii NOT NULL
    COMMENT 'delivered, unclaimed, refunded, restored (a reversed refund delivered again), unchanged (applied, nothing to change), stale (older than the last applied), stored (a type without effect)',
  PRIMARY KEY (notification_uuid),
  KEY notifications_transaction (transaction_id, signed_date),
  KEY notifications_signed (signed_date)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin
  COMMENT='App Store Server Notifications V2, one row per notificationUUID, stored with their effect';

ALTER TABLE transactions
  MODIFY COLUMN state VARCHAR(20) CHARACTER SET ascii NOT NULL
    COMMENT 'delivered, refunded, or unclaimed (paid, seen only in a notification without an order to go to: the first verify that shows it delivers it to that request''s user)',
  MODIFY COLUMN user_id VARCHAR(64) NULL
    COMMENT 'User it was delivered (or refused) to; NULL: seen only in a notification (unclaimed, or refunded before any verify showed it)',
  MODIFY COLUMN receipt_id BIGINT UNSIGNED NULL
    COMMENT 'receipts.receipt_id of the request that first recorded or claimed it; NULL: recorded by a notification and never claimed',
  ADD COLUMN notification_signed_at DATETIME(3) NULL
    COMMENT 'UTC, signedDate of the last notification applied to it (ONE_TIME_CHARGE, REFUND, REVOKE, REFUND_REVERSED); an older one changes nothing' AFTER delivered_at;

ALTER TABLE orders
  MODIFY COLUMN origin VARCHAR(16) CHARACTER SET ascii NOT NULL
    COMMENT 'client: POST /v1/orders; receipt: made on delivery of an unbound transaction; notification: made for a ONE_TIME_CHARGE whose appAccountToken names an order already used';
