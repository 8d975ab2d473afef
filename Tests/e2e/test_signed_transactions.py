"""POST /v1/transactions/verify: StoreKit 2 signed transactions (docs/api.md), through
nginx, iap-fcgi and MariaDB, signed by Tests/Simulator/signed_data.py with the
stack's test PKI ($IAP_RUN/certs, the root iap-fcgi trusts through
IAP_APPLE_ROOT_CA_FILE).

Exactly-once is shared with receipts: one `transactions` table, one id space.
"""
import base64
import hashlib
import importlib
import json
import os
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from fastcgi_client import request_once
from test_transaction_id_verify import own_service  # noqa: F401 (a fixture)
from support import (PAY_6, PAY_30, UUID_PATTERN, answered_transactions, assert_error, assert_verify_answer,
                     new_transaction_id, new_user_id, placeholders)

ROUTE = "/v1/transactions/verify"
CERTS = Path(os.environ.get("IAP_RUN", "/tmp/iap")) / "certs"


@pytest.fixture(scope="module")
def signer():
    return importlib.import_module("signed_data")


def signed(signer, product=PAY_6, chain="good", **payload_fields):
    """A JWS of a fresh transaction (or of `transaction_id=`), and its payload."""
    payload = signer.transaction(product, **payload_fields)
    return signer.sign(payload, str(CERTS), chain=chain), payload


def post(api, jws, **fields):
    body = {"signed_transaction": jws, **fields}
    return api.post_json(ROUTE, {k: v for k, v in body.items() if v is not None})


def sha256(text):
    return hashlib.sha256(text.encode()).hexdigest()


def audit_rows(db, jws):
    return db.query(
        "SELECT receipt_id, kind, order_id, user_id, transaction_id, environment, apple_status, apple_response,"
        " signed_data_error, verified_at FROM receipts WHERE sha256 = %s ORDER BY receipt_id", sha256(jws))


def stored(db, transaction_id):
    return db.one("SELECT * FROM transactions WHERE transaction_id = %s", transaction_id)


def order(db, order_id):
    return db.one("SELECT * FROM orders WHERE order_id = %s", order_id)


def assert_orders_hold_one_transaction_each(db, *user_ids):
    """invariants.py's order rule, for these users: every delivered, refunded or
    receipt-made order holds exactly one transaction."""
    odd = db.query(
        "SELECT o.order_id, o.status, o.origin, COUNT(t.transaction_id) AS transactions"
        " FROM orders o LEFT JOIN transactions t ON t.order_id = o.order_id"
        f" WHERE o.user_id IN ({placeholders(user_ids)})"
        " GROUP BY o.order_id, o.status, o.origin"
        " HAVING (o.status <> 'created' OR o.origin = 'receipt') AND COUNT(t.transaction_id) <> 1", *user_ids)
    assert not odd, f"orders without exactly one transaction: {odd}"


def only_entry(body):
    assert body["apple_status"] is None, f"Apple was not called: apple_status must be null: {body}"
    assert len(body["transactions"]) == 1, f"one entry per signed transaction: {body}"
    return body["transactions"][0]


# --- delivery -------------------------------------------------------------------------------

