-- 022: google_notifications.effect names a quantity-based partial refund `partly_refunded` (the column holds
-- 16 characters); the comment of 018 said `partially_refunded`, which no row ever held. Only the comment
-- changes: metadata, no table copy.
ALTER TABLE google_notifications
  MODIFY COLUMN effect VARCHAR(16) CHARACTER SET ascii NOT NULL
    COMMENT 'delivered, unclaimed, pending, cancelled, refunded, partly_refunded, refund_requested, unchanged, stored (a kind without effect), ignored (a package not configured)';
