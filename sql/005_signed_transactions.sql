-- 005: StoreKit 2. POST /v1/transactions/verify records each posted JWS in the same audit table as
-- receipts (kind `jws`), and delivers its transaction into the same `transactions` table and id space,
-- keeping Apple's revocation details. Apple's signed payload stays in the audit row: the JWS itself in
-- receipt_data, its decoded payload (byte for byte as signed) in apple_response.
ALTER TABLE receipts
  ADD COLUMN kind VARCHAR(8) CHARACTER SET ascii NOT NULL DEFAULT 'receipt'
    COMMENT 'receipt: a verifyReceipt receipt (receipt_data is base64); jws: a StoreKit 2 signed transaction (receipt_data is the JWS, sha256 its SHA-256, apple_response its verified payload, verified_at when it was checked: a jws row is never left for retry-pending)' AFTER receipt_id,
  ADD COLUMN signed_data_error VARCHAR(32) CHARACTER SET ascii NULL
    COMMENT 'kind jws: why the JWS was refused (malformed, unsupportedAlgorithm, wrongCertificateCount, invalidPayload, untrustedChain, missingMarkerOID, expiredAtSignedDate, unsupportedLeafKey, badSignature); NULL: verified, or kind receipt' AFTER apple_response;

ALTER TABLE transactions
  ADD COLUMN revocation_reason INT NULL
    COMMENT 'StoreKit 2 revocationReason (0: other, 1: an app issue); NULL: not revoked, or seen only in a receipt' AFTER cancellation_date,
  ADD COLUMN revocation_type VARCHAR(32) CHARACTER SET ascii NULL
    COMMENT 'StoreKit 2 revocationType: REFUND_FULL, REFUND_PRORATED or FAMILY_REVOKE' AFTER revocation_reason,
  ADD COLUMN revocation_percentage INT NULL
    COMMENT 'StoreKit 2 revocationPercentage, in milliunits of the price (100000: all of it)' AFTER revocation_type;