def test_a_signed_transaction_is_delivered_once_and_then_already_delivered(api, db, signer):
    user = new_user_id()
    jws, payload = signed(signer)
    tid = payload["transactionId"]

    body = assert_verify_answer(post(api, jws, user_id=user), "delivered")
    entry = only_entry(body)
    assert body["environment"] == "Production"
    assert body["app"]["bundle_id"] == "com.example.game"
    assert entry["transaction_id"] == tid and entry["state"] == "delivered" and entry["product_id"] == PAY_6
    assert body["order_id"] == entry["order_id"]
    row = stored(db, tid)
    assert row["state"] == "delivered" and row["user_id"] == user and row["order_id"] == entry["order_id"]
    assert row["environment"] == "Production"
    made = order(db, entry["order_id"])
    assert (made["status"], made["origin"], made["user_id"]) == ("delivered", "receipt", user)
    [audit] = audit_rows(db, jws)
    assert audit["receipt_id"] == row["receipt_id"]
    assert (audit["kind"], audit["apple_status"], audit["signed_data_error"]) == ("jws", None, None)
    assert audit["transaction_id"] == tid and audit["verified_at"] is not None
    assert json.loads(audit["apple_response"]) == payload, "Apple's payload is kept as signed"

    again = assert_verify_answer(post(api, jws, user_id=user), "already_delivered")
    assert only_entry(again)["state"] == "already_delivered"
    assert only_entry(again)["order_id"] == entry["order_id"]
    assert db.scalar("SELECT COUNT(*) FROM orders WHERE user_id = %s", user) == 1
    assert len(audit_rows(db, jws)) == 2, "every verify request past the input checks leaves an audit row"
    assert_orders_hold_one_transaction_each(db, user)


