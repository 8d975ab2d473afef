"""POST /v1/transactions/verify with `{"transaction_id", "user_id"}` and no JWS (docs/api.md): the service
records the audit row, fetches the signed transaction from the App Store Server API (the simulator's,
production first, the sandbox on 4040010 unless the policy is `never`) and goes on as if the JWS had been
posted, but an id proves nothing: only a transaction whose appAccountToken names the user's order is
delivered (else 403 proof_required). Look-ups are bounded: an unknown id is `pending` from memory for 60 s,
a user with no open order takes none (test_lookup_quota.py), and IAP_APPSTORE_LOOKUPS_PER_MINUTE caps them.
And `iapctl lookup ORDER --user U [--deliver]`, which delivers an Apple order's transactions through the
same code.

The stack configures the Server API (IAP_APPSTORE_*, scripts/stack) and trusts the simulator's signing
root (IAP_APPLE_ROOT_CA_FILE); the simulator counts every Server API call it answers.
"""
import base64
import hashlib
import importlib
import json
import os
import signal
import time
from concurrent.futures import ThreadPoolExecutor

import pytest

from fastcgi_client import request_once, start_service, start_up_refusal, stop_service, wait_until_answering
from notification_support import events_of, purchase, send
from support import (PAY_6, PAY_30, assert_error, assert_verify_answer, new_transaction_id, new_user_id,
                     wait_until)
from test_server_api import (SIMULATOR_SIGNING_ROOT, APPSTORE_VARIABLES, certs_dir, register_order,
                             register_transaction, run_iapctl, server_api_requests)

ROUTE = "/v1/transactions/verify"
BUDGET_S = int(os.environ.get("IAP_APPLE_TIMEOUT_MS", "2000")) / 1000


def verify_by_id(api, transaction_id, **fields):
    body = {"transaction_id": transaction_id, **fields}
    return api.post_json(ROUTE, {k: v for k, v in body.items() if v is not None})


def register_for(simulator, create_order, user, product_id=PAY_6, **fields):
    """A transaction Apple knows, bound (appAccountToken) to a new order of `user`: the proof a bare id
    needs. Returns (registered, the order)."""
    made = create_order(user, product_id)
    return register_transaction(simulator, product_id=product_id, app_account_token=made["order_id"], **fields), made


def calls(simulator):
    """(environment, HTTP status) of each Server API call the simulator answered, in order."""
    return [(c["environment"], c["status"]) for c in server_api_requests(simulator)]


def audit_rows(db, transaction_id):
    return db.query(
        "SELECT receipt_id, kind, sha256, receipt_data, order_id, user_id, transaction_id, environment, apple_status,"
        " apple_response, signed_data_error, client_ip, received_at, verified_at"
        " FROM receipts WHERE transaction_id = %s ORDER BY receipt_id", transaction_id)


def stored(db, transaction_id):
    return db.one("SELECT * FROM transactions WHERE transaction_id = %s", transaction_id)


def jws_payload(jws):
    payload = jws.split(".")[1]
    return json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))


def only_entry(body):
    assert body["apple_status"] is None, f"apple_status is null on this route: {body}"
    assert len(body["transactions"]) == 1, body
    return body["transactions"][0]


def assert_row_holds_the_fetched_jws(row, jws, user_id):
    """The audit row of a fetched transaction holds the JWS Apple returned as a posted one's row does."""
    assert row["kind"] == "jws" and row["user_id"] == user_id, row
    assert row["receipt_data"] == jws, "the JWS Apple returned is the row's receipt_data"
    assert row["sha256"] == hashlib.sha256(jws.encode()).hexdigest()
    assert json.loads(row["apple_response"]) == jws_payload(jws), "Apple's payload is kept as signed"
    assert row["signed_data_error"] is None and row["apple_status"] is None, row
    assert row["verified_at"] is not None and row["verified_at"] >= row["received_at"], row


# --- delivery ---------------------------------------------------------------------------------

