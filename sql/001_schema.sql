-- 001: the order tables. Times are UTC DATETIME(3); every money amount is DECIMAL(10,2).
-- Applied by `iapctl migrate`, which records it in schema_migrations.

CREATE TABLE products (
  product_id  VARCHAR(128) NOT NULL COMMENT 'App Store Connect product identifier, as in Apple''s receipts',
  title       VARCHAR(255) NOT NULL DEFAULT '' COMMENT 'Name shown to operators',
  price       DECIMAL(10,2) NOT NULL COMMENT 'Catalog price a client order must match',
  currency    CHAR(3) NOT NULL DEFAULT 'CNY' COMMENT 'ISO 4217 currency of price',
  active      TINYINT(1) NOT NULL DEFAULT 1 COMMENT '1: orders may be created for it; 0: retired',
  PRIMARY KEY (product_id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin
  COMMENT='Catalog of in-app products; written by iapctl products or SQL';

CREATE TABLE orders (
  order_id    CHAR(36) CHARACTER SET ascii NOT NULL COMMENT 'Lowercase UUID; the client puts it in applicationUsername',
  user_id     VARCHAR(64) NOT NULL COMMENT 'The game or app user the goods go to',
  product_id  VARCHAR(128) NOT NULL COMMENT 'products.product_id',
  price       DECIMAL(10,2) NOT NULL COMMENT 'Catalog price when the order was made',
  currency    CHAR(3) NOT NULL COMMENT 'ISO 4217 currency of price',
  status      VARCHAR(16) CHARACTER SET ascii NOT NULL COMMENT 'created, delivered or refunded',
  origin      VARCHAR(16) CHARACTER SET ascii NOT NULL COMMENT 'client: POST /v1/orders; receipt: made on delivery of an unbound transaction',
  created_at  DATETIME(3) NOT NULL COMMENT 'UTC',
  updated_at  DATETIME(3) NOT NULL COMMENT 'UTC, last status change',
  PRIMARY KEY (order_id),
  KEY orders_user (user_id, created_at)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin
  COMMENT='Orders: made by the client before paying, or by the service for a paid transaction that had none';

CREATE TABLE receipts (
  receipt_id     BIGINT UNSIGNED NOT NULL AUTO_INCREMENT COMMENT 'Audit row id',
  sha256         CHAR(64) CHARACTER SET ascii NOT NULL COMMENT 'SHA-256 (hex) of the decoded receipt bytes',
  receipt_data   MEDIUMTEXT CHARACTER SET ascii NOT NULL COMMENT 'The receipt as posted (base64, normalised)',
  order_id       CHAR(36) CHARACTER SET ascii NULL COMMENT 'orders.order_id named by the request, if any',
  user_id        VARCHAR(64) NOT NULL COMMENT 'User the request was for',
  client_ip      VARCHAR(45) CHARACTER SET ascii NULL COMMENT 'Client address as nginx saw it',
  environment    VARCHAR(16) CHARACTER SET ascii NULL COMMENT 'Production or Sandbox: the endpoint that answered',
  apple_status   INT NULL COMMENT 'Last status Apple answered; NULL while Apple has not answered',
  apple_response MEDIUMTEXT NULL COMMENT 'Apple''s last answer, as received',
  received_at    DATETIME(3) NOT NULL COMMENT 'UTC, recorded before Apple is called',
  verified_at    DATETIME(3) NULL COMMENT 'UTC, when Apple''s answer was recorded; NULL: never completed',
  PRIMARY KEY (receipt_id),
  KEY receipts_sha256 (sha256),
  KEY receipts_unverified (verified_at, received_at)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin
  COMMENT='Audit trail: one row per verify request that passed input checks';

CREATE TABLE transactions (
  transaction_id          VARCHAR(64) CHARACTER SET ascii NOT NULL COMMENT 'Apple transaction_id; the primary key makes delivery happen once',
  original_transaction_id VARCHAR(64) CHARACTER SET ascii NOT NULL COMMENT 'Apple original_transaction_id',
  order_id                CHAR(36) CHARACTER SET ascii NULL COMMENT 'Order it was delivered to; NULL when never delivered',
  user_id                 VARCHAR(64) NOT NULL COMMENT 'User it was delivered (or refused) to',
  product_id              VARCHAR(128) NOT NULL COMMENT 'Apple product_id',
  quantity                INT NOT NULL COMMENT 'Apple quantity',
  environment             VARCHAR(16) CHARACTER SET ascii NOT NULL COMMENT 'Production or Sandbox: leave Sandbox out of revenue',
  purchase_date           DATETIME(3) NULL COMMENT 'UTC, Apple purchase_date_ms',
  cancellation_date       DATETIME(3) NULL COMMENT 'UTC, Apple cancellation_date_ms: refunded',
  state                   VARCHAR(20) CHARACTER SET ascii NOT NULL COMMENT 'delivered or refunded',
  receipt_id              BIGINT UNSIGNED NOT NULL COMMENT 'receipts.receipt_id of the request that first recorded it',
  created_at              DATETIME(3) NOT NULL COMMENT 'UTC',
  delivered_at            DATETIME(3) NULL COMMENT 'UTC, when it was delivered; NULL if never',
  PRIMARY KEY (transaction_id),
  KEY transactions_order (order_id),
  KEY transactions_user (user_id, created_at),
  KEY transactions_original (original_transaction_id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin
  COMMENT='Every Apple transaction seen, delivered at most once';

CREATE TABLE settings (
  name   VARCHAR(64) CHARACTER SET ascii NOT NULL COMMENT 'review_version or sandbox_users',
  value  VARCHAR(4096) NOT NULL DEFAULT '' COMMENT 'review_version: the app version in App Review (empty: none); sandbox_users: comma-separated user ids',
  PRIMARY KEY (name)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin
  COMMENT='Operator switches; iap-fcgi reads changes within 5 seconds';

INSERT INTO settings (name, value) VALUES ('review_version', ''), ('sandbox_users', '');
