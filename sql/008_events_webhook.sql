-- 008: the webhook's retry window restarts when an operator redelivers an event. Its 72 hours of retries
-- count from created_at, or from redelivered_at when `iapctl events redeliver` set it: an event
-- redelivered days after it was written is retried with backoff like a new one, not given up after its
-- first failed POST.
ALTER TABLE events
  ADD COLUMN redelivered_at DATETIME(3) NULL
    COMMENT 'UTC: when iapctl events redeliver last put it back to pending; its 72 hours of retries count from then'
    AFTER consumed_at;