def test_a_transaction_id_whose_token_names_the_users_order_is_fetched_delivered_once_and_recorded(
        api, db, simulator, create_order):
    user = new_user_id()
    registered, made = register_for(simulator, create_order, user)
    tid, jws = registered["transaction_id"], registered["signed_transactions"]["production"]

    body = assert_verify_answer(verify_by_id(api, tid, user_id=user), "delivered")

    entry = only_entry(body)
    assert body["environment"] == "Production" and body["app"]["bundle_id"] == "com.example.game"
    assert (entry["transaction_id"], entry["state"], entry["product_id"]) == (tid, "delivered", PAY_6)
    assert entry["order_id"] == made["order_id"], "the order the token names"
    row = stored(db, tid)
    assert (row["state"], row["user_id"], row["order_id"]) == ("delivered", user, entry["order_id"])
    [audit] = audit_rows(db, tid)
    assert_row_holds_the_fetched_jws(audit, jws, user)
    assert audit["environment"] == "Production" and audit["receipt_id"] == row["receipt_id"]
    assert audit["client_ip"], "the client address is recorded as for a posted JWS"
    assert calls(simulator) == [("production", 200)]
    assert [r["path"] for r in server_api_requests(simulator)] == [f"/inApps/v1/transactions/{tid}"]

    again = assert_verify_answer(verify_by_id(api, tid, user_id=user), "already_delivered")
    assert only_entry(again)["order_id"] == entry["order_id"]
    assert len(audit_rows(db, tid)) == 2, "every request past the input checks has its audit row"
    assert db.scalar("SELECT COUNT(*) FROM orders WHERE user_id = %s", user) == 1


def test_fifty_concurrent_requests_for_one_transaction_id_deliver_it_once(api, db, simulator, create_order):
    user = new_user_id()
    registered, _ = register_for(simulator, create_order, user)
    tid = registered["transaction_id"]

    with ThreadPoolExecutor(max_workers=50) as pool:
        answers = list(pool.map(lambda _: verify_by_id(api, tid, user_id=user), range(50)))

    statuses = [response.json().get("status") for response in answers]
    assert statuses.count("delivered") == 1 and statuses.count("already_delivered") == 49, statuses
    assert db.scalar("SELECT COUNT(*) FROM transactions WHERE transaction_id = %s", tid) == 1
    assert db.scalar("SELECT COUNT(*) FROM orders WHERE user_id = %s", user) == 1
    rows = audit_rows(db, tid)
    assert len(rows) == 50
    for row in rows:
        assert_row_holds_the_fetched_jws(row, registered["signed_transactions"]["production"], user)
    assert calls(simulator) == [("production", 200)] * 50


def test_a_transaction_production_does_not_know_is_fetched_from_the_sandbox(
        api, db, simulator, service_settings, create_order):
    service_settings.apply(review_version="1.3.0")
    user = new_user_id()
    registered, _ = register_for(simulator, create_order, user, environments=("Sandbox",))
    tid = registered["transaction_id"]

    body = assert_verify_answer(verify_by_id(api, tid, user_id=user, app_version="1.3.0"), "delivered")

    assert body["environment"] == "Sandbox" and only_entry(body)["state"] == "delivered"
    assert calls(simulator) == [("production", 404), ("sandbox", 200)]
    assert stored(db, tid)["environment"] == "Sandbox"
    [audit] = audit_rows(db, tid)
    assert_row_holds_the_fetched_jws(audit, registered["signed_transactions"]["sandbox"], user)
    assert audit["environment"] == "Sandbox"


def test_a_sandbox_transaction_outside_review_is_rejected_as_if_posted(api, db, simulator, create_order):
    user = new_user_id()
    tid = register_for(simulator, create_order, user, environments=("Sandbox",))[0]["transaction_id"]
    body = assert_verify_answer(verify_by_id(api, tid, user_id=user, app_version="1.3.0"), "rejected")
    assert only_entry(body)["state"] == "rejected"
    assert stored(db, tid) is None


