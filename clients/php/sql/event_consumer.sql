-- The table EventConsumer (clients/php) keeps in the database of `events`: the events it passed over.
-- Run it once, as an account that may CREATE (the game's own account needs only SELECT, INSERT,
-- UPDATE and DELETE on it; see README.md), for example:
--     mariadb iap < vendor/iap-fcgi/client/sql/event_consumer.sql
-- It is the library's, not the service's: iap-fcgi's migrations never touch it.
--
-- grant_failed: the game's grant threw. The event stays unconsumed; a pull tries it again from
--   retry_at, and until it is granted the same user's later events wait (other users' do not). The row
--   goes when the grant succeeds (in the transaction that claims the event).
-- unknown_type: the service wrote a type this version of the library does not know. The event was
--   consumed without a grant, so that it holds nothing back; the row stays as the record of what was
--   passed over (after upgrading the library: UPDATE events SET consumed_at = NULL for those to replay).
CREATE TABLE IF NOT EXISTS iap_event_failures (
  event_id        BIGINT UNSIGNED NOT NULL COMMENT 'events.event_id',
  user_id         VARCHAR(64) NOT NULL COMMENT 'events.user_id: while a grant_failed row is here, this user''s later events wait',
  type            VARCHAR(32) CHARACTER SET ascii NOT NULL COMMENT 'events.type as the service wrote it',
  kind            ENUM('grant_failed','unknown_type') NOT NULL
    COMMENT 'grant_failed: the grant threw, the event is tried again from retry_at; unknown_type: consumed without a grant',
  attempts        INT NOT NULL DEFAULT 1 COMMENT 'Grants tried that threw',
  first_failed_at DATETIME(3) NOT NULL COMMENT 'UTC',
  last_failed_at  DATETIME(3) NOT NULL COMMENT 'UTC',
  retry_at        DATETIME(3) NULL
    COMMENT 'UTC: a pull tries the grant again from then: 1 s after the first failure, doubling to 4096 s; NULL for unknown_type',
  last_error      VARCHAR(1000) NOT NULL COMMENT 'The exception: its class and message',
  PRIMARY KEY (event_id),
  KEY iap_event_failures_user (user_id, event_id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin
  COMMENT='EventConsumer (clients/php): events whose grant failed, and events of a type it does not know';
