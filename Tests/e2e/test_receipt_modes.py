"""IAP_RECEIPT_VERIFIER (docs/configuration.md "App receipts checked here"): the same receipts, checked by
Apple (the stack's iap-fcgi, `apple`, the default) and by iap-fcgi itself (`local`, an instance of this module's own on the
same database, asked over FastCGI), give the same answers, but for apple_status (null in `local`). The
simulator signs real PKCS#7 receipts with the test PKI whose root the stack names in
IAP_APPLE_RECEIPT_ROOT_FILE, and its verifyReceipt reads the same bytes, so each receipt below means the
same to both. Each check failing alone is not_paid, with the failed check in the local audit row.
`server-api`: checked locally, then each transaction is confirmed with Get Transaction Info (a third
instance, started by the tests that need it)."""
import base64
import hashlib
import json
import os
import subprocess

import pymysql
import pytest

from conftest import IAPCTL, REPO
from server_admin import globals_set
from fastcgi_client import Connection, request_once, start_service, stop_service, wait_until_answering
from support import PAY_6, PAY_30, PAY_98, answered_transactions, new_transaction_id, new_user_id, wait_until
from test_server_api import register_transaction
from test_transaction_id_verify import own_service_environment

ROUTE = "/v1/receipts/verify"
MODES = ("apple", "local")
OTHER_BUNDLE_ID = "com.example.other"
IN_2020 = 1590969600000  # 2020-06-01, while the test PKI's expired leaf was valid
# The failed check as the audit row names it (receipts.signed_data_error), in the vocabulary the JWS checks
# use there (sql/005): what a support person reads for each bad receipt.
FAILED_CHECK = {
    "forged": "badSignature",
    "tampered": "badSignature",
    "untrusted": "untrustedChain",
    "xcode": "untrustedChain",
    "leaf-without-oid": "missingMarkerOID",
    "intermediate-without-oid": "missingMarkerOID",
    "expired-leaf": "expiredAtCreationDate",
    "truncated": "malformed",
}
# What Apple's verifyReceipt (the simulator) answers for them.
APPLE_STATUS = {"truncated": 21002}


class Answer:
    """A verify answer from either instance: HTTP status and JSON body."""

    def __init__(self, status, body):
        self.status, self.body = status, body


class NginxVerifier:
    """The stack's iap-fcgi (IAP_RECEIPT_VERIFIER unset: `apple`) through nginx."""
    mode = "apple"

    def __init__(self, api):
        self.api = api

    def verify(self, receipt_data, **fields):
        response = self.api.verify(receipt_data, **fields)
        return Answer(response.status_code, response.json())

    def version(self):
        return self.api.version()


class OwnVerifier:
    """An iap-fcgi of this module's own on a unix socket, same database and simulator as the stack's."""

    def __init__(self, directory, mode, **overrides):
        self.mode = mode
        self.socket_path = str(directory / "iap-fcgi.sock")
        self.log_path = directory / "iap-fcgi.log"
        root = os.path.join(os.environ["IAP_RUN"], "certs", "receipt-root.pem")
        self.process = start_service(self.log_path, IAP_LISTEN=self.socket_path, IAP_RECEIPT_VERIFIER=mode,
                                     IAP_APPLE_RECEIPT_ROOT_FILE=root, **overrides)
        wait_until_answering(self.socket_path, self.process, self.log_path)

    def verify(self, receipt_data, **fields):
        body = {"receipt_data": receipt_data, **{k: v for k, v in fields.items() if v is not None}}
        answer = request_once(self.socket_path, "POST", ROUTE, body=json.dumps(body).encode())
        return Answer(answer.status, answer.json())

    def version(self):
        return request_once(self.socket_path, "GET", "/v1/version").json()

    def stop(self):
        stop_service(self.process)


@pytest.fixture(scope="module")
def local_verifier(tmp_path_factory):
    verifier = OwnVerifier(tmp_path_factory.mktemp("local"), "local")
    yield verifier
    verifier.stop()


@pytest.fixture(scope="module")
def server_api_verifier(tmp_path_factory):
    directory = tmp_path_factory.mktemp("server-api")
    verifier = OwnVerifier(directory, "server-api", **own_service_environment())
    yield verifier
    verifier.stop()


@pytest.fixture(params=MODES)
def verifier(request, api):
    """Each test that takes it runs twice: through Apple (the stack's instance) and checked locally."""
    return NginxVerifier(api) if request.param == "apple" else request.getfixturevalue("local_verifier")


