-- 002: empty, kept so that the numbers of the migrations stay as they were applied. It once inserted
-- four sample products, which belong to the local run and the tests, not to a server's catalog:
-- scripts/stack adds them to its own database (seed_sample_catalog). A server migrated before keeps
-- the rows it has; deactivate them with `iapctl products` if they are not yours.
DO 0;
