-- 002: a sample catalog, the products of the seed blog posts. Replace with your own
-- through `iapctl products add` or SQL.
INSERT INTO products (product_id, title, price, currency, active) VALUES
  ('zydj.product.pay_6', '60 gems', 6.00, 'CNY', 1),
  ('zydj.product.pay_30', '300 gems', 30.00, 'CNY', 1),
  ('zydj.product.pay_98', '980 gems', 98.00, 'CNY', 1),
  ('com.example.game.sub.monthly', 'Monthly pass', 18.00, 'CNY', 1);