def bought(receipts, *product_ids, **kwargs):
    return [receipts.purchase(p, transaction_id=new_transaction_id(), **kwargs) for p in product_ids]


def sha256_of(receipt_data):
    return hashlib.sha256(base64.b64decode(receipt_data)).hexdigest()


def audit_row(db, receipt_data):
    return db.one("SELECT apple_status, signed_data_error, environment, verified_at FROM receipts WHERE sha256 = %s"
                  " ORDER BY receipt_id DESC LIMIT 1", sha256_of(receipt_data))


def assert_answer(verifier, answer, status, http=200):
    """The verify answer has this status, and apple_status as the mode gives it: 0 from Apple, null here."""
    assert answer.status == http and answer.body["status"] == status, (verifier.mode, answer.status, answer.body)
    expected = 0 if verifier.mode == "apple" else None
    if status in ("delivered", "already_delivered", "rejected", "pending") or answer.body["transactions"]:
        assert answer.body["apple_status"] == expected, (verifier.mode, answer.body)
    return answer.body


def states(body):
    return {tid: t["state"] for tid, t in answered_transactions(body).items()}


# --- the verify path, in both modes ----------------------------------------------------------------

def test_every_transaction_is_delivered_once(verifier, api, db, receipts):
    user_id = new_user_id()
    order_id = api.create_order(user_id, PAY_6)["order_id"]
    purchases = bought(receipts, PAY_6, PAY_30, PAY_98)
    ids = [p["transaction_id"] for p in purchases]
    receipt = receipts.app_receipt(purchases, application_version="1.3.0")
    body = assert_answer(verifier, verifier.verify(receipt, user_id=user_id, order_id=order_id,
                                                   transaction_id=ids[0]), "delivered")
    assert states(body) == {tid: "delivered" for tid in ids}
    assert answered_transactions(body)[ids[0]]["order_id"] == order_id
    assert (body["environment"], body["app"]["bundle_id"], body["app"]["application_version"]) == (
        "Production", "com.example.game", "1.3.0")
    assert db.delivered_count(ids) == 3
    again = assert_answer(verifier, verifier.verify(receipt, user_id=user_id), "already_delivered")
    assert states(again) == {tid: "already_delivered" for tid in ids}
    row = audit_row(db, receipt)
    assert row["apple_status"] == (0 if verifier.mode == "apple" else None) and row["signed_data_error"] is None
    # Complete in both modes (`local` writes it so in its INSERT): verified, and what verifyReceipt answers.
    first = db.one("SELECT environment, verified_at, apple_response FROM receipts WHERE sha256 = %s"
                   " ORDER BY receipt_id LIMIT 1", sha256_of(receipt))
    in_app = json.loads(first["apple_response"])["receipt"]["in_app"]
    assert first["verified_at"] is not None and first["environment"] == "Production", first
    assert sorted(t["transaction_id"] for t in in_app) == sorted(ids), in_app


@pytest.mark.parametrize("digest", ("sha1", "sha256"))
@pytest.mark.parametrize("encoding", ("der", "ber"))
def test_der_and_ber_sha1_and_sha256(verifier, db, receipts, digest, encoding):
    purchases = bought(receipts, PAY_6)
    receipt = receipts.app_receipt(purchases, digest=digest, encoding=encoding)
    body = assert_answer(verifier, verifier.verify(receipt, user_id=new_user_id()), "delivered")
    assert states(body) == {purchases[0]["transaction_id"]: "delivered"}


def test_a_leaf_expired_since_is_good_for_a_receipt_made_while_it_was_valid(verifier, receipts):
    purchases = bought(receipts, PAY_6, purchase_ms=IN_2020 - 60_000)
    receipt = receipts.app_receipt(purchases, chain="expired-leaf", creation_ms=IN_2020)
    body = assert_answer(verifier, verifier.verify(receipt, user_id=new_user_id()), "delivered")
    assert states(body) == {purchases[0]["transaction_id"]: "delivered"}


def test_two_hundred_purchases_in_one_receipt(verifier, db, receipts):
    purchases = bought(receipts, *([PAY_6] * 200))
    body = assert_answer(verifier, verifier.verify(receipts.app_receipt(purchases), user_id=new_user_id()),
                         "delivered")
    assert states(body) == {p["transaction_id"]: "delivered" for p in purchases}
    assert db.delivered_count([p["transaction_id"] for p in purchases]) == 200


