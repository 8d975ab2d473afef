"""The refund-request sender (docs/events.md "Refund requests"): the
stack's iap-fcgi, which has the App Store Server API and no webhook, answers each pending row of
consumption_requests with one PUT /inApps/v2/transactions/consumption/{id} to the simulator.

The rows are written here as the CONSUMPTION_REQUEST hook writes them (sql/014's columns), with the
product's policy, the consent and the consumption around them; a delivered transaction is delivered
for real (a receipt verified through nginx), so that its order and events are the service's own. What
Apple received is read from the simulator (GET /consumption/received), what was recorded from the row.
"""
import json
import os
import re
import uuid

import pytest
import requests

from support import assert_verify_answer, new_transaction_id, new_user_id, wait_until

FINAL = ("sent", "no_consent", "expired", "failed")


# --- the world around a request ----------------------------------------------------------------

def add_product(db, policy="none", sample_content_provided=False):
    product_id = f"com.example.game.refund.{uuid.uuid4().hex[:12]}"
    db.execute("INSERT INTO products (product_id, title, price, currency, active, refund_preference, "
               "sample_content_provided) VALUES (%s, 'refund test', 6.00, 'CNY', 1, %s, %s)",
               product_id, policy, int(sample_content_provided))
    return product_id


def consent(db, user_id, withdrawn=False):
    db.execute("INSERT INTO consumption_consent (user_id, consented_at, withdrawn_at) VALUES "
               "(%s, UTC_TIMESTAMP(3) - INTERVAL 1 DAY, IF(%s, UTC_TIMESTAMP(3), NULL))", user_id, int(withdrawn))


def record_consumption(db, transaction_id, milli):
    db.execute("INSERT INTO consumption (transaction_id, consumed_milli, updated_at) VALUES "
               "(%s, %s, UTC_TIMESTAMP(3))", transaction_id, milli)


def add_request(db, transaction_id, user_id, product_id, environment="Production", product_type="Consumable",
                game_consumed_milli=None, deadline_seconds=12 * 3600, leased_seconds=None):
    """A pending row as the CONSUMPTION_REQUEST hook writes it, or with `leased_seconds` as another
    instance's sender holds it (its lease ending that much later); returns its request_id."""
    db.execute("INSERT INTO consumption_requests (transaction_id, original_transaction_id, notification_uuid, "
               "environment, user_id, product_id, product_type, reason, requested_at, deadline_at, "
               "game_consumed_milli, created_at, lease_expires_at) VALUES (%s, %s, %s, %s, %s, %s, %s, "
               "'UNINTENDED_PURCHASE', UTC_TIMESTAMP(3), UTC_TIMESTAMP(3) + INTERVAL %s SECOND, %s, UTC_TIMESTAMP(3), "
               "IF(%s IS NULL, NULL, UTC_TIMESTAMP(3) + INTERVAL %s SECOND))",
               transaction_id, transaction_id, str(uuid.uuid4()), environment, user_id, product_id, product_type,
               deadline_seconds, game_consumed_milli, leased_seconds, leased_seconds)
    return db.scalar("SELECT request_id FROM consumption_requests WHERE transaction_id = %s", transaction_id)


@pytest.fixture
def deliver(api, receipts):
    """Delivers a new purchase of `product_id` to `user_id` by a receipt verify (production)."""
    def run(transaction_id, user_id, product_id):
        purchase = receipts.purchase(product_id, transaction_id=transaction_id)
        assert_verify_answer(api.verify(receipts.app_receipt([purchase]), user_id=user_id), "delivered")
    return run


def refund_request(db, policy="none", deliver=None, consented=True, consumed=None, game_consumed=None,
                   environment="Production", product_type="Consumable", sample_content_provided=False,
                   deadline_seconds=12 * 3600, withdrawn=False, transaction_id=None, leased_seconds=None):
    """A product with `policy`, a purchase of it (delivered by `deliver`, or never delivered here), the
    user's consent and consumption, and the request (leased by another instance with `leased_seconds`);
    returns the transaction id."""
    transaction_id, user_id = transaction_id or new_transaction_id(), new_user_id()
    product_id = add_product(db, policy, sample_content_provided)
    if deliver is not None:
        deliver(transaction_id, user_id, product_id)
    if consented:
        consent(db, user_id, withdrawn)
    if consumed is not None:
        record_consumption(db, transaction_id, consumed)
    add_request(db, transaction_id, user_id, product_id, environment, product_type, game_consumed,
                deadline_seconds, leased_seconds)
    return transaction_id


