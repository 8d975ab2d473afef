-- 012: a receipt's bytes are stored once, not once per request. Apps retry the same receipt many times
-- exactly while Apple is slow or failing (retry_later, pending), and an iOS 7 receipt grows with every
-- purchase (tens of KB). A request that goes to Apple with bytes the same iap-fcgi stored in a row of the
-- last 12 hours leaves receipt_data NULL and names that row in bytes_in (same sha256). Several instances
-- (Galera) each store the bytes once. iapctl prune keeps the bytes of an old row that a row within
-- retention, or still open, points at; retry-pending reads the bytes through the pointer.
ALTER TABLE receipts
  MODIFY COLUMN receipt_data MEDIUMTEXT CHARACTER SET ascii NULL
    COMMENT 'The receipt as posted (base64, normalised), or the JWS; NULL when bytes_in or replay_of names the row that holds the same bytes, or once iapctl prune removed them (sha256 stays). View receipt_bytes follows the pointers',
  ADD COLUMN bytes_in BIGINT UNSIGNED NULL
    COMMENT 'receipts.receipt_id of an earlier row with the same sha256 that holds the bytes: receipt_data is NULL because that row holds them (NULL: this row stores its own, or is a replay, see replay_of)'
    AFTER receipt_data;

-- receipt_bytes: every row's receipt bytes (base64, or the JWS), wherever they are stored: in the row
-- itself, in the row its bytes_in names, or for a replay in the row it reused (replay_of) or the row that
-- one names. `stored_in` is the row that holds them; both are NULL once iapctl prune removed them.
CREATE OR REPLACE VIEW receipt_bytes AS
SELECT r.receipt_id, r.sha256,
       COALESCE(r.receipt_data, b.receipt_data, a.receipt_data, ab.receipt_data) AS receipt_data,
       CASE WHEN r.receipt_data IS NOT NULL THEN r.receipt_id
            WHEN b.receipt_data IS NOT NULL THEN b.receipt_id
            WHEN a.receipt_data IS NOT NULL THEN a.receipt_id
            WHEN ab.receipt_data IS NOT NULL THEN ab.receipt_id END AS stored_in
FROM receipts r
LEFT JOIN receipts b ON b.receipt_id = r.bytes_in
LEFT JOIN receipts a ON a.receipt_id = r.replay_of
LEFT JOIN receipts ab ON ab.receipt_id = a.bytes_in;
