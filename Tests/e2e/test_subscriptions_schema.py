"""Migration 020 against the stack's MariaDB: the `entitlements` view answers "what may this player use now"
from the `subscriptions` rows and the clock alone (a chain past its end leaves it with no notification), and
`events` takes a `subscription_changed` row with the chain's status, expiry and auto-renewal."""
import uuid

import pytest

from support import new_user_id, wait_until


def chain(db, user_id, product_id, status, expires, grace=None):
    """A subscriptions row; `expires` and `grace` are SQL expressions of the time (UTC_TIMESTAMP(3) ± ...)."""
    original_id = str(uuid.uuid4().int % 10 ** 16)
    db.execute(
        "INSERT INTO subscriptions (original_transaction_id, user_id, product_id, environment, status, expires_at,"
        f" grace_period_expires_at, auto_renew, latest_transaction_id, latest_purchase_at, created_at, updated_at)"
        f" VALUES (%s, %s, %s, 'Production', %s, {expires}, {grace or 'NULL'}, TRUE, %s,"
        " UTC_TIMESTAMP(3) - INTERVAL 30 DAY, UTC_TIMESTAMP(3), UTC_TIMESTAMP(3))",
        original_id, user_id, product_id, status, original_id)
    return original_id


@pytest.fixture
def user(db):
    user_id = new_user_id()
    yield user_id
    db.execute("DELETE FROM subscriptions WHERE user_id = %s", user_id)


def entitled(db, user_id):
    return {row["product_id"]: row for row in db.query("SELECT * FROM entitlements WHERE user_id = %s", user_id)}


def test_entitlements_are_the_active_and_grace_period_chains_not_yet_past_their_end(db, user):
    chain(db, user, "active", "active", "UTC_TIMESTAMP(3) + INTERVAL 1 DAY")
    chain(db, user, "active-past-its-end", "active", "UTC_TIMESTAMP(3) - INTERVAL 1 SECOND")
    grace = chain(db, user, "in-grace", "grace_period", "UTC_TIMESTAMP(3) - INTERVAL 1 DAY",
                  "UTC_TIMESTAMP(3) + INTERVAL 15 DAY")
    chain(db, user, "grace-ended", "grace_period", "UTC_TIMESTAMP(3) - INTERVAL 16 DAY",
          "UTC_TIMESTAMP(3) - INTERVAL 1 SECOND")
    for status in ("billing_retry", "expired", "revoked"):
        chain(db, user, status, status, "UTC_TIMESTAMP(3) + INTERVAL 1 DAY")
    unclaimed = chain(db, None, "unclaimed", "active", "UTC_TIMESTAMP(3) + INTERVAL 1 DAY")
    try:
        rows = entitled(db, user)
        assert set(rows) == {"active", "in-grace"}
        assert rows["in-grace"]["status"] == "grace_period" and rows["in-grace"]["original_transaction_id"] == grace
        assert rows["in-grace"]["entitled_until"] == db.scalar(
            "SELECT grace_period_expires_at FROM subscriptions WHERE original_transaction_id = %s", grace)
        assert db.scalar("SELECT COUNT(*) FROM entitlements WHERE original_transaction_id = %s", unclaimed) == 0
    finally:
        db.execute("DELETE FROM subscriptions WHERE original_transaction_id = %s", unclaimed)


def test_a_chain_leaves_the_entitlements_when_its_end_passes_with_no_change(db, user):
    chain(db, user, "monthly", "active", "UTC_TIMESTAMP(3) + INTERVAL 1 SECOND")
    assert set(entitled(db, user)) == {"monthly"}
    wait_until(lambda: not entitled(db, user), 10, "the chain leaving the entitlements at its end", interval=0.1)
    assert db.scalar("SELECT status FROM subscriptions WHERE user_id = %s", user) == "active"


def test_events_take_a_subscription_changed_row_with_the_chains_new_state(db):
    connection = db.live_connection()
    connection.begin()
    try:
        with connection.cursor() as cursor:
            cursor.execute(
                "INSERT INTO events (type, transaction_id, original_transaction_id, order_id, user_id, product_id,"
                " quantity, environment, occurred_at, created_at, subscription_status, expires_at, auto_renew)"
                " VALUES ('subscription_changed', '2000000000000002', '2000000000000001', %s, %s, 'vip_monthly', 1,"
                " 'Production', UTC_TIMESTAMP(3), UTC_TIMESTAMP(3), 'grace_period', '2026-01-17 00:00:00.000', FALSE)",
                (str(uuid.uuid4()), new_user_id()))
            cursor.execute("SELECT type, store, subscription_status, expires_at, auto_renew FROM events"
                           " WHERE event_id = LAST_INSERT_ID()")
            row = cursor.fetchone()
    finally:
        connection.rollback()
    assert (row["type"], row["store"], row["subscription_status"], row["auto_renew"]) == (
        "subscription_changed", "app_store", "grace_period", 0)
    assert str(row["expires_at"]) == "2026-01-17 00:00:00"
