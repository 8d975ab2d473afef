-- 011: report views for DBAs. Read-only views over the tables; a view has no COMMENT in MariaDB, so each
-- is described here, and its columns by their names. Times are UTC; amounts are in the currency named.

-- report_daily_revenue: production sales by day of delivery (UTC), product and currency. `gross` is
-- what the orders of the transactions delivered that day cost; `refunded` what Apple gave back on them
-- since (a partial refund counts its revocation_percentage, in Apple's milliunits of the price); `net`
-- is the difference. A refund therefore lowers the day the goods were sold, not the day it happened
-- (report_daily_refunds has those). Sandbox and never-delivered transactions are left out.
CREATE OR REPLACE VIEW report_daily_revenue AS
SELECT DATE(t.delivered_at) AS day, t.product_id, o.currency,
       COUNT(*) AS deliveries,
       SUM(t.state = 'refunded') AS refunds,
       SUM(o.price) AS gross,
       SUM(CASE WHEN t.state = 'refunded'
                THEN ROUND(o.price * COALESCE(t.revocation_percentage, 100000) / 100000, 2) ELSE 0 END) AS refunded,
       SUM(o.price) - SUM(CASE WHEN t.state = 'refunded'
                THEN ROUND(o.price * COALESCE(t.revocation_percentage, 100000) / 100000, 2) ELSE 0 END) AS net
FROM transactions t JOIN orders o ON o.order_id = t.order_id
WHERE t.environment = 'Production' AND t.delivered_at IS NOT NULL
GROUP BY DATE(t.delivered_at), t.product_id, o.currency;

-- report_daily_refunds: refunds by the day Apple refunded (cancellation_date, UTC) and reason
-- (revocation_reason: 0 other, 1 an issue in the app, NULL unknown: a receipt does not say), production
-- and sandbox apart. `delivered_refunds` were delivered before (goods to take back); the others were
-- refunded before anything was delivered. `refunded` sums the orders' prices of the delivered ones.
CREATE OR REPLACE VIEW report_daily_refunds AS
SELECT DATE(t.cancellation_date) AS day, t.environment, t.revocation_reason,
       COUNT(*) AS refunds,
       SUM(t.delivered_at IS NOT NULL) AS delivered_refunds,
       COALESCE(SUM(ROUND(o.price * COALESCE(t.revocation_percentage, 100000) / 100000, 2)), 0) AS refunded
FROM transactions t LEFT JOIN orders o ON o.order_id = t.order_id
WHERE t.state = 'refunded'
GROUP BY DATE(t.cancellation_date), t.environment, t.revocation_reason;

-- report_sandbox_deliveries: fraud watch. Sandbox purchases are free: who received goods for them, how
-- many, and when first and last. A user here who is not a tester (settings.sandbox_users) during an
-- App Review is the pattern of the sandbox-receipt fraud the review switch guards against.
CREATE OR REPLACE VIEW report_sandbox_deliveries AS
SELECT t.user_id, COUNT(*) AS deliveries, COUNT(DISTINCT t.product_id) AS products,
       MIN(t.delivered_at) AS first_delivered_at, MAX(t.delivered_at) AS last_delivered_at
FROM transactions t
WHERE t.environment = 'Sandbox' AND t.delivered_at IS NOT NULL
GROUP BY t.user_id;

-- report_retry_pending: receipts whose verification never completed and that `iapctl retry-pending`
-- still tries (not given up, not superseded), oldest first: a purchase may be waiting among them.
CREATE OR REPLACE VIEW report_retry_pending AS
SELECT r.receipt_id, r.user_id, r.order_id, r.client_ip, r.received_at, r.retry_attempts, r.retry_next_at,
       r.apple_status AS last_apple_status, TIMESTAMPDIFF(MINUTE, r.received_at, UTC_TIMESTAMP()) AS age_minutes
FROM receipts r
WHERE r.kind = 'receipt' AND r.verified_at IS NULL AND r.retry_final_state IS NULL
ORDER BY r.received_at;