def test_a_transaction_neither_environment_knows_is_pending_and_not_asked_about_again_for_a_minute(
        api, db, simulator, create_order):
    user = new_user_id()
    create_order(user, PAY_6)                    # the purchase the app is waiting for
    tid = new_transaction_id()

    response = verify_by_id(api, tid, user_id=user)

    body = assert_verify_answer(response, "pending")
    assert response.status_code == 202 and body["finish_transaction"] is False and body["transactions"] == []
    assert calls(simulator) == [("production", 404), ("sandbox", 404)]
    assert stored(db, tid) is None
    [audit] = audit_rows(db, tid)
    assert audit["kind"] == "jws" and audit["apple_status"] == 4040010, audit
    assert audit["receipt_data"] == "" and audit["apple_response"] is None and audit["verified_at"] is not None

    # Asked again at once (well within the 60 s): answered from memory, Apple is not asked again.
    again = verify_by_id(api, tid, user_id=new_user_id())
    assert assert_verify_answer(again, "pending")["transactions"] == [] and again.status_code == 202
    assert calls(simulator) == [("production", 404), ("sandbox", 404)], "one look-up per environment in all"
    rows = audit_rows(db, tid)
    assert len(rows) == 2, "the second request is recorded too"
    assert rows[1]["kind"] == "jws" and rows[1]["apple_status"] == 4040010 and rows[1]["verified_at"] is not None


def test_a_jws_delivered_by_post_is_already_delivered_by_transaction_id(api, db, simulator, create_order):
    signer = importlib.import_module("signed_data")
    user = new_user_id()
    tid = new_transaction_id()
    made = create_order(user, PAY_6)
    posted = signer.sign(signer.transaction(PAY_6, transaction_id=tid, app_account_token=made["order_id"]), certs_dir())
    by_jws = only_entry(assert_verify_answer(
        api.post_json(ROUTE, {"signed_transaction": posted, "user_id": user}), "delivered"))
    register_transaction(simulator, transaction_id=tid, app_account_token=made["order_id"])

    entry = only_entry(assert_verify_answer(verify_by_id(api, tid, user_id=user), "already_delivered"))

    assert entry["order_id"] == by_jws["order_id"]
    assert db.scalar("SELECT COUNT(*) FROM orders WHERE user_id = %s", user) == 1


def test_a_revoked_transaction_is_refunded(api, db, simulator, create_order):
    user = new_user_id()
    registered, made = register_for(simulator, create_order, user, revocation_ms=int(time.time() * 1000))
    tid = registered["transaction_id"]

    body = assert_verify_answer(verify_by_id(api, tid, user_id=user), "not_paid")

    entry = only_entry(body)
    assert entry["state"] == "refunded" and entry["order_id"] is None and entry["cancellation_date"]
    row = stored(db, tid)
    assert row["state"] == "refunded" and row["delivered_at"] is None
    assert (row["revocation_type"], row["revocation_percentage"]) == ("REFUND_FULL", 100000)
    assert db.scalar("SELECT COUNT(*) FROM orders WHERE user_id = %s AND status = 'delivered'", user) == 0


def test_an_app_account_token_of_another_users_order_is_409_and_changes_nothing(api, db, simulator, create_order):
    owner, other = new_user_id(), new_user_id()
    made = create_order(owner, PAY_30)
    create_order(other, PAY_6)                   # an open order of its own: the id is looked up
    registered = register_transaction(simulator, product_id=PAY_30, app_account_token=made["order_id"])
    tid = registered["transaction_id"]

    assert_error(verify_by_id(api, tid, user_id=other), 409, "order_user_mismatch")

    assert stored(db, tid) is None
    assert db.one("SELECT status FROM orders WHERE order_id = %s", made["order_id"])["status"] == "created"
    assert db.scalar("SELECT COUNT(*) FROM orders WHERE user_id = %s AND status <> 'created'", other) == 0
    [audit] = audit_rows(db, tid)
    assert audit["user_id"] == other and audit["receipt_data"] == registered["signed_transactions"]["production"]

    entry = only_entry(assert_verify_answer(verify_by_id(api, tid, user_id=owner), "delivered"))
    assert entry["order_id"] == made["order_id"]
    assert stored(db, tid)["user_id"] == owner


