-- 014: refund requests (Apple's CONSUMPTION_REQUEST). When a customer asks Apple for a refund, Apple
-- gives the developer 12 hours to say, with the customer's consent, whether the purchase was delivered
-- and how much of it was used (Send Consumption Information). The notification that asks writes a row
-- in consumption_requests in its own database transaction; the sender answers it on the service's own
-- threads. The game records consent and consumption in the two tables below (SQL or iapctl
-- consumption); each product says what to ask Apple for. The rows are keyed by store so that another
-- store's refund review (Google Play's orders.reviewrefund) can share the ledger and the policies.

ALTER TABLE products
  ADD COLUMN refund_preference ENUM('none','decline','grant_full','grant_prorated','auto') NOT NULL DEFAULT 'none'
    COMMENT 'What a refund request asks Apple for: none (no preference sent), decline, grant_full, grant_prorated (only with a consumption above 0), auto (by delivery and consumption)',
  ADD COLUMN sample_content_provided TINYINT(1) NOT NULL DEFAULT 0
    COMMENT '1: the app offers a free sample or trial of this content before purchase (sampleContentProvided)';

CREATE TABLE consumption_consent (
  user_id       VARCHAR(64) NOT NULL COMMENT 'The game user who agreed that consumption data may go to Apple',
  consented_at  DATETIME(3) NOT NULL COMMENT 'UTC, when the user last agreed',
  withdrawn_at  DATETIME(3) NULL
    COMMENT 'UTC, when the user withdrew it; consent is in force when this is NULL or older than consented_at',
  PRIMARY KEY (user_id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin
  COMMENT='Consent to share consumption data with Apple; written by the game (SQL) or iapctl consumption consent';

CREATE TABLE consumption (
  transaction_id  VARCHAR(64) CHARACTER SET ascii NOT NULL COMMENT 'transactions.transaction_id',
  consumed_milli  INT NOT NULL
    COMMENT 'How much of the purchase the player used, in milliunits: 0 (nothing) to 100000 (all)',
  updated_at      DATETIME(3) NOT NULL COMMENT 'UTC, last change',
  PRIMARY KEY (transaction_id),
  CONSTRAINT consumption_range CHECK (consumed_milli BETWEEN 0 AND 100000)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin
  COMMENT='Consumption of a purchase as the game knows it; written by the game (SQL) or iapctl consumption set';

CREATE TABLE consumption_requests (
  request_id              BIGINT UNSIGNED NOT NULL AUTO_INCREMENT COMMENT 'Row id',
  store                   VARCHAR(16) CHARACTER SET ascii NOT NULL DEFAULT 'app_store'
    COMMENT 'The store that asked: app_store (CONSUMPTION_REQUEST)',
  transaction_id          VARCHAR(64) CHARACTER SET ascii NOT NULL COMMENT 'The transaction the customer wants refunded',
  original_transaction_id VARCHAR(64) CHARACTER SET ascii NOT NULL COMMENT 'Apple original transaction id',
  notification_uuid       CHAR(36) CHARACTER SET ascii NOT NULL
    COMMENT 'notifications.notification_uuid of the (latest) CONSUMPTION_REQUEST that asked',
  environment             VARCHAR(16) CHARACTER SET ascii NOT NULL COMMENT 'Production or Sandbox: where the answer goes',
  user_id                 VARCHAR(64) NULL COMMENT 'User the transaction was delivered to; NULL: never delivered here',
  product_id              VARCHAR(128) NOT NULL COMMENT 'Apple product id',
  product_type            VARCHAR(32) CHARACTER SET ascii NULL
    COMMENT 'Apple type of the transaction: Consumable, Non-Consumable, Auto-Renewable Subscription, Non-Renewing Subscription (no consumption is sent for auto-renewable ones)',
  reason                  VARCHAR(32) CHARACTER SET ascii NULL
    COMMENT 'Apple consumptionRequestReason: UNINTENDED_PURCHASE, FULFILLMENT_ISSUE, UNSATISFIED_WITH_PURCHASE, LEGAL, OTHER; NULL when Apple gave none',
  requested_at            DATETIME(3) NOT NULL COMMENT 'UTC, the notification''s signedDate',
  deadline_at             DATETIME(3) NOT NULL COMMENT 'UTC, requested_at + 12 hours: Apple ignores an answer after it',
  status                  ENUM('pending','sent','no_consent','expired','failed') NOT NULL DEFAULT 'pending'
    COMMENT 'pending (to send), sent (Apple answered 202), no_consent (the user''s consent was not in force: nothing sent), expired (no 202 before deadline_at), failed (Apple refused it: a 4xx, last_error has its errorCode)',
  event_id                BIGINT UNSIGNED NULL
    COMMENT 'events.event_id of the refund_requested event; the sender waits (at most 60 s) for the webhook to answer it',
  game_consumed_milli     INT NULL
    COMMENT 'Consumption the game answered to the refund_requested webhook ({"consumption_percentage": N}); wins over the consumption table',
  attempts                INT NOT NULL DEFAULT 0 COMMENT 'PUTs made to Apple',
  next_attempt_at         DATETIME(3) NULL COMMENT 'UTC: the next PUT is not made before this; NULL: at once',
  lease_expires_at        DATETIME(3) NULL
    COMMENT 'UTC: a sender has claimed the row until then (several iap-fcgi on one database never send one request twice)',
  sent_at                 DATETIME(3) NULL COMMENT 'UTC, when Apple answered 202',
  sent_body               VARCHAR(1024) NULL COMMENT 'The JSON body sent with the PUT that Apple accepted (or the last one tried)',
  refund_preference_sent  VARCHAR(16) CHARACTER SET ascii NULL
    COMMENT 'refundPreference of sent_body: DECLINE, GRANT_FULL, GRANT_PRORATED; NULL when none was sent',
  last_error              VARCHAR(255) NULL COMMENT 'The last failed PUT: HTTP status and Apple errorCode, or network error',
  outcome                 ENUM('refunded','declined') NULL COMMENT 'Apple''s decision: REFUND (refunded) or REFUND_DECLINED (declined)',
  outcome_at              DATETIME(3) NULL COMMENT 'UTC, signedDate of the notification that told the outcome',
  created_at              DATETIME(3) NOT NULL COMMENT 'UTC, when the row was written',
  PRIMARY KEY (request_id),
  KEY consumption_requests_transaction (transaction_id, request_id),
  KEY consumption_requests_dispatch (status, next_attempt_at),
  KEY consumption_requests_requested (requested_at)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin
  COMMENT='Refund requests to answer (CONSUMPTION_REQUEST), one row per request, with what was sent and the outcome';

ALTER TABLE events
  MODIFY COLUMN type ENUM('delivered','refunded','refund_reversed','refund_requested') NOT NULL
    COMMENT 'delivered: grant the goods; refunded: take them back (revocation_percentage: that share); refund_reversed: grant them again; refund_requested: the player asked Apple for a refund (nothing taken back yet; answer with the consumption)';

-- report_refund_requests_daily: refund requests by the day Apple asked (UTC), environment and product:
-- how many, how they were answered, and what Apple decided, by the preference that was sent.
CREATE OR REPLACE VIEW report_refund_requests_daily AS
SELECT DATE(r.requested_at) AS day, r.environment, r.product_id,
       COUNT(*) AS requests,
       SUM(r.status = 'sent') AS sent,
       SUM(r.status = 'pending') AS pending,
       SUM(r.status = 'no_consent') AS no_consent,
       SUM(r.status = 'expired') AS expired,
       SUM(r.status = 'failed') AS failed,
       SUM(r.outcome = 'refunded') AS refunded,
       SUM(r.outcome = 'declined') AS declined,
       SUM(r.refund_preference_sent = 'DECLINE') AS sent_decline,
       SUM(r.refund_preference_sent = 'DECLINE' AND r.outcome = 'refunded') AS sent_decline_refunded,
       SUM(r.refund_preference_sent = 'GRANT_FULL') AS sent_grant_full,
       SUM(r.refund_preference_sent = 'GRANT_PRORATED') AS sent_grant_prorated,
       SUM(r.status = 'sent' AND r.refund_preference_sent IS NULL) AS sent_no_preference
FROM consumption_requests r
GROUP BY DATE(r.requested_at), r.environment, r.product_id;