# --- what happened -------------------------------------------------------------------------------

def row(db, transaction_id):
    return db.one("SELECT * FROM consumption_requests WHERE transaction_id = %s", transaction_id)


def settled(db, transaction_id, timeout=60):
    return wait_until(lambda: (r := row(db, transaction_id))["status"] in FINAL and r, timeout,
                      f"the refund request of {transaction_id} answered")


def control_url(simulator):
    return simulator.base_url


def puts(simulator, transaction_id):
    received = requests.get(control_url(simulator) + "/consumption/received", timeout=10).json()
    return [entry for entry in received if entry["transaction_id"] == transaction_id]


def apple(simulator, **settings):
    answer = requests.post(control_url(simulator) + "/consumption/settings", json=settings, timeout=10)
    assert answer.status_code == 200, answer.text


def body(consumed=None, preference=None, delivered=True, sample=False):
    expected = {"customerConsented": True, "deliveryStatus": "DELIVERED" if delivered else "UNDELIVERED_OTHER",
                "sampleContentProvided": sample}
    if consumed is not None:
        expected["consumptionPercentage"] = consumed
    if preference is not None:
        expected["refundPreference"] = preference
    return expected


# --- each policy: exactly one PUT with the right body ----------------------------------------------

@pytest.mark.parametrize("policy, delivered, consumed, expected", [
    ("none", True, 40000, body(40000)),
    ("decline", True, 40000, body(40000, "DECLINE")),
    ("grant_full", True, None, body(None, "GRANT_FULL")),
    ("grant_prorated", True, 40000, body(40000, "GRANT_PRORATED")),
    ("grant_prorated", True, 0, body(0)),
    ("auto", True, 0, body(0, "GRANT_FULL")),
    ("auto", True, 40000, body(40000, "GRANT_PRORATED")),
    ("auto", True, 100000, body(100000, "DECLINE")),
    ("auto", True, None, body(None)),
    ("auto", False, 40000, body(0, "GRANT_FULL", delivered=False)),
    ("none", False, None, body(0, delivered=False)),
])
def test_each_policy_sends_one_put_with_its_body(db, simulator, deliver, policy, delivered, consumed, expected):
    transaction_id = refund_request(db, policy, deliver=deliver if delivered else None, consumed=consumed)
    answered = settled(db, transaction_id)
    [put] = puts(simulator, transaction_id)
    assert (put["environment"], put["body"], put["status"]) == ("production", expected, 202)
    assert answered["status"] == "sent" and answered["attempts"] == 1 and answered["sent_at"] is not None
    assert json.loads(answered["sent_body"]) == expected
    assert answered["refund_preference_sent"] == expected.get("refundPreference")


def test_a_sandbox_request_goes_to_the_sandbox_with_sample_content(db, simulator):
    transaction_id = refund_request(db, "decline", environment="Sandbox", sample_content_provided=True, consumed=5)
    assert settled(db, transaction_id)["status"] == "sent"
    [put] = puts(simulator, transaction_id)
    assert (put["environment"], put["body"]) == ("sandbox", body(0, "DECLINE", delivered=False, sample=True))


def test_an_auto_renewable_subscription_sends_no_consumption(db, simulator, deliver):
    transaction_id = refund_request(db, "auto", deliver=deliver, consumed=40000,
                                    product_type="Auto-Renewable Subscription")
    assert settled(db, transaction_id)["status"] == "sent"
    [put] = puts(simulator, transaction_id)
    assert put["body"] == body(None)


def test_the_games_webhook_answer_wins_over_the_consumption_table(db, simulator, deliver):
    transaction_id = refund_request(db, "auto", deliver=deliver, consumed=0, game_consumed=100000)
    assert settled(db, transaction_id)["refund_preference_sent"] == "DECLINE"
    [put] = puts(simulator, transaction_id)
    assert put["body"] == body(100000, "DECLINE")


# --- consent ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("consented, withdrawn", [(False, False), (True, True)])
def test_without_consent_in_force_nothing_is_sent(db, simulator, deliver, consented, withdrawn):
    transaction_id = refund_request(db, "decline", deliver=deliver, consented=consented, withdrawn=withdrawn,
                                    consumed=100000)
    answered = settled(db, transaction_id)
    assert (answered["status"], answered["attempts"], answered["sent_body"]) == ("no_consent", 0, None)
    assert puts(simulator, transaction_id) == []


# --- Apple failing, rate-limiting, refusing --------------------------------------------------------