def test_the_app_account_token_names_the_order_when_the_request_names_none(api, db, simulator, create_order):
    owner = new_user_id()
    made = create_order(owner, PAY_6)
    tid = register_transaction(simulator, app_account_token=made["order_id"])["transaction_id"]
    entry = only_entry(assert_verify_answer(verify_by_id(api, tid, order_id=made["order_id"]), "delivered"))
    assert entry["order_id"] == made["order_id"]
    [audit] = audit_rows(db, tid)
    assert (audit["order_id"], audit["user_id"]) == (made["order_id"], owner), "the row names whom it went to"


def test_an_order_id_the_token_does_not_name_proves_nothing(api, db, simulator, create_order):
    user = new_user_id()
    tid = register_transaction(simulator)["transaction_id"]
    for order_id in ("00000000-0000-4000-8000-000000000000", create_order(user, PAY_6)["order_id"]):
        assert_error(verify_by_id(api, tid, order_id=order_id, user_id=user), 403, "proof_required")
    assert stored(db, tid) is None
    audits = audit_rows(db, tid)
    assert len(audits) == 2 and all(a["verified_at"] is not None for a in audits), audits
    assert audits[0]["order_id"] == "00000000-0000-4000-8000-000000000000"


def test_a_jws_from_apple_that_does_not_verify_is_invalid_signed_data(api, db, simulator, create_order):
    user = new_user_id()
    create_order(user, PAY_6)
    registered = register_transaction(simulator, chain="untrusted")
    tid = registered["transaction_id"]

    assert_error(verify_by_id(api, tid, user_id=user), 400, "invalid_signed_data")

    assert stored(db, tid) is None
    assert calls(simulator) == [("production", 200)], "a JWS that does not verify is not asked again"
    [audit] = audit_rows(db, tid)
    assert audit["receipt_data"] == registered["signed_transactions"]["production"]
    assert audit["signed_data_error"] == "untrustedChain" and audit["apple_response"] is None
    assert audit["verified_at"] is not None


# --- a bare id proves nothing ----------------------------------------------------------------

def assert_proof_required_and_nothing_changed(db, response, tid, user):
    assert_error(response, 403, "proof_required")
    assert "signed transaction or the receipt" in response.json()["error"]["message"]
    assert events_of(db, tid) == [], "no event: nothing was delivered"
    assert db.scalar("SELECT COUNT(*) FROM orders WHERE user_id = %s AND status <> 'created'", user) == 0


def test_a_transaction_id_without_a_token_is_403_proof_required_and_delivers_nothing(
        api, db, simulator, create_order):
    registered = register_transaction(simulator)
    tid = registered["transaction_id"]
    thief = new_user_id()
    create_order(thief, PAY_6)                   # an open order of its own: the id is looked up

    assert_proof_required_and_nothing_changed(db, verify_by_id(api, tid, user_id=thief), tid, thief)

    assert stored(db, tid) is None
    [audit] = audit_rows(db, tid)
    assert audit["kind"] == "jws" and audit["user_id"] == thief, "the attempt is on record"
    assert audit["receipt_data"] == registered["signed_transactions"]["production"] and audit["verified_at"]
    assert calls(simulator) == [("production", 200)]


