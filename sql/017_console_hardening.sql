-- 017: the support console's hardening. Failed logins lock one name from one address (5 in 15
-- minutes) and only slow a name across addresses, or an address across names (a delay that doubles
-- with each failure, at most a minute); `iapctl staff unlock NAME` forgets a name's failures. Every
-- change staff make (in the console or with iapctl staff) and every login is written to staff_audit in
-- the database transaction of the change. Password hashes are made at N = 2^17 (the older ones verify
-- with the parameters they carry, and are made again at the next login).

ALTER TABLE staff
  MODIFY password_hash VARCHAR(255) CHARACTER SET ascii NOT NULL
    COMMENT 'scrypt$log2N$r$p$salt$hash (salt and hash in hex): OpenSSL EVP_PBE_scrypt, never the password';

ALTER TABLE staff_login_failures
  ADD KEY staff_login_failures_name_ip (name, client_ip, failed_at),
  COMMENT = 'Failed console logins of the last 15 minutes: 5 of a name from one address lock that name from that address; more of a name, or of an address, slow logins';

ALTER TABLE staff_audit
  MODIFY action VARCHAR(32) CHARACTER SET ascii NOT NULL
    COMMENT 'deliver_lookup, redeliver_event, send_refund_answer, review_version, sandbox_users, staff_add, staff_disable, staff_passwd, staff_unlock, login, login_failed, logout',
  MODIFY user_id VARCHAR(64) NULL
    COMMENT 'The player whose rows the action changed or concerned, as the database holds it (never a form field); NULL: none',
  COMMENT = 'Every action staff took in the support console or with iapctl staff, and every login, written in the transaction of the change';
