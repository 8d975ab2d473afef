-- 016: the support console (IAP_CONSOLE_LISTEN): staff accounts, their sessions, failed logins (the
-- rate limit) and the audit of what staff did. Times are UTC DATETIME(3). Written by iap-fcgi's console
-- and `iapctl staff`.

CREATE TABLE staff (
  staff_id       BIGINT UNSIGNED NOT NULL AUTO_INCREMENT COMMENT 'Row id',
  name           VARCHAR(64) NOT NULL COMMENT 'Login name: 1 to 64 letters, digits, dot, dash, underscore',
  role           ENUM('viewer','support','admin') NOT NULL
    COMMENT 'viewer: reads; support: also delivers, redelivers, sends refund answers; admin: also settings and staff',
  password_hash  VARCHAR(255) CHARACTER SET ascii NOT NULL
    COMMENT 'scrypt$N$r$p$salt$hash (base64): OpenSSL EVP_PBE_scrypt, never the password',
  disabled_at    DATETIME(3) NULL COMMENT 'UTC: set by iapctl staff disable or an admin; a disabled account cannot log in',
  created_at     DATETIME(3) NOT NULL COMMENT 'UTC',
  password_changed_at DATETIME(3) NOT NULL COMMENT 'UTC: sessions made before it are no longer valid',
  PRIMARY KEY (staff_id),
  UNIQUE KEY staff_name (name)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin
  COMMENT='Support console accounts';

CREATE TABLE staff_sessions (
  token_sha256   CHAR(64) CHARACTER SET ascii NOT NULL COMMENT 'SHA-256 (hex) of the session cookie: the cookie itself is never stored',
  staff_id       BIGINT UNSIGNED NOT NULL COMMENT 'staff.staff_id',
  csrf_token     CHAR(64) CHARACTER SET ascii NOT NULL COMMENT 'The token every form of this session carries',
  client_ip      VARCHAR(45) CHARACTER SET ascii NULL COMMENT 'Address the login came from',
  created_at     DATETIME(3) NOT NULL COMMENT 'UTC: the session ends 12 hours after (IAP_CONSOLE_ABSOLUTE_TIMEOUT_S)',
  last_seen_at   DATETIME(3) NOT NULL COMMENT 'UTC: the session ends 30 minutes after it (IAP_CONSOLE_IDLE_TIMEOUT_S)',
  PRIMARY KEY (token_sha256),
  KEY staff_sessions_staff (staff_id),
  KEY staff_sessions_created (created_at)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin
  COMMENT='Support console sessions, server-side; a logout or an expiry deletes the row';

CREATE TABLE staff_login_failures (
  failure_id     BIGINT UNSIGNED NOT NULL AUTO_INCREMENT COMMENT 'Row id',
  name           VARCHAR(64) NOT NULL COMMENT 'The name tried (it may name no account)',
  client_ip      VARCHAR(45) CHARACTER SET ascii NOT NULL COMMENT 'Address the attempt came from',
  failed_at      DATETIME(3) NOT NULL COMMENT 'UTC',
  PRIMARY KEY (failure_id),
  KEY staff_login_failures_name (name, failed_at),
  KEY staff_login_failures_ip (client_ip, failed_at)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin
  COMMENT='Failed console logins of the last 15 minutes: too many per name or per address lock logins out';

CREATE TABLE staff_audit (
  audit_id       BIGINT UNSIGNED NOT NULL AUTO_INCREMENT COMMENT 'Row id',
  staff_name     VARCHAR(64) NOT NULL COMMENT 'Who (staff.name, or iapctl for the command line)',
  action         VARCHAR(32) CHARACTER SET ascii NOT NULL
    COMMENT 'deliver_lookup, redeliver_event, send_refund_answer, review_version, sandbox_users, staff_add, staff_role, staff_disable',
  user_id        VARCHAR(64) NULL COMMENT 'Which player, when the action concerns one',
  target         VARCHAR(255) NULL COMMENT 'What it acted on: an Apple order id, an event id, a request id, a setting, a staff name',
  client_ip      VARCHAR(45) CHARACTER SET ascii NULL COMMENT 'From where',
  result         VARCHAR(255) NOT NULL COMMENT 'What happened, as the console showed it',
  created_at     DATETIME(3) NOT NULL COMMENT 'UTC: when',
  PRIMARY KEY (audit_id),
  KEY staff_audit_user (user_id, audit_id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin
  COMMENT='Every action staff took in the support console';