def test_an_unclaimed_transaction_stays_unclaimed_for_a_bare_transaction_id(api, db, simulator, create_order):
    payload = purchase()                         # a ONE_TIME_CHARGE without appAccountToken: unclaimed
    tid = payload["transactionId"]
    send(api, "ONE_TIME_CHARGE", payload)
    assert stored(db, tid)["state"] == "unclaimed"
    register_transaction(simulator, transaction_id=tid)
    thief = new_user_id()
    create_order(thief, PAY_6)

    assert_proof_required_and_nothing_changed(db, verify_by_id(api, tid, user_id=thief), tid, thief)

    row = stored(db, tid)
    assert (row["state"], row["user_id"], row["order_id"], row["delivered_at"]) == ("unclaimed", None, None, None)


def test_a_token_naming_the_order_of_the_request_is_delivered_without_a_user_id(api, db, simulator, create_order):
    user = new_user_id()
    registered, made = register_for(simulator, create_order, user)
    tid = registered["transaction_id"]
    entry = only_entry(assert_verify_answer(verify_by_id(api, tid, order_id=made["order_id"]), "delivered"))
    assert entry["order_id"] == made["order_id"] and stored(db, tid)["user_id"] == user
    assert events_of(db, tid) == [("delivered", user, made["order_id"])]


# --- look-ups bounded: the sandbox under `never`, the minute's budget --------------------------

def test_under_policy_never_the_sandbox_is_not_asked_and_lookups_are_capped_per_minute(
        simulator, own_service, create_order):
    """An iap-fcgi of its own with IAP_SANDBOX_POLICY=never and IAP_APPSTORE_LOOKUPS_PER_MINUTE=2 (the
    stack's runs review and the default 600): unknown ids cost one production call each, and the third
    id within the minute is not looked up at all."""
    service = own_service(IAP_SANDBOX_POLICY="never", IAP_APPSTORE_LOOKUPS_PER_MINUTE="2")
    first, second, third = new_transaction_id(), new_transaction_id(), new_transaction_id()
    # Each id from a user and an address of its own: a user's share is a tenth and an address's half,
    # here 1 each (test_lookup_quota.py).
    users = [new_user_id() for _ in range(3)]
    for user in users:
        create_order(user, PAY_6)

    for index, tid in enumerate((first, second)):
        answer = service.verify_by_id(tid, address=f"192.0.2.{index + 1}", user_id=users[index])
        assert answer.status == 202 and answer.json()["status"] == "pending", answer
    assert calls(simulator) == [("production", 404)] * 2, "no sandbox look-up under the policy never"

    over = service.verify_by_id(third, address="192.0.2.3", user_id=users[2])
    assert over.status == 503 and over.json()["status"] == "retry_later", over
    assert over.headers.get("retry-after"), over.headers
    remembered = service.verify_by_id(first, address="192.0.2.3", user_id=users[2])
    assert remembered.status == 202 and remembered.json()["status"] == "pending", "known unknown: from memory"
    assert calls(simulator) == [("production", 404)] * 2, "neither the third id nor the first again reached Apple"


def test_a_bad_lookups_per_minute_stops_the_start_naming_the_variable(tmp_path):
    status, log = start_up_refusal(tmp_path / "refused.log", IAP_LISTEN=str(tmp_path / "s.sock"),
                                   **own_service_environment(IAP_APPSTORE_LOOKUPS_PER_MINUTE="0"))
    assert status != 0 and "IAP_APPSTORE_LOOKUPS_PER_MINUTE" in log, (status, log)


# --- Apple failing ---------------------------------------------------------------------------

def test_a_500_is_retried_and_lasting_500s_are_retry_later_within_the_budget(api, db, simulator, create_order):
    user = new_user_id()
    tid = register_for(simulator, create_order, user)[0]["transaction_id"]
    simulator.control(api_fault=500, api_fail_next=1)
    assert_verify_answer(verify_by_id(api, tid, user_id=user), "delivered")
    assert calls(simulator) == [("production", 500), ("production", 200)]

    simulator.reset_stats()
    other = register_transaction(simulator)["transaction_id"]
    create_order(user, PAY_6)                    # the first order is delivered: a new one is open
    simulator.control(api_fault=500, api_fail_next=0)
    started = time.monotonic()
    body = assert_verify_answer(verify_by_id(api, other, user_id=user), "retry_later")
    elapsed = time.monotonic() - started

    assert body["transactions"] == [] and body["apple_status"] is None
    made = calls(simulator)
    assert 2 <= len(made) <= 3 and set(made) == {("production", 500)}, made
    assert elapsed < BUDGET_S + 1, f"answered after {elapsed:.2f} s"
    assert stored(db, other) is None
    [audit] = audit_rows(db, other)
    assert audit["receipt_data"] == "" and audit["verified_at"] is not None and audit["apple_status"] is None


