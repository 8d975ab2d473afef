"""Subscriptions in the simulator: renewal info signed with the test PKI like a transaction (signed_data.py
renewal-info), and the subscription notifications sent with data.signedRenewalInfo shaped by their type and subtype
(subscription_notifications.py, through notifications.py's POST /notifications/send)."""
import base64
import http.server
import json
import re
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
import requests
from cryptography import x509
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.asymmetric.utils import encode_dss_signature

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import notifications  # noqa: E402
import signed_data  # noqa: E402
import subscription_notifications  # noqa: E402

REPO = HERE.parent.parent
DAY_MS = 86_400_000
EXPIRES_MS = 1_767_225_600_000  # 2026-01-01T00:00:00Z


@pytest.fixture(scope="module")
def certs(tmp_path_factory):
    directory = tmp_path_factory.mktemp("certs")
    subprocess.run([str(REPO / "scripts" / "make-test-certs"), str(directory)], check=True, capture_output=True)
    return directory


def _part(text):
    return json.loads(base64.urlsafe_b64decode(text + "=" * (-len(text) % 4)))


def verified_payload(jws, certs):
    """The payload of `jws` once its leaf (x5c[0], the test PKI's signing leaf) has checked its ES256 signature."""
    header, payload, signature = jws.split(".")
    x5c = _part(header)["x5c"]
    leaf = x509.load_der_x509_certificate(base64.b64decode(x5c[0]))
    assert leaf == x509.load_pem_x509_certificate((certs / "signing-leaf.pem").read_bytes())
    raw = base64.urlsafe_b64decode(signature + "=" * (-len(signature) % 4))
    der = encode_dss_signature(int.from_bytes(raw[:32], "big"), int.from_bytes(raw[32:], "big"))
    leaf.public_key().verify(der, f"{header}.{payload}".encode(), ec.ECDSA(hashes.SHA256()))  # raises if bad
    return _part(payload)


def period(**fields):
    return signed_data.transaction("vip_monthly", original_transaction_id="2000000000000001",
                                   transaction_id="2000000000000002", type="Auto-Renewable Subscription",
                                   expires_ms=EXPIRES_MS, **fields)


# ---------- payloads ----------

def test_a_renewal_period_carries_its_expiry_and_group():
    renewal = period()
    assert renewal["expiresDate"] == EXPIRES_MS
    assert renewal["transactionReason"] == "RENEWAL"
    assert renewal["subscriptionGroupIdentifier"] and renewal["webOrderLineItemId"].isdigit()
    assert "expiresDate" not in signed_data.transaction("gems")


@pytest.mark.parametrize("notification_type, subtype, expected", [
    ("DID_RENEW", None, {"autoRenewStatus": 1, "isInBillingRetryPeriod": False}),
    ("DID_FAIL_TO_RENEW", "GRACE_PERIOD", {"isInBillingRetryPeriod": True,
                                           "gracePeriodExpiresDate": EXPIRES_MS + 16 * DAY_MS}),
    ("DID_FAIL_TO_RENEW", None, {"isInBillingRetryPeriod": True, "gracePeriodExpiresDate": None}),
    ("GRACE_PERIOD_EXPIRED", None, {"isInBillingRetryPeriod": True, "gracePeriodExpiresDate": None}),
    ("EXPIRED", "VOLUNTARY", {"autoRenewStatus": 0, "expirationIntent": 1}),
    ("EXPIRED", "BILLING_RETRY", {"autoRenewStatus": 0, "expirationIntent": 2}),
    ("EXPIRED", "PRODUCT_NOT_FOR_SALE", {"autoRenewStatus": 0, "expirationIntent": 4}),
    ("DID_CHANGE_RENEWAL_STATUS", "AUTO_RENEW_DISABLED", {"autoRenewStatus": 0}),
    ("DID_CHANGE_RENEWAL_STATUS", "AUTO_RENEW_ENABLED", {"autoRenewStatus": 1}),
])
def test_renewal_info_is_shaped_by_the_notification(notification_type, subtype, expected):
    info = subscription_notifications.renewal_info_for(notification_type, subtype, period(), signed_ms=5)
    assert (info["originalTransactionId"], info["productId"], info["autoRenewProductId"]) == (
        "2000000000000001", "vip_monthly", "vip_monthly")
    assert (info["renewalDate"], info["signedDate"], info["environment"]) == (EXPIRES_MS, 5, "Production")
    assert {key: info.get(key) for key in expected} == expected


def test_fields_given_replace_what_the_type_would_say():
    info = subscription_notifications.renewal_info_for("DID_CHANGE_RENEWAL_PREF", "DOWNGRADE", period(),
                                                       auto_renew_product_id="vip_basic")
    assert info["autoRenewProductId"] == "vip_basic" and info["productId"] == "vip_monthly"


def test_a_subtype_apple_never_sends_is_refused():
    with pytest.raises(ValueError, match="EXPIRED has subtype"):
        subscription_notifications.renewal_info_for("EXPIRED", None, period())
    with pytest.raises(ValueError, match="not GRACE"):
        subscription_notifications.renewal_info_for("DID_RENEW", "GRACE", period())


def test_the_command_line_signs_renewal_info_with_the_test_pki(certs):
    printed = subprocess.run(
        [sys.executable, str(HERE / "signed_data.py"), "renewal-info", "2000000000000001", "vip_monthly",
         "--certs", str(certs), "--grace-period-expires", "1767225600000", "--billing-retry", "--auto-renew-off",
         "--environment", "Sandbox", "--json"], capture_output=True, text=True, check=True).stdout
    signed = json.loads(printed)
    payload = verified_payload(signed["jws"], certs)
    assert payload == signed["payload"]
    assert (payload["gracePeriodExpiresDate"], payload["isInBillingRetryPeriod"], payload["autoRenewStatus"],
            payload["environment"]) == (1767225600000, True, 0, "Sandbox")