def test_apple_500_then_202_is_sent_once_after_the_backoff(db, simulator):
    apple(simulator, fault=500, fail_next=1)
    transaction_id = refund_request(db, "grant_full")
    answered = settled(db, transaction_id)
    assert (answered["status"], answered["attempts"]) == ("sent", 2)
    assert answered["last_error"] == "HTTP 500 errorCode 5000000"
    first, second = puts(simulator, transaction_id)
    assert (first["status"], second["status"]) == (500, 202)
    assert second["at_ms"] - first["at_ms"] >= 5000 - 50   # RefundRequestRetryPolicy.firstDelayMs


def test_a_429_is_put_again_only_after_its_retry_after(db, simulator):
    apple(simulator, fault=429, fail_next=1, retry_after_ms=8000)   # longer than the 5 s backoff
    transaction_id = refund_request(db, "decline", consumed=100000)
    answered = settled(db, transaction_id)
    assert (answered["status"], answered["attempts"]) == ("sent", 2)
    first, second = puts(simulator, transaction_id)
    assert (first["status"], second["status"]) == (429, 202)
    assert second["at_ms"] - first["at_ms"] >= 8000 - 50


def test_a_request_apple_refuses_fails_with_its_error_code(db, simulator, deliver):
    transaction_id = new_transaction_id()
    # Apple knows it as an auto-renewable subscription; the row says consumable, so a percentage is sent.
    apple(simulator, auto_renewable=[transaction_id])
    refund_request(db, "auto", deliver=deliver, consumed=40000, transaction_id=transaction_id)
    answered = settled(db, transaction_id)
    assert (answered["status"], answered["attempts"]) == ("failed", 1)
    assert answered["last_error"] == "HTTP 400 errorCode 4000182"
    assert [put["status"] for put in puts(simulator, transaction_id)] == [400]


# --- the lease ------------------------------------------------------------------------------------

def test_a_request_another_instance_holds_is_sent_only_once_its_lease_ends(db, simulator):
    """The held request is older than the free one and as due: a sender that leased it regardless would
    have taken it first. So once the free one is answered, the held one was passed over, not just late."""
    held = refund_request(db, "grant_full", leased_seconds=3600)
    lease = row(db, held)["lease_expires_at"]
    free = refund_request(db, "grant_full")
    assert settled(db, free)["status"] == "sent"
    untouched = row(db, held)
    assert (untouched["status"], untouched["attempts"], untouched["lease_expires_at"]) == ("pending", 0, lease)
    assert puts(simulator, held) == []

    db.execute("UPDATE consumption_requests SET lease_expires_at = UTC_TIMESTAMP(3) - INTERVAL 1 SECOND"
               " WHERE transaction_id = %s", held)   # the other instance died: its lease ends
    answered = settled(db, held)
    assert (answered["status"], answered["attempts"], answered["lease_expires_at"]) == ("sent", 1, None)
    assert [put["status"] for put in puts(simulator, held)] == [202]


# --- the deadline ----------------------------------------------------------------------------------

def scraped_expired():
    text = requests.get(f"http://{os.environ['IAP_METRICS_LISTEN']}/metrics", timeout=10).text
    match = re.search(r'^iap_refund_requests\{status="expired"\} (\S+)$', text, re.MULTILINE)
    return float(match.group(1)) if match else None


def test_a_request_past_its_deadline_expires_unsent_and_the_metric_counts_it(db, simulator):
    before = db.scalar("SELECT COUNT(*) FROM consumption_requests WHERE status = 'expired'")
    transaction_id = refund_request(db, "decline", deadline_seconds=-1)
    answered = settled(db, transaction_id)
    assert (answered["status"], answered["attempts"], answered["last_error"]) == (
        "expired", 0, "deadline passed before a PUT")
    assert puts(simulator, transaction_id) == []
    # The alert's input (IAPRefundRequestExpired): the gauge, read from the table every 15 s.
    wait_until(lambda: (scraped_expired() or 0) >= before + 1, 60, "iap_refund_requests{status=\"expired\"} counting it")


def test_a_retry_that_would_come_after_the_deadline_expires(db, simulator):
    apple(simulator, fault=429, fail_next=0, retry_after_ms=600_000)   # Retry-After 10 min, the deadline in 2
    transaction_id = refund_request(db, "decline", deadline_seconds=120)
    answered = settled(db, transaction_id)
    assert (answered["status"], answered["attempts"], answered["last_error"]) == (
        "expired", 1, "HTTP 429 errorCode 4290000")
    assert [put["status"] for put in puts(simulator, transaction_id)] == [429]