def test_a_revoked_transaction_is_refunded_and_never_delivered(api, db, signer):
    user = new_user_id()
    jws, payload = signed(signer, revocation_ms=signer.time.time_ns() // 1_000_000)
    body = assert_verify_answer(post(api, jws, user_id=user), "not_paid")
    entry = only_entry(body)
    assert entry["state"] == "refunded" and entry["order_id"] is None and entry["cancellation_date"]
    row = stored(db, payload["transactionId"])
    assert row["state"] == "refunded" and row["order_id"] is None and row["delivered_at"] is None
    assert (row["revocation_reason"], row["revocation_type"], row["revocation_percentage"]) == (
        0, "REFUND_FULL", 100000)
    assert db.scalar("SELECT COUNT(*) FROM orders WHERE user_id = %s", user) == 0


def test_a_delivered_transaction_seen_revoked_later_is_marked_refunded(api, db, signer):
    user = new_user_id()
    tid = new_transaction_id()
    jws, _ = signed(signer, transaction_id=tid)
    delivered = only_entry(assert_verify_answer(post(api, jws, user_id=user), "delivered"))
    revoked, _ = signed(signer, transaction_id=tid, revocation_ms=signer.time.time_ns() // 1_000_000)
    entry = only_entry(assert_verify_answer(post(api, revoked, user_id=user), "not_paid"))
    assert entry["state"] == "refunded" and entry["order_id"] == delivered["order_id"]
    row = stored(db, tid)
    assert row["state"] == "refunded" and row["cancellation_date"] is not None
    assert (row["revocation_type"], row["revocation_percentage"]) == ("REFUND_FULL", 100000)
    assert order(db, delivered["order_id"])["status"] == "refunded"


# --- admission: bundle, environment, sandbox policy (the stack runs IAP_SANDBOX_POLICY=review) ---

@pytest.mark.parametrize("fields", [
    {"bundle_id": "com.example.other"},
    {"environment": "Xcode"},
    {"environment": "LocalTesting"},
    {"environment": "Sandbox"},
], ids=["other-bundle-id", "xcode", "local-testing", "sandbox-outside-review"])
def test_transactions_not_for_us_are_rejected_and_not_stored(api, db, signer, fields):
    user = new_user_id()
    jws, payload = signed(signer, **fields)
    body = assert_verify_answer(post(api, jws, user_id=user, app_version="1.3.0"), "rejected")
    assert only_entry(body)["state"] == "rejected"
    assert body["environment"] == fields.get("environment", "Production"), "the environment the JWS says"
    assert stored(db, payload["transactionId"]) is None
    assert db.scalar("SELECT COUNT(*) FROM orders WHERE user_id = %s", user) == 0
    [audit] = audit_rows(db, jws)
    assert audit["kind"] == "jws" and audit["signed_data_error"] is None


@pytest.mark.parametrize("environment", ["Xcode", "LocalTesting"])
def test_under_policy_always_a_test_environments_transaction_is_delivered_and_answered_as_signed(
        db, signer, environment, own_service):
    """An iap-fcgi of its own under IAP_SANDBOX_POLICY=always (the stack runs review)."""
    service = own_service(IAP_SANDBOX_POLICY="always")
    user = new_user_id()
    jws, payload = signed(signer, environment=environment)

    answer = request_once(service.socket_path, "POST", ROUTE,
                          body=json.dumps({"signed_transaction": jws, "user_id": user}).encode())

    assert answer.status == 200, answer
    body = answer.json()
    assert (body["status"], body["environment"]) == ("delivered", environment), body
    assert stored(db, payload["transactionId"])["environment"] == "Sandbox", "rows count it as sandbox"
    [audit] = audit_rows(db, jws)
    assert audit["environment"] == environment, "the audit row keeps the exact value"


def test_a_sandbox_transaction_of_the_version_in_review_is_delivered(api, db, signer, service_settings):
    service_settings.apply(review_version="1.3.0")
    user = new_user_id()
    jws, payload = signed(signer, environment="Sandbox")
    body = assert_verify_answer(post(api, jws, user_id=user, app_version="1.3.0"), "delivered")
    assert body["environment"] == "Sandbox"
    assert stored(db, payload["transactionId"])["environment"] == "Sandbox"


# --- appAccountToken: the order the app passed to StoreKit ---------------------------------

def test_the_app_account_token_binds_the_transaction_to_its_order(api, db, signer, create_order):
    user = new_user_id()
    made = create_order(user, PAY_30)
    jws, payload = signed(signer, PAY_30, app_account_token=made["order_id"])
    body = assert_verify_answer(post(api, jws), "delivered")
    entry = only_entry(body)
    assert entry["order_id"] == made["order_id"] == body["order_id"]
    assert stored(db, payload["transactionId"])["user_id"] == user
    assert order(db, made["order_id"])["status"] == "delivered"
    assert_orders_hold_one_transaction_each(db, user)


def test_a_request_that_disagrees_with_the_app_account_token_changes_nothing(api, db, signer, create_order):
    user, other_user = new_user_id(), new_user_id()
    made = create_order(user, PAY_6)
    other_order = create_order(user, PAY_6)
    jws, payload = signed(signer, app_account_token=made["order_id"])
    for fields in ({"user_id": other_user}, {"order_id": other_order["order_id"]},
                   {"order_id": other_order["order_id"], "user_id": user}):
        assert_error(post(api, jws, **fields), 409, "order_user_mismatch")
    assert stored(db, payload["transactionId"]) is None
    assert order(db, made["order_id"])["status"] == "created"
    assert order(db, other_order["order_id"])["status"] == "created"
    assert db.scalar("SELECT COUNT(*) FROM orders WHERE user_id = %s", other_user) == 0
    rows = audit_rows(db, jws)
    assert [(r["user_id"], r["order_id"]) for r in rows] == [
        (other_user, None), ("", other_order["order_id"]), (user, other_order["order_id"])], (
        "each 409 past the input checks leaves its audit row, as the request named it")
    assert all(r["kind"] == "jws" and r["transaction_id"] == payload["transactionId"] and r["verified_at"]
               for r in rows), rows

    entry = only_entry(assert_verify_answer(post(api, jws, user_id=user, order_id=made["order_id"]), "delivered"))
    assert entry["order_id"] == made["order_id"]


def test_without_a_token_the_request_order_is_paid(api, db, signer, create_order):
    user = new_user_id()
    made = create_order(user, PAY_6)
    jws, _ = signed(signer)
    entry = only_entry(assert_verify_answer(post(api, jws, order_id=made["order_id"]), "delivered"))
    assert entry["order_id"] == made["order_id"]
    assert order(db, made["order_id"])["status"] == "delivered"


# --- bad signed data: 400 invalid_signed_data, only the audit row --------------------------

def _b64url(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def _parts(jws):
    header, payload, signature = jws.split(".")
    return header, payload, signature


def _with_header(signer, payload, change):
    """A JWS whose header `change(header)` altered, signed by the good leaf."""
    certificates, leaf_key = signer._load_chain(str(CERTS), "good")
    header = {"alg": "ES256", "x5c": [base64.b64encode(c.public_bytes(signer.serialization.Encoding.DER)).decode()
                                      for c in certificates]}
    change(header)
    signing_input = (_b64url(json.dumps(header).encode()) + "." + _b64url(json.dumps(payload).encode()))
    der = leaf_key.sign(signing_input.encode(), signer.ec.ECDSA(signer.hashes.SHA256()))
    r, s = signer.decode_dss_signature(der)
    return signing_input + "." + _b64url(r.to_bytes(32, "big") + s.to_bytes(32, "big"))


def _payload_changed(signer, payload):
    jws = signer.sign(payload, str(CERTS))
    header, _, signature = _parts(jws)
    return ".".join([header, _b64url(json.dumps(dict(payload, productId=PAY_30)).encode()), signature])


BAD_SIGNED_DATA = {
    "two-parts": lambda signer, payload: ".".join(_parts(signer.sign(payload, str(CERTS)))[:2]),
    "bad-base64url": lambda signer, payload: "!!!." + _parts(signer.sign(payload, str(CERTS)))[1] + ".%%%",
    "alg-none": lambda signer, payload: _with_header(signer, payload, lambda h: h.update(alg="none")),
    "alg-hs256": lambda signer, payload: _with_header(signer, payload, lambda h: h.update(alg="HS256")),
    "two-certificates": lambda signer, payload: _with_header(signer, payload, lambda h: h["x5c"].pop()),
    "untrusted-root": lambda signer, payload: signer.sign(payload, str(CERTS), chain="untrusted"),
    "intermediate-without-oid": lambda signer, payload: signer.sign(
        payload, str(CERTS), chain="intermediate-without-oid"),
    "leaf-without-oid": lambda signer, payload: signer.sign(payload, str(CERTS), chain="leaf-without-oid"),
    "expired-at-signed-date": lambda signer, payload: signer.sign(payload, str(CERTS), chain="expired-leaf"),
    "signed-by-another-key": lambda signer, payload: signer.sign(
        payload, str(CERTS), signing_key=signer.ec.generate_private_key(signer.ec.SECP256R1())),
    "payload-changed-after-signing": _payload_changed,
}

# The reason SignedDataVerifier gives for each, kept in receipts.signed_data_error.
REFUSAL_REASONS = {
    "two-parts": "malformed",
    "bad-base64url": "malformed",
    "alg-none": "unsupportedAlgorithm",
    "alg-hs256": "unsupportedAlgorithm",
    "two-certificates": "wrongCertificateCount",
    "untrusted-root": "untrustedChain",
    "intermediate-without-oid": "missingMarkerOID",
    "leaf-without-oid": "missingMarkerOID",
    "expired-at-signed-date": "expiredAtSignedDate",
    "signed-by-another-key": "badSignature",
    "payload-changed-after-signing": "badSignature",
}


@pytest.mark.parametrize("how", sorted(BAD_SIGNED_DATA))
def test_bad_signed_data_is_refused_with_only_its_audit_row(api, db, signer, how):
    user = new_user_id()
    payload = signer.transaction(PAY_6)
    jws = BAD_SIGNED_DATA[how](signer, payload)
    assert_error(post(api, jws, user_id=user), 400, "invalid_signed_data")
    assert stored(db, payload["transactionId"]) is None
    assert db.scalar("SELECT COUNT(*) FROM orders WHERE user_id = %s", user) == 0
    [audit] = audit_rows(db, jws)
    assert audit["kind"] == "jws" and audit["user_id"] == user
    assert audit["signed_data_error"] == REFUSAL_REASONS[how], f"{how}: the refusal's reason is kept: {audit}"
    assert audit["apple_status"] is None and audit["apple_response"] is None and audit["transaction_id"] is None
    assert audit["verified_at"] is not None, "a jws row is never left for retry-pending"


# --- input checks (no audit row) -------------------------------------------------------------

def test_input_checks(api, db):
    assert_error(api.post_json(ROUTE, {"user_id": new_user_id()}), 400, "missing_field")
    assert_error(api.post_json(ROUTE, {"signed_transaction": 42, "user_id": "u"}), 400, "invalid_field")
    assert_error(api.post_json(ROUTE, {"signed_transaction": "a" * (16 * 1024 + 1), "user_id": "u"}),
                 400, "invalid_field")
    assert_error(api.post_json(ROUTE, {"signed_transaction": "a.b.c", "user_id": "\u0007"}), 400, "invalid_field")
    assert_error(api.post_raw(ROUTE, b"[1, 2", headers={"Content-Type": "application/json"}), 400, "invalid_json")
    assert_error(api.get(ROUTE), 405, "method_not_allowed")


def test_a_transaction_id_alone_needs_a_user_or_an_order(api):
    # The transaction_id verify itself (and its 400 without the Server API): test_transaction_id_verify.py.
    assert_error(api.post_json(ROUTE, {"transaction_id": new_transaction_id()}), 400, "missing_field")


# --- exactly once -------------------------------------------------------------------------------

def test_fifty_concurrent_posts_of_one_jws_deliver_it_once(api, db, signer):
    user = new_user_id()
    jws, payload = signed(signer)
    with ThreadPoolExecutor(max_workers=50) as pool:
        answers = list(pool.map(lambda _: post(api, jws, user_id=user), range(50)))
    statuses = [response.json().get("status") for response in answers]
    assert statuses.count("delivered") == 1, statuses
    assert statuses.count("already_delivered") == 49, statuses
    assert db.scalar("SELECT COUNT(*) FROM transactions WHERE transaction_id = %s", payload["transactionId"]) == 1
    assert db.scalar("SELECT COUNT(*) FROM orders WHERE user_id = %s", user) == 1
    assert len(audit_rows(db, jws)) == 50
    assert_orders_hold_one_transaction_each(db, user)


def test_a_receipt_then_a_jws_of_the_same_transaction_deliver_it_once(api, db, signer, receipts):
    user = new_user_id()
    tid = new_transaction_id()
    receipt = receipts.app_receipt([receipts.purchase(PAY_6, transaction_id=tid)])
    by_receipt = answered_transactions(assert_verify_answer(api.verify(receipt, user_id=user), "delivered"))[tid]
    jws, _ = signed(signer, transaction_id=tid)
    entry = only_entry(assert_verify_answer(post(api, jws, user_id=user), "already_delivered"))
    assert entry["order_id"] == by_receipt["order_id"]
    assert db.scalar("SELECT COUNT(*) FROM orders WHERE user_id = %s", user) == 1
    assert_orders_hold_one_transaction_each(db, user)


def test_a_jws_then_a_receipt_of_the_same_transaction_deliver_it_once(api, db, signer, receipts):
    user = new_user_id()
    tid = new_transaction_id()
    jws, _ = signed(signer, transaction_id=tid)
    delivered = only_entry(assert_verify_answer(post(api, jws, user_id=user), "delivered"))
    receipt = receipts.app_receipt([receipts.purchase(PAY_6, transaction_id=tid)])
    entry = answered_transactions(assert_verify_answer(api.verify(receipt, user_id=user), "already_delivered"))[tid]
    assert entry["order_id"] == delivered["order_id"]
    assert stored(db, tid)["receipt_id"] == audit_rows(db, jws)[0]["receipt_id"]
    assert_orders_hold_one_transaction_each(db, user)


# --- the database down --------------------------------------------------------------------------

@pytest.mark.outage("mariadb")
def test_database_down_is_retry_later(api, signer, database_down):
    jws, _ = signed(signer)
    body = assert_verify_answer(post(api, jws, user_id=new_user_id()), "retry_later")
    assert body["apple_status"] is None and body["transactions"] == []