def test_a_429_is_called_again_only_after_its_retry_after(api, simulator, create_order):
    user = new_user_id()
    tid = register_for(simulator, create_order, user)[0]["transaction_id"]
    simulator.control(api_fault=429, api_fail_next=1, api_retry_after_ms=700)

    assert_verify_answer(verify_by_id(api, tid, user_id=user), "delivered")

    made = server_api_requests(simulator)
    assert [c["status"] for c in made] == [429, 200], made
    waited_ms = made[1]["at_ms"] - made[0]["at_ms"]
    assert 690 <= waited_ms < 1500, f"the second call came {waited_ms} ms after the 429 (Retry-After: 700 ms)"


def test_a_429_whose_retry_after_passes_the_budget_is_retry_later_at_once(api, db, simulator, create_order):
    tid = register_transaction(simulator)["transaction_id"]
    user = new_user_id()
    create_order(user, PAY_6)
    simulator.control(api_fault=429, api_retry_after_ms=60_000)
    started = time.monotonic()

    assert_verify_answer(verify_by_id(api, tid, user_id=user), "retry_later")

    assert time.monotonic() - started < BUDGET_S, "it waited instead of ending"
    assert calls(simulator) == [("production", 429)]
    assert stored(db, tid) is None


# --- without the Server API ------------------------------------------------------------------

def test_without_the_server_api_a_transaction_id_is_400_server_api_not_configured(tmp_path, db):
    """An iap-fcgi of the test's own, without IAP_APPSTORE_* (fastcgi_client leaves them out)."""
    socket_path = str(tmp_path / "iap-fcgi.sock")
    log_path = tmp_path / "iap-fcgi.log"
    service = start_service(log_path, IAP_LISTEN=socket_path)
    try:
        wait_until_answering(socket_path, service, log_path)
        tid = new_transaction_id()
        body = json.dumps({"transaction_id": tid, "user_id": new_user_id()}).encode()
        answer = request_once(socket_path, "POST", ROUTE, body=body)
        assert answer.status == 400, answer
        error = answer.json()["error"]
        assert error["code"] == "server_api_not_configured" and "signed_transaction" in error["message"], error
        assert audit_rows(db, tid) == [], "nothing is recorded"
    finally:
        stop_service(service)


# --- iapctl lookup --user / --deliver --------------------------------------------------------

def lookup_lines(out):
    return {line.split("\t")[0]: line.split("\t") for line in out.strip().splitlines()}


