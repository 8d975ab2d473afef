-- 020: auto-renewable subscriptions. A subscription is a chain of transactions under one
-- original_transaction_id, each period a new transaction; `subscriptions` holds each chain's state, one
-- row per chain, changed in the database transaction of whatever changed it (a notification, a receipt or
-- JWS that shows a newer period, a status look-up), in the order of Apple's signedDate: a change signed
-- before the last one applied changes nothing. `entitlements` answers "what may this player use now" and
-- is right as time passes: a chain past its expiry (or its grace period's end) is not entitled even when
-- no notification said so. A status change tells the game with a `subscription_changed` event in the
-- same outbox and webhook as the other events, carrying the chain's new status, expiry and auto-renewal.

CREATE TABLE subscriptions (
  original_transaction_id  VARCHAR(64) CHARACTER SET ascii NOT NULL
    COMMENT 'The chain: Apple''s originalTransactionId shared by every period',
  store                    ENUM('app_store','google_play') NOT NULL DEFAULT 'app_store'
    COMMENT 'The store that sells the chain',
  user_id                  VARCHAR(64) NULL
    COMMENT 'The user of the chain''s first delivery here, who receives every renewal; NULL: unclaimed (no period delivered here yet)',
  product_id               VARCHAR(128) NOT NULL
    COMMENT 'The product of the latest period (an upgrade or crossgrade within the group changes it)',
  environment              VARCHAR(16) CHARACTER SET ascii NOT NULL COMMENT 'Production or Sandbox',
  status                   ENUM('active','grace_period','billing_retry','expired','revoked') NOT NULL
    COMMENT 'active: paid until expires_at; grace_period: renewal failed, still entitled until grace_period_expires_at; billing_retry: renewal failed, Apple retries, not entitled; expired; revoked: the latest period refunded or revoked',
  expires_at               DATETIME(3) NOT NULL
    COMMENT 'UTC, expiresDate of the latest period (or the date a renewal extension set)',
  grace_period_expires_at  DATETIME(3) NULL
    COMMENT 'UTC, gracePeriodExpiresDate of the renewal info while in a billing grace period; NULL: none',
  auto_renew               BOOLEAN NULL
    COMMENT 'autoRenewStatus of the latest renewal info: the chain renews at expires_at; NULL: no renewal info seen yet',
  auto_renew_product_id    VARCHAR(128) NULL
    COMMENT 'autoRenewProductId of the latest renewal info: the product the next period will be (a downgrade shows here first)',
  expiration_intent        VARCHAR(32) CHARACTER SET ascii NULL
    COMMENT 'Why it expired: VOLUNTARY, BILLING_RETRY, PRICE_INCREASE, PRODUCT_NOT_FOR_SALE or OTHER (an EXPIRED subtype, or the renewal info''s expirationIntent); NULL while not expired',
  latest_transaction_id    VARCHAR(64) CHARACTER SET ascii NOT NULL
    COMMENT 'transactions.transaction_id of the latest period',
  latest_purchase_at       DATETIME(3) NOT NULL
    COMMENT 'UTC, purchaseDate of the latest period: a period seen later moves the chain only when it was bought after this',
  last_signed_date         DATETIME(3) NULL
    COMMENT 'UTC, signedDate of the last change applied to the chain (notification or renewal info); a change signed before it changes nothing',
  created_at               DATETIME(3) NOT NULL COMMENT 'UTC, when the chain was first seen here',
  updated_at               DATETIME(3) NOT NULL COMMENT 'UTC, when the row last changed',
  PRIMARY KEY (original_transaction_id),
  KEY subscriptions_user (user_id, product_id),
  KEY subscriptions_status (status, expires_at),
  KEY subscriptions_latest_transaction (latest_transaction_id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin
  COMMENT='Auto-renewable subscription chains, one row per original_transaction_id, with their state now';

-- The ENUM grows at its end and the new columns are NULL for every other type: metadata only, no table copy.
ALTER TABLE events
  MODIFY COLUMN type ENUM('delivered','refunded','refund_reversed','refund_requested','subscription_changed') NOT NULL
    COMMENT 'delivered: grant the goods; refunded: take them back (revocation_percentage: that share); refund_reversed: grant them again; refund_requested: the player asked Apple for a refund (nothing taken back yet; answer with the consumption); subscription_changed: a chain''s status changed (subscription_status, expires_at, auto_renew; transaction_id its latest period)',
  ADD COLUMN subscription_status ENUM('active','grace_period','billing_retry','expired','revoked') NULL
    COMMENT 'subscription_changed: the chain''s status afterwards (subscriptions.status); NULL for other types',
  ADD COLUMN expires_at DATETIME(3) NULL
    COMMENT 'subscription_changed: UTC, the chain''s expires_at afterwards; NULL for other types',
  ADD COLUMN auto_renew BOOLEAN NULL
    COMMENT 'subscription_changed: whether the chain renews (NULL: not known yet, and for other types)';

-- entitlements: the chains each player may use now. A row is here while its status is active or
-- grace_period and entitled_until (expires_at, or the grace period's end when later) is in the future;
-- chains without a user (unclaimed), expired, revoked or in billing retry are not. The game asks
-- `SELECT 1 FROM entitlements WHERE user_id = ? AND product_id = ?`.
CREATE OR REPLACE VIEW entitlements AS
SELECT s.user_id, s.product_id, s.original_transaction_id, s.status,
       IF(s.status = 'grace_period', GREATEST(s.expires_at, COALESCE(s.grace_period_expires_at, s.expires_at)),
          s.expires_at) AS entitled_until
FROM subscriptions s
WHERE s.user_id IS NOT NULL
  AND s.status IN ('active', 'grace_period')
  AND IF(s.status = 'grace_period', GREATEST(s.expires_at, COALESCE(s.grace_period_expires_at, s.expires_at)),
         s.expires_at) > UTC_TIMESTAMP(3);
