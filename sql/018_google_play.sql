-- 018: Google Play one-time products on the same ledger as Apple's purchases. A Google purchase is a
-- transactions row like any other, told apart by `store`: its transaction_id is Google's orderId
-- (GPA.…), or GP- and the first 32 hex digits of the purchase token's SHA-256 when Google gives none;
-- the token itself is kept, and its SHA-256 is UNIQUE, so one purchase is delivered once whoever posts
-- it. Google refunds part of a multi-quantity purchase (refunded_quantity), pushes real-time developer
-- notifications through Pub/Sub (google_notifications, one row per messageId), wants every purchase
-- consumed or acknowledged by the server within 3 days (google_finishes, an outbox like
-- transaction_finishes), and asks for the developer's view of a refund in a review answered with a
-- pendingRefundToken (consumption_requests rows of store google_play). Every existing row is Apple's:
-- the new columns default to that or are NULL. Google's tokens and message ids are compared byte for
-- byte (ascii_bin): unlike hex digests and order ids, they are case-sensitive.

ALTER TABLE transactions
  ADD COLUMN store ENUM('app_store','google_play') NOT NULL DEFAULT 'app_store'
    COMMENT 'The store that sold it: app_store (transaction_id is Apple''s) or google_play (Google''s orderId, or GP- and 32 hex digits of the purchase token''s SHA-256)'
    AFTER transaction_id,
  ADD COLUMN purchase_token VARCHAR(4096) CHARACTER SET ascii COLLATE ascii_bin NULL
    COMMENT 'google_play: the purchaseToken (never logged whole); NULL for app_store'
    AFTER original_transaction_id,
  ADD COLUMN purchase_token_sha256 CHAR(64) CHARACTER SET ascii NULL
    COMMENT 'google_play: SHA-256 (hex) of purchase_token; UNIQUE, so one purchase is one row; NULL for app_store'
    AFTER purchase_token,
  MODIFY COLUMN quantity INT NOT NULL
    COMMENT 'Apple quantity, or Google''s line item productOfferDetails.quantity',
  ADD COLUMN refunded_quantity INT NOT NULL DEFAULT 0
    COMMENT 'google_play: how many of quantity Google refunded by quantity-based partial refunds (voidedQuantity); the goods of the rest stay. 0 for app_store (Apple refunds a share: revocation_percentage)'
    AFTER quantity,
  MODIFY COLUMN finished_at DATETIME(3) NULL
    COMMENT 'UTC, when the store answered 2xx to the service''s Finish Transaction (app_store) or consume/acknowledge (google_play); NULL: not finished by the service (an Apple client''s delivery is finished by the app)',
  ADD UNIQUE KEY transactions_purchase_token (purchase_token_sha256);

ALTER TABLE events
  ADD COLUMN store ENUM('app_store','google_play') NOT NULL DEFAULT 'app_store'
    COMMENT 'The store of the transaction (transactions.store)' AFTER type,
  ADD COLUMN refunded_quantity INT NULL
    COMMENT 'refunded events of a google_play quantity-based partial refund: how many of quantity this refund took back; NULL: the whole purchase (or Apple''s revocation_percentage)'
    AFTER quantity;

ALTER TABLE receipts
  MODIFY COLUMN kind VARCHAR(8) CHARACTER SET ascii NOT NULL DEFAULT 'receipt'
    COMMENT 'receipt: a verifyReceipt receipt (receipt_data is base64); jws: a StoreKit 2 signed transaction (receipt_data is the JWS, sha256 its SHA-256, apple_response its verified payload, verified_at when it was checked: a jws row is never left for retry-pending); google: a Google Play verify (sha256 is the purchase token''s SHA-256, receipt_data NULL: the token is on the transaction, apple_response Google''s productsv2 answer)';

ALTER TABLE consumption_requests
  MODIFY COLUMN store VARCHAR(16) CHARACTER SET ascii NOT NULL DEFAULT 'app_store'
    COMMENT 'The store that asked: app_store (CONSUMPTION_REQUEST, answered with Send Consumption Information) or google_play (pendingRefundReviewNotification, answered with orders.reviewrefund)',
  MODIFY COLUMN notification_uuid CHAR(36) CHARACTER SET ascii NULL
    COMMENT 'app_store: notifications.notification_uuid of the (latest) CONSUMPTION_REQUEST that asked; NULL for google_play (google_notifications.message_id is in google_message_id)',
  ADD COLUMN google_message_id VARCHAR(128) CHARACTER SET ascii COLLATE ascii_bin NULL
    COMMENT 'google_play: google_notifications.message_id of the pendingRefundReviewNotification that asked; NULL for app_store'
    AFTER notification_uuid,
  ADD COLUMN pending_refund_token VARCHAR(4096) CHARACTER SET ascii COLLATE ascii_bin NULL
    COMMENT 'google_play: the pendingRefundToken orders.reviewrefund must send back; NULL for app_store'
    AFTER google_message_id,
  ADD COLUMN order_id VARCHAR(64) CHARACTER SET ascii NULL
    COMMENT 'google_play: Google''s orderId (GPA.…) under review, the path of orders.reviewrefund; NULL for app_store'
    AFTER pending_refund_token,
  MODIFY COLUMN deadline_at DATETIME(3) NOT NULL
    COMMENT 'UTC: app_store requested_at + 12 hours, google_play eventTimeMillis + 24 hours; the store ignores an answer after it',
  MODIFY COLUMN refund_preference_sent VARCHAR(16) CHARACTER SET ascii NULL
    COMMENT 'app_store: refundPreference of sent_body (DECLINE, GRANT_FULL, GRANT_PRORATED); google_play: APPROVE, DECLINE or NEUTRAL; NULL when none was sent';