def test_empty_in_app_is_not_paid_and_pending_when_a_transaction_is_named(verifier, receipts):
    receipt = receipts.app_receipt([])
    body = assert_answer(verifier, verifier.verify(receipt, user_id=new_user_id()), "not_paid")
    assert body["transactions"] == []
    named = verifier.verify(receipt, user_id=new_user_id(), transaction_id=new_transaction_id())
    assert_answer(verifier, named, "pending", http=202)


def test_refunded_transaction_is_never_delivered(verifier, db, receipts):
    refunded = bought(receipts, PAY_30, purchase_ms=1406193061000, cancellation_ms=1406196661000)
    body = assert_answer(verifier, verifier.verify(receipts.app_receipt(refunded), user_id=new_user_id()),
                         "not_paid")
    assert states(body) == {refunded[0]["transaction_id"]: "refunded"}
    assert db.delivered_count([refunded[0]["transaction_id"]]) == 0


def test_another_apps_receipt_is_rejected(verifier, db, receipts):
    purchases = bought(receipts, PAY_6)
    receipt = receipts.app_receipt(purchases, bundle_id=OTHER_BUNDLE_ID)
    assert_answer(verifier, verifier.verify(receipt, user_id=new_user_id()), "rejected")
    assert db.delivered_count([purchases[0]["transaction_id"]]) == 0


def test_line_wrapped_receipt_is_read(verifier, receipts):
    purchases = bought(receipts, PAY_6)
    receipt = receipts.wrap_lines(receipts.app_receipt(purchases))
    assert_answer(verifier, verifier.verify(receipt, user_id=new_user_id()), "delivered")


def test_ios6_receipt_still_goes_to_apple(verifier, receipts):
    purchase = bought(receipts, PAY_6)[0]
    body = verifier.verify(receipts.ios6_receipt(purchase), user_id=new_user_id()).body
    assert body["status"] == "delivered" and body["apple_status"] == 0, (verifier.mode, body)


def test_sandbox_receipt_goes_through_the_sandbox_policy(verifier, db, receipts, service_settings):
    """ProductionSandbox in the payload is Sandbox: rejected without a review version, delivered to it."""
    purchases = bought(receipts, PAY_6)
    receipt = receipts.app_receipt(purchases, environment="Sandbox")
    body = assert_answer(verifier, verifier.verify(receipt, user_id=new_user_id(), app_version="1.3.0"),
                         "rejected")
    assert body["environment"] == "Sandbox"
    service_settings.apply(review_version="1.3.0")
    wait_until(lambda: verifier.version()["review_version"] == "1.3.0", 10,
               f"the {verifier.mode} instance reading review_version")
    body = assert_answer(verifier, verifier.verify(receipt, user_id=new_user_id(), app_version="1.3.0"),
                         "delivered")
    assert body["environment"] == "Sandbox" and audit_row(db, receipt)["environment"] == "Sandbox"


# --- each check failing alone -------------------------------------------------------------------

def bad_receipt(receipts, kind, purchases):
    if kind == "tampered":
        return receipts.tampered(receipts.app_receipt(purchases))
    if kind == "truncated":
        return receipts.truncated(receipts.app_receipt(purchases))
    if kind == "forged":
        return receipts.app_receipt(purchases, forged=True)
    return receipts.app_receipt(purchases, chain=kind)  # "expired-leaf": made now, after the leaf expired


@pytest.mark.parametrize("kind", sorted(FAILED_CHECK))
def test_each_failed_check_is_not_paid_and_named_in_the_audit_row(verifier, db, receipts, kind):
    purchases = bought(receipts, PAY_6)
    receipt = bad_receipt(receipts, kind, purchases)
    answer = verifier.verify(receipt, user_id=new_user_id())
    assert answer.status == 200 and answer.body["status"] == "not_paid", (verifier.mode, kind, answer.body)
    assert answer.body["transactions"] == [], "the client is told nothing more"
    assert db.delivered_count([purchases[0]["transaction_id"]]) == 0
    row = audit_row(db, receipt)
    if verifier.mode == "apple":
        assert answer.body["apple_status"] == row["apple_status"] == APPLE_STATUS.get(kind, 21003), row
    else:
        assert answer.body["apple_status"] is None and row["apple_status"] is None, row
        assert row["signed_data_error"] == FAILED_CHECK[kind] and row["verified_at"] is not None, row