def test_lookup_deliver_delivers_each_transaction_once_to_the_user(api, db, simulator, create_order):
    user, other = new_user_id(), new_user_id()
    delivered_before = register_for(simulator, create_order, other)[0]["transaction_id"]
    assert_verify_answer(verify_by_id(api, delivered_before, user_id=other), "delivered")
    new_one = register_transaction(simulator, product_id=PAY_30)
    revoked = register_transaction(simulator, revocation_ms=int(time.time() * 1000))["transaction_id"]
    others_order = create_order(other, PAY_6)
    foreign = register_transaction(simulator, app_account_token=others_order["order_id"])["transaction_id"]
    order_id = register_order(simulator, [delivered_before, new_one["transaction_id"], revoked, foreign])
    simulator.reset_stats()

    status, out, err, _ = run_iapctl("lookup", order_id, "--user", user, "--deliver")

    assert status == 1 and f"{foreign}: order_user_mismatch" in err, (status, out, err)
    lines = lookup_lines(out)
    assert len(lines) == 4, out
    # id, product, purchase date, state here after the run, whether it is the user's, what the run did
    assert lines[delivered_before][3:] == ["delivered", "no", "already_delivered"], lines[delivered_before]
    assert lines[new_one["transaction_id"]][3:] == ["delivered", "yes", "delivered"]
    assert lines[revoked][3:] == ["refunded", "yes", "refunded"]
    assert lines[foreign][3:] == ["not here", "no", "order_user_mismatch"]
    assert [c["path"] for c in server_api_requests(simulator)] == [f"/inApps/v1/lookup/{order_id}"]

    row = stored(db, new_one["transaction_id"])
    assert (row["state"], row["user_id"], row["environment"]) == ("delivered", user, "Production")
    assert db.one("SELECT status, origin, user_id FROM orders WHERE order_id = %s", row["order_id"]) == {
        "status": "delivered", "origin": "receipt", "user_id": user}
    [audit] = audit_rows(db, new_one["transaction_id"])
    assert_row_holds_the_fetched_jws(audit, new_one["signed_transactions"]["production"], user)
    assert audit["client_ip"] == "iapctl" and audit["receipt_id"] == row["receipt_id"]
    assert stored(db, revoked)["state"] == "refunded" and stored(db, revoked)["delivered_at"] is None
    assert stored(db, delivered_before)["user_id"] == other, "delivered once, to whom it went first"
    assert stored(db, foreign) is None
    assert len(audit_rows(db, delivered_before)) == 1, "nothing was written for it"

    status, out, err, _ = run_iapctl("lookup", order_id, "--user", user, "--deliver")
    again = lookup_lines(out)
    assert again[new_one["transaction_id"]][3:] == ["delivered", "yes", "already_delivered"], out
    assert again[revoked][3:] == ["refunded", "yes", "refunded"]
    assert db.scalar("SELECT COUNT(*) FROM transactions WHERE user_id = %s", user) == 2
    assert len(audit_rows(db, new_one["transaction_id"])) == 1, "a second run writes nothing for it"


def test_lookup_user_without_deliver_shows_whose_each_is_and_writes_nothing(api, db, simulator, create_order):
    user, other = new_user_id(), new_user_id()
    mine = register_for(simulator, create_order, user)[0]["transaction_id"]
    assert_verify_answer(verify_by_id(api, mine, user_id=user), "delivered")
    theirs = register_for(simulator, create_order, other)[0]["transaction_id"]
    assert_verify_answer(verify_by_id(api, theirs, user_id=other), "delivered")
    unbound = register_transaction(simulator)["transaction_id"]
    my_order = create_order(user, PAY_6)
    bound_to_me = register_transaction(simulator, app_account_token=my_order["order_id"])["transaction_id"]
    order_id = register_order(simulator, [mine, theirs, unbound, bound_to_me])

    status, out, err, _ = run_iapctl("lookup", order_id, "--user", user)

    assert status == 0, err
    lines = lookup_lines(out)
    assert lines[mine][3:] == ["delivered", "yes"] and lines[theirs][3:] == ["delivered", "no"], out
    assert lines[unbound][3:] == ["not here", "-"] and lines[bound_to_me][3:] == ["not here", "yes"], out
    assert stored(db, unbound) is None and stored(db, bound_to_me) is None
    assert audit_rows(db, unbound) == []


def test_lookup_deliver_requires_a_user(simulator):
    status, out, err, _ = run_iapctl("lookup", "MK5TTTVWJH", "--deliver")
    assert status != 0 and out == "" and "--deliver needs --user" in err, (status, out, err)
    assert server_api_requests(simulator) == []


# --- the database down: the audit row comes first ----------------------------------------------