CREATE TABLE google_notifications (
  message_id             VARCHAR(128) CHARACTER SET ascii COLLATE ascii_bin NOT NULL
    COMMENT 'Pub/Sub messageId; the primary key makes a message pushed again (Pub/Sub delivers at least once) change nothing',
  package_name           VARCHAR(255) CHARACTER SET ascii NOT NULL COMMENT 'DeveloperNotification packageName',
  kind                   VARCHAR(48) CHARACTER SET ascii NOT NULL
    COMMENT 'oneTimeProductPurchased, oneTimeProductCanceled, voidedPurchase, pendingRefundReview, subscription, test, or other',
  purchase_token_sha256  CHAR(64) CHARACTER SET ascii NULL
    COMMENT 'SHA-256 (hex) of the purchaseToken it names; NULL when it names none (test, refund review)',
  order_id               VARCHAR(64) CHARACTER SET ascii NULL COMMENT 'Google''s orderId it names (voided purchase, refund review); NULL when none',
  event_time             DATETIME(3) NOT NULL COMMENT 'UTC, DeveloperNotification eventTimeMillis',
  received_at            DATETIME(3) NOT NULL COMMENT 'UTC, when it was stored (with its effect, before the 204)',
  effect                 VARCHAR(16) CHARACTER SET ascii NOT NULL
    COMMENT 'delivered, unclaimed, pending, cancelled, refunded, partially_refunded, refund_requested, unchanged, stored (a kind without effect), ignored (a package not configured)',
  PRIMARY KEY (message_id),
  KEY google_notifications_token (purchase_token_sha256, event_time),
  KEY google_notifications_order (order_id),
  KEY google_notifications_received (received_at)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin
  COMMENT='Google Play real-time developer notifications (Pub/Sub push), one row per messageId, stored with their effect';

CREATE TABLE google_finishes (
  transaction_id    VARCHAR(64) CHARACTER SET ascii NOT NULL
    COMMENT 'transactions.transaction_id (store google_play) to consume or acknowledge at Google',
  action            ENUM('consume','acknowledge') NOT NULL
    COMMENT 'consume (products.type consumable: consuming also acknowledges) or acknowledge (any other product)',
  package_name      VARCHAR(255) CHARACTER SET ascii NOT NULL COMMENT 'The app''s package name: the path of the call',
  created_at        DATETIME(3) NOT NULL COMMENT 'UTC, when the delivery wrote the row',
  deadline_at       DATETIME(3) NOT NULL
    COMMENT 'UTC, 3 days after the purchase: Google refunds and revokes a purchase not acknowledged by then',
  attempts          INT NOT NULL DEFAULT 0 COMMENT 'Calls made that got no 2xx',
  next_attempt_at   DATETIME(3) NOT NULL COMMENT 'UTC: the next call is not made before this (created_at at first)',
  lease_expires_at  DATETIME(3) NULL
    COMMENT 'UTC: a worker has claimed the row until then (several iap-fcgi on one database never call twice for one row)',
  last_error        VARCHAR(255) NULL
    COMMENT 'The last call without a 2xx: HTTP status and Google''s error reason, or the network error',
  PRIMARY KEY (transaction_id),
  KEY google_finishes_due (next_attempt_at),
  KEY google_finishes_deadline (deadline_at)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin
  COMMENT='Consume or acknowledge calls owed to Google (outbox): a row until Google answers 2xx, then transactions.finished_at';

-- report_daily_revenue, now by store: production sales by day of delivery (UTC), store, product and
-- currency. `gross` is what the orders of the transactions delivered that day cost; `refunded` what the
-- store gave back on them since: an Apple refund its revocation_percentage (milliunits) of the price, a
-- Google refund the whole price, a Google quantity-based partial refund the refunded share of the
-- quantity; `net` is the difference. A refund lowers the day the goods were sold (report_daily_refunds
-- has the day it happened). `refunds` counts the transactions refunded in whole or in part. Sandbox
-- (Apple's sandbox, Google's test purchases) and never-delivered transactions are left out.
CREATE OR REPLACE VIEW report_daily_revenue AS
SELECT DATE(t.delivered_at) AS day, t.store, t.product_id, o.currency,
       COUNT(*) AS deliveries,
       SUM(t.state = 'refunded' OR t.refunded_quantity > 0) AS refunds,
       SUM(o.price) AS gross,
       SUM(CASE WHEN t.state = 'refunded'
                THEN ROUND(o.price * COALESCE(t.revocation_percentage, 100000) / 100000, 2)
                WHEN t.refunded_quantity > 0 THEN ROUND(o.price * t.refunded_quantity / t.quantity, 2)
                ELSE 0 END) AS refunded,
       SUM(o.price) - SUM(CASE WHEN t.state = 'refunded'
                THEN ROUND(o.price * COALESCE(t.revocation_percentage, 100000) / 100000, 2)
                WHEN t.refunded_quantity > 0 THEN ROUND(o.price * t.refunded_quantity / t.quantity, 2)
                ELSE 0 END) AS net
FROM transactions t JOIN orders o ON o.order_id = t.order_id
WHERE t.environment = 'Production' AND t.delivered_at IS NOT NULL
GROUP BY DATE(t.delivered_at), t.store, t.product_id, o.currency;