def test_a_local_receipt_whose_delivery_failed_is_left_to_retry_pending(api, db, receipts, tmp_path):
    """Under `local` a receipt's row is written with its answer, and `verified_at` only by the transaction
    that delivers: a delivery that never happens leaves the receipt to retry-pending, as one Apple checked.
    Forced here: the test holds the order's row locked while an instance whose sessions wait 1 s for a lock
    tries its three times."""
    user_id = new_user_id()
    order_id = api.create_order(user_id, PAY_6)["order_id"]
    purchases = bought(receipts, PAY_6)
    tid, receipt = purchases[0]["transaction_id"], receipts.app_receipt(purchases)
    holder = pymysql.connect(**{**db.connect_args, "autocommit": False})
    verifier = None
    try:
        with holder.cursor() as cursor:
            assert cursor.execute("SELECT order_id FROM orders WHERE order_id = %s FOR UPDATE", (order_id,)) == 1
        with globals_set(innodb_lock_wait_timeout=1):  # while the instance's threads connect, as they need to
            verifier = OwnVerifier(tmp_path, "local")
            # Recorded and delivered at once, then as a receipt Apple checked: twice three 1 s lock waits.
            connection = Connection(verifier.socket_path)
            connection.socket.settimeout(60)
            body = json.dumps({"receipt_data": receipt, "user_id": user_id, "order_id": order_id}).encode()
            try:
                raw = connection.request("POST", ROUTE, body=body)
            finally:
                connection.close()
            answer = Answer(raw.status, raw.json())
    finally:
        holder.rollback()
        holder.close()
        if verifier is not None:
            verifier.stop()
    assert answer.status == 503 and answer.body["status"] == "retry_later", answer.body
    row = db.one("SELECT verified_at, apple_response, signed_data_error FROM receipts WHERE sha256 = %s",
                 sha256_of(receipt))
    assert row["verified_at"] is None and row["signed_data_error"] is None and row["apple_response"], row
    assert db.delivered_count([tid]) == 0

    root = os.path.join(os.environ["IAP_RUN"], "certs", "receipt-root.pem")
    result = subprocess.run([str(IAPCTL), "retry-pending", "--minimum-age", "0"], cwd=REPO, capture_output=True,
                            text=True, timeout=120, env={**os.environ, "IAP_RECEIPT_VERIFIER": "local",
                                                        "IAP_APPLE_RECEIPT_ROOT_FILE": root})
    assert result.returncode == 0 and "delivered=" in result.stdout, (result.stdout, result.stderr)
    assert db.delivered_count([tid]) == 1
    assert db.one("SELECT order_id FROM transactions WHERE transaction_id = %s", tid)["order_id"] == order_id
    assert db.scalar("SELECT verified_at IS NOT NULL FROM receipts WHERE sha256 = %s ORDER BY receipt_id LIMIT 1",
                     sha256_of(receipt)) == 1


# --- server-api: local, then Apple's current transaction ------------------------------------------

def test_server_api_delivers_what_apple_confirms(server_api_verifier, simulator, db, receipts):
    purchases = bought(receipts, PAY_6)
    register_transaction(simulator, product_id=PAY_6, transaction_id=purchases[0]["transaction_id"],
                         purchase_ms=purchases[0]["purchase_ms"])
    answer = server_api_verifier.verify(receipts.app_receipt(purchases), user_id=new_user_id())
    assert answer.body["status"] == "delivered" and answer.body["apple_status"] is None, answer.body
    assert states(answer.body) == {purchases[0]["transaction_id"]: "delivered"}


def test_server_api_sees_a_refund_made_after_the_receipt(server_api_verifier, simulator, db, receipts):
    purchases = bought(receipts, PAY_6)
    tid = purchases[0]["transaction_id"]
    receipt = receipts.app_receipt(purchases)  # made before the refund: it shows none
    register_transaction(simulator, product_id=PAY_6, transaction_id=tid, purchase_ms=purchases[0]["purchase_ms"],
                         revocation_ms=purchases[0]["purchase_ms"] + 60_000)
    answer = server_api_verifier.verify(receipt, user_id=new_user_id())
    assert answer.body["status"] == "not_paid", answer.body
    assert states(answer.body) == {tid: "refunded"}
    assert db.delivered_count([tid]) == 0


def test_server_api_with_apple_down_is_retry_later(server_api_verifier, simulator, db, receipts):
    purchases = bought(receipts, PAY_6)
    register_transaction(simulator, product_id=PAY_6, transaction_id=purchases[0]["transaction_id"])
    simulator.control(api_fault=500, api_fail_next=0)
    answer = server_api_verifier.verify(receipts.app_receipt(purchases), user_id=new_user_id())
    assert answer.status == 503 and answer.body["status"] == "retry_later", answer.body
    assert db.delivered_count([purchases[0]["transaction_id"]]) == 0