@pytest.mark.outage("mariadb")
def test_with_the_database_down_apple_is_not_asked(api, simulator, database_down):
    tid = register_transaction(simulator)["transaction_id"]
    body = assert_verify_answer(verify_by_id(api, tid, user_id=new_user_id()), "retry_later")
    assert body["transactions"] == []
    assert calls(simulator) == [], "no row, no call: Apple is asked only once the request is on record"


# --- iap-fcgi dying while Apple is asked ------------------------------------------------------

def own_service_environment(**overrides):
    """The variables an iap-fcgi of the test's own needs for the Server API as the stack's has it
    (fastcgi_client leaves them out): the key, the simulator's URLs, its signing root."""
    return {**{name: os.environ[name] for name in APPSTORE_VARIABLES + (
        "IAP_APPSTORE_API_URL", "IAP_APPSTORE_SANDBOX_API_URL")},
            "IAP_APPLE_ROOT_CA_FILE": os.path.join(certs_dir(), SIMULATOR_SIGNING_ROOT), **overrides}


class OwnService:
    """An iap-fcgi of the test's own on a unix socket, with the stack's database and simulator."""

    def __init__(self, tmp_path, **overrides):
        self.socket_path = str(tmp_path / "iap-fcgi.sock")
        self.log_path = tmp_path / "iap-fcgi.log"
        self.process = start_service(self.log_path, **own_service_environment(IAP_LISTEN=self.socket_path, **overrides))
        wait_until_answering(self.socket_path, self.process, self.log_path)

    def verify_by_id(self, transaction_id, address="127.0.0.1", **fields):
        body = {"transaction_id": transaction_id, **fields}
        return request_once(self.socket_path, "POST", ROUTE, body=json.dumps(body).encode(), remote_addr=address)

    def stop(self):
        stop_service(self.process)


@pytest.fixture
def own_service(tmp_path):
    """own_service(**variables): an OwnService, stopped after the test."""
    started = []

    def start(**overrides):
        started.append(OwnService(tmp_path, **overrides))
        return started[-1]
    yield start
    for service in started:
        service.stop()


def test_a_fetch_cut_short_by_a_crash_leaves_an_open_row_retry_pending_leaves_alone(
        api, db, simulator, create_order, iapctl, own_service):
    """The interleaving is forced, not hoped for: Apple (the simulator) holds its answer 100 s, the
    service's own budget is 120 s, so the fetch is still under way however long the machine takes to
    show the audit row; then the service is killed."""
    service = own_service(IAP_APPLE_TIMEOUT_MS="120000")
    user = new_user_id()
    tid = register_for(simulator, create_order, user)[0]["transaction_id"]
    pending_tid = new_transaction_id()
    closed = service.verify_by_id(pending_tid, user_id=user)
    assert closed.status == 202 and closed.json()["status"] == "pending", closed  # a closed row, receipt_data ''
    simulator.control(latency_ms=100_000)
    with ThreadPoolExecutor(max_workers=1) as pool:
        cut_short = pool.submit(service.verify_by_id, tid, user_id=user)
        wait_until(lambda: audit_rows(db, tid), 60, "the audit row, written before Apple is asked")
        service.process.kill()
        service.process.wait()
        try:
            answer = cut_short.result()
        except OSError:                          # the client's own 10 s timeout, or the connection cut
            answer = None
        assert answer is None or answer.status >= 500, answer
    [row] = audit_rows(db, tid)
    assert (row["receipt_data"], row["verified_at"]) == ("", None), "the fetch never ended: the row stays open"
    simulator.control(latency_ms=0)

    iapctl("retry-pending", "--minimum-age", "0")

    after = db.one("SELECT verified_at, retry_attempts, retry_final_state, superseded_by FROM receipts"
                   " WHERE receipt_id = %s", row["receipt_id"])
    assert after == {"verified_at": None, "retry_attempts": 0, "retry_final_state": None, "superseded_by": None}, (
        "retry-pending verifies receipts only: the row is neither tried nor closed as a copy of another jws row")
    assert stored(db, tid) is None
    assert_verify_answer(verify_by_id(api, tid, user_id=user), "delivered")