def test_a_forged_renewal_info_does_not_verify(certs):
    jws = signed_data.sign(signed_data.renewal_info("1", "vip_monthly"), str(certs),
                           signing_key=ec.generate_private_key(ec.SECP256R1()))
    with pytest.raises(Exception):
        verified_payload(jws, certs)


# ---------- sent through the control port ----------

class Receiver(http.server.ThreadingHTTPServer):
    """The service's notification endpoint: keeps every JSON body POSTed to it."""

    def __init__(self):
        self.bodies = []

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(handler):
                length = int(handler.headers["Content-Length"])
                self.bodies.append(json.loads(handler.rfile.read(length)))
                handler.send_response(200)
                handler.send_header("Content-Length", "0")
                handler.end_headers()

            def log_message(handler, *args):
                pass

        super().__init__(("127.0.0.1", 0), Handler)

    @property
    def url(self):
        return f"http://127.0.0.1:{self.server_address[1]}/v1/notifications/apple"


@pytest.fixture(scope="module")
def control(certs):
    process = subprocess.Popen(
        [sys.executable, str(HERE / "appstore_sim.py"), "--certs", str(certs), "--production-port", "0",
         "--sandbox-port", "0", "--control-port", "0"], stdout=subprocess.PIPE, text=True)
    match = re.search(r"control=[\d.]+:(\d+)", process.stdout.readline())
    assert match, "the simulator did not start"
    yield f"http://127.0.0.1:{match.group(1)}"
    process.terminate()
    process.wait(timeout=10)


@pytest.fixture
def receiver():
    server = Receiver()
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield server
    server.shutdown()


def received(receiver, count):
    deadline = time.monotonic() + 10
    while len(receiver.bodies) < count:
        assert time.monotonic() < deadline, f"{len(receiver.bodies)} of {count} notifications arrived"
        time.sleep(0.02)
    return receiver.bodies


def test_a_grace_period_notification_carries_signed_renewal_info(control, receiver, certs):
    sent = requests.post(f"{control}/notifications/send", timeout=10, json={
        "url": receiver.url, "notification_type": "DID_FAIL_TO_RENEW", "subtype": "GRACE_PERIOD",
        "signed_ms": 1_767_225_700_000, "retry_intervals_s": [],
        "transaction": {"product_id": "vip_monthly", "type": "Auto-Renewable Subscription",
                        "original_transaction_id": "2000000000000001", "expires_ms": EXPIRES_MS}})
    assert sent.status_code == 200, sent.text
    body = received(receiver, 1)[0]
    assert body["signedPayload"] == sent.json()["signed_payload"]
    notification = verified_payload(body["signedPayload"], certs)
    assert (notification["notificationType"], notification["subtype"]) == ("DID_FAIL_TO_RENEW", "GRACE_PERIOD")
    transaction = verified_payload(notification["data"]["signedTransactionInfo"], certs)
    renewal = verified_payload(notification["data"]["signedRenewalInfo"], certs)
    assert transaction["expiresDate"] == EXPIRES_MS and transaction["originalTransactionId"] == "2000000000000001"
    assert renewal["originalTransactionId"] == "2000000000000001"
    assert renewal["gracePeriodExpiresDate"] == EXPIRES_MS + 16 * DAY_MS
    assert renewal["isInBillingRetryPeriod"] is True
    assert renewal["signedDate"] == notification["signedDate"] == 1_767_225_700_000


def test_renewal_info_fields_in_the_request_replace_the_shaped_ones(control, receiver, certs):
    sent = requests.post(f"{control}/notifications/send", timeout=10, json={
        "url": receiver.url, "notification_type": "DID_CHANGE_RENEWAL_PREF", "subtype": "DOWNGRADE",
        "retry_intervals_s": [], "renewal_info": {"auto_renew_product_id": "vip_basic"},
        "transaction": {"product_id": "vip_monthly", "type": "Auto-Renewable Subscription",
                        "expires_ms": EXPIRES_MS}})
    assert sent.status_code == 200, sent.text
    notification = verified_payload(received(receiver, 1)[0]["signedPayload"], certs)
    assert verified_payload(notification["data"]["signedRenewalInfo"], certs)["autoRenewProductId"] == "vip_basic"


def test_a_one_time_purchase_carries_no_renewal_info(control, receiver, certs):
    sent = requests.post(f"{control}/notifications/send", timeout=10, json={
        "url": receiver.url, "notification_type": "ONE_TIME_CHARGE", "retry_intervals_s": [],
        "transaction": {"product_id": "gems"}})
    assert sent.status_code == 200, sent.text
    notification = verified_payload(received(receiver, 1)[0]["signedPayload"], certs)
    assert "signedRenewalInfo" not in notification["data"]


@pytest.mark.parametrize("body, message", [
    ({"notification_type": "EXPIRED", "subtype": "SOMETIMES"}, "EXPIRED has subtype"),
    ({"notification_type": "DID_RENEW", "renewal_info": ["no"]}, "renewal_info is an object"),
    ({"notification_type": "DID_RENEW", "renewal_info": {"colour": "red"}}, "renewal_info: "),
])
def test_a_bad_subscription_request_is_400_and_sends_nothing(control, receiver, body, message):
    body = {"url": receiver.url, "retry_intervals_s": [], **body,
            "transaction": {"product_id": "vip_monthly", "type": "Auto-Renewable Subscription",
                            "expires_ms": EXPIRES_MS}}
    answer = requests.post(f"{control}/notifications/send", timeout=10, json=body)
    assert answer.status_code == 400 and message in answer.json()["error"], answer.text
    assert receiver.bodies == []
