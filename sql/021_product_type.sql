-- 021: what kind of product each catalog row is. Google Play wants every one-time purchase consumed
-- (a consumable, bought again and again: consuming also acknowledges it) or acknowledged (bought once
-- and kept) by the server within 3 days; the delivery writes google_finishes.action from this. Every
-- existing product stays consumable, as the service treated all of them before. Online: a column with a
-- constant default is added to the table's metadata only (no copy, no lock held on the rows).
ALTER TABLE products
  ADD COLUMN type ENUM('consumable','non_consumable','subscription') NOT NULL DEFAULT 'consumable'
    COMMENT 'consumable (the default: a Google purchase is consumed), non_consumable or subscription (a Google purchase is acknowledged)'
    AFTER currency,
  ALGORITHM=INSTANT;
