"""Self-tests of the Google Play double (googleplay_sim.py): the service account key file, the JWT grant's
checks, productsv2, consume and acknowledge, voided purchases in pages, reviewrefund's validation, the
JWKS and push signer, and the faults."""
import base64
import json
import os
import re
import ssl
import stat
import subprocess
import sys
import time

import httpx
import pytest
import requests
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import padding, rsa

from test_simulator import HERE, MAKE_CERTS

DOUBLE = HERE / "googleplay_sim.py"
PACKAGE, PRODUCT = "com.example.game", "gems_100"
SCOPE = "https://www.googleapis.com/auth/androidpublisher"
AUDIENCE = "https://127.0.0.1/v1/notifications/google"
PUSH_ACCOUNT = "pubsub-push@iap-test.iam.gserviceaccount.com"


def start_double(certs, key_file):
    process = subprocess.Popen(
        [sys.executable, str(DOUBLE), "--certs", str(certs), "--port", "0", "--control-port", "0",
         "--service-account-file", str(key_file)], stdout=subprocess.PIPE, text=True)
    line = process.stdout.readline()
    match = re.match(r"googleplay-sim listening api=[\d.]+:(\d+) control=[\d.]+:(\d+)", line)
    if not match:
        process.kill()
        pytest.fail(f"the Google Play double did not start: {line!r}")
    return process, [int(port) for port in match.groups()]


@pytest.fixture(scope="module")
def certs(tmp_path_factory):
    directory = tmp_path_factory.mktemp("certs")
    subprocess.run([str(MAKE_CERTS), str(directory)], check=True)
    return directory


@pytest.fixture(scope="module")
def play(certs, tmp_path_factory):
    key_file = tmp_path_factory.mktemp("google") / "service-account.json"
    process, ports = start_double(certs, key_file)
    yield PlayClient(certs, key_file, ports)
    process.terminate()
    process.wait(timeout=10)


@pytest.fixture(autouse=True)
def fresh_double(play):
    play.control(reset=True)


def _b64url(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def _b64url_decode(part):
    return base64.urlsafe_b64decode(part + "=" * (-len(part) % 4))


def _sign(key, header, claims):
    signing_input = _b64url(json.dumps(header).encode()) + "." + _b64url(json.dumps(claims).encode())
    return signing_input + "." + _b64url(key.sign(signing_input.encode(), padding.PKCS1v15(), hashes.SHA256()))


class PlayClient:
    def __init__(self, certs, key_file, ports):
        self.ca = str(certs / "ca.pem")
        self.key_file = key_file
        self.account = json.loads(key_file.read_text())
        self.key = serialization.load_pem_private_key(self.account["private_key"].encode(), password=None)
        self.base = f"https://127.0.0.1:{ports[0]}"
        self.control_url = f"http://127.0.0.1:{ports[1]}"
        self._access_token = None

    # the control port
    def control(self, **settings):
        answer = requests.post(f"{self.control_url}/control", json=settings, timeout=5)
        assert answer.status_code == 200, answer.text
        self._access_token = None if settings.get("reset") else self._access_token
        return answer.json()

    def post_control(self, path, body):
        return requests.post(self.control_url + path, json=body, timeout=5)

    def purchase(self, **fields):
        answer = self.post_control("/purchases", {"package_name": PACKAGE, "product_id": PRODUCT, **fields})
        assert answer.status_code == 200, answer.text
        return answer.json()

    def calls(self, endpoint=None):
        calls = requests.get(f"{self.control_url}/calls", timeout=5).json()["calls"]
        return [c for c in calls if endpoint is None or c["endpoint"] == endpoint]

    # the token endpoint, as a client
    def grant(self, key=None, header=None, **claims):
        now = int(time.time())
        good = {"iss": self.account["client_email"], "scope": SCOPE, "aud": self.account["token_uri"],
                "iat": now, "exp": now + 3600, **claims}
        header = {"alg": "RS256", "typ": "JWT", "kid": self.account["private_key_id"], **(header or {})}
        return _sign(key or self.key, header, {k: v for k, v in good.items() if v is not None})

    def exchange(self, assertion, grant_type="urn:ietf:params:oauth:grant-type:jwt-bearer"):
        return requests.post(self.account["token_uri"], data={"grant_type": grant_type, "assertion": assertion},
                             verify=self.ca, timeout=10)

    def access_token(self):
        if self._access_token is None:
            answer = self.exchange(self.grant())
            assert answer.status_code == 200, answer.text
            self._access_token = answer.json()["access_token"]
        return self._access_token

    # the API
    def api(self, method, path, token=None, **kwargs):
        headers = {} if token is False else {"Authorization": "Bearer " + (token or self.access_token())}
        url = f"{self.base}/androidpublisher/v3/applications/{PACKAGE}{path}"
        return requests.request(method, url, headers=headers, verify=self.ca, timeout=10, **kwargs)

    def get_purchase(self, purchase_token, **kwargs):
        return self.api("GET", f"/purchases/productsv2/tokens/{purchase_token}", **kwargs)

    def finish(self, kind, token, product=PRODUCT):
        return self.api("POST", f"/purchases/products/{product}/tokens/{token}:{kind}", json={})


# ---------- the service account and the token endpoint ----------

def test_the_key_file_is_googles_shape_private_and_kept_across_a_restart(play, certs):
    account = play.account
    assert account["type"] == "service_account"
    assert account["token_uri"] == play.base + "/token"
    assert account["private_key"].startswith("-----BEGIN PRIVATE KEY-----")
    assert re.fullmatch(r"[0-9a-f]{40}", account["private_key_id"])
    assert stat.S_IMODE(os.stat(play.key_file).st_mode) == 0o600
    process, ports = start_double(certs, play.key_file)  # a second double on the same file: same key
    try:
        again = json.loads(play.key_file.read_text())
        assert again["private_key"] == account["private_key"] and again["private_key_id"] == account["private_key_id"]
        assert again["token_uri"] == f"https://127.0.0.1:{ports[0]}/token"
    finally:
        process.terminate()
        process.wait(timeout=10)
        play.key_file.write_text(json.dumps(account))


def test_a_good_grant_gets_an_access_token_that_opens_the_api(play):
    answer = play.exchange(play.grant())
    assert answer.status_code == 200, answer.text
    body = answer.json()
    assert body["token_type"] == "Bearer" and body["expires_in"] == 3599
    assert body["access_token"].startswith("ya29.")
    purchase = play.purchase()
    assert play.get_purchase(purchase["purchase_token"], token=body["access_token"]).status_code == 200
    [call] = play.calls("token")
    assert call["body"]["claims"]["scope"] == SCOPE  # the grant's claims are recorded, for the service's tests


@pytest.mark.parametrize("change, description", [
    ({"header": {"kid": "0" * 40}}, "Invalid JWT Signature."),
    ({"header": {"alg": "HS256"}}, "Invalid JWT Signature."),
    ({"key": "other"}, "Invalid JWT Signature."),
    ({"iss": "someone@else.iam.gserviceaccount.com"}, "Invalid grant: account not found"),
    ({"aud": "https://oauth2.googleapis.com/token"}, "Invalid JWT: Failed audience check."),
    ({"scope": None}, "scope"),
    ({"scope": "https://www.googleapis.com/auth/cloud-platform"}, "scope"),
    ({"exp_after": 3601}, "short-lived"),
    ({"iat_shift": -7200, "exp_after": 3600}, "short-lived"),
    ({"iat_shift": 300}, "short-lived"),
])
def test_a_bad_grant_is_refused_with_invalid_grant(play, change, description):
    now = int(time.time())
    change = dict(change)
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048) if change.pop("key", None) else None
    iat = now + change.pop("iat_shift", 0)
    claims = {"iat": iat, "exp": iat + change.pop("exp_after", 3600), **change}
    header = claims.pop("header", None)
    answer = play.exchange(play.grant(key=key, header=header, **claims))
    assert answer.status_code == 400
    body = answer.json()
    assert body["error"] in ("invalid_grant", "invalid_scope") and description in body["error_description"]
    assert play.calls("token")[-1]["status"] == 400


def test_the_wrong_grant_type_and_a_non_jwt_are_refused(play):
    assert play.exchange(play.grant(), grant_type="client_credentials").json()["error"] == "unsupported_grant_type"
    assert play.exchange("not.a.jwt").json()["error"] == "invalid_grant"


def test_the_api_wants_a_live_access_token(play):
    token = play.purchase()["purchase_token"]
    assert play.get_purchase(token, token=False).status_code == 401
    assert play.get_purchase(token, token="ya29.made-up").json()["error"]["status"] == "UNAUTHENTICATED"
    play.control(access_token_ttl_s=1)
    short = play.exchange(play.grant()).json()
    assert short["expires_in"] == 1
    deadline = time.monotonic() + 5
    while play.get_purchase(token, token=short["access_token"]).status_code == 200:
        assert time.monotonic() < deadline, "the access token did not expire"
        time.sleep(0.1)


# ---------- productsv2, consume, acknowledge ----------

def test_productsv2_answers_googles_shape(play):
    made = play.purchase(quantity=3, obfuscated_account_id="order-123", purchase_time_ms=1_764_400_000_123)
    body = play.get_purchase(made["purchase_token"]).json()
    assert body["kind"] == "androidpublisher#productPurchaseV2"
    [item] = body["productLineItem"]
    assert item["productId"] == PRODUCT
    assert item["productOfferDetails"]["quantity"] == 3 and item["productOfferDetails"]["refundableQuantity"] == 3
    assert item["productOfferDetails"]["consumptionState"] == "CONSUMPTION_STATE_YET_TO_BE_CONSUMED"
    assert body["purchaseStateContext"] == {"purchaseState": "PURCHASED"}
    assert re.fullmatch(r"GPA\.\d{4}-\d{4}-\d{4}-\d{5}", body["orderId"]) and body["orderId"] == made["order_id"]
    assert body["obfuscatedExternalAccountId"] == "order-123"
    assert body["acknowledgementState"] == "ACKNOWLEDGEMENT_STATE_PENDING"
    assert body["purchaseCompletionTime"] == "2025-11-29T07:06:40.123Z"
    assert body["regionCode"] == "US"
    assert "testPurchaseContext" not in body


def test_a_test_pending_purchase_without_order_id(play):
    made = play.purchase(state="PENDING", test=True, order_id=None)
    body = play.get_purchase(made["purchase_token"]).json()
    assert body["purchaseStateContext"]["purchaseState"] == "PENDING"
    assert body["testPurchaseContext"] == {"fopType": "TEST"}
    assert "orderId" not in body and "purchaseCompletionTime" not in body and "obfuscatedExternalAccountId" not in body
    assert play.finish("consume", made["purchase_token"]).json()["error"]["errors"][0]["reason"] == \
        "invalidPurchaseState"
    updated = play.post_control("/purchases/update", {"purchase_token": made["purchase_token"], "state": "PURCHASED"})
    assert updated.status_code == 200
    assert play.get_purchase(made["purchase_token"]).json()["purchaseStateContext"]["purchaseState"] == "PURCHASED"


def test_a_batch_makes_that_many_purchases_each_its_own(play):
    answer = play.post_control("/purchases/batch", {"count": 3, "package_name": PACKAGE, "product_id": PRODUCT})
    assert answer.status_code == 200, answer.text
    tokens = answer.json()["purchase_tokens"]
    assert len(set(tokens)) == 3
    orders = {play.get_purchase(token).json()["orderId"] for token in tokens}
    assert len(orders) == 3
    for body in ({"count": 0, "package_name": PACKAGE, "product_id": PRODUCT},
                 {"count": 2, "package_name": PACKAGE, "product_id": PRODUCT, "purchase_token": "same"}):
        assert play.post_control("/purchases/batch", body).status_code == 400


def test_an_unknown_token_or_another_apps_purchase_is_404(play):
    assert play.get_purchase("no-such-token").status_code == 404
    other = play.purchase(package_name="com.example.other")
    assert play.get_purchase(other["purchase_token"]).status_code == 404


def test_consume_once_then_invalid_purchase_state_and_consuming_acknowledges(play):
    token = play.purchase()["purchase_token"]
    assert play.finish("consume", token, product="another_product").status_code == 404
    assert play.finish("consume", token).status_code == 200
    second = play.finish("consume", token)
    assert second.status_code == 400 and second.json()["error"]["errors"][0]["reason"] == "invalidPurchaseState"
    assert play.finish("acknowledge", token).status_code == 400
    body = play.get_purchase(token).json()
    assert body["acknowledgementState"] == "ACKNOWLEDGEMENT_STATE_ACKNOWLEDGED"
    assert body["productLineItem"][0]["productOfferDetails"]["consumptionState"] == "CONSUMPTION_STATE_CONSUMED"
    shown = requests.get(f"{play.control_url}/purchases/{token}", timeout=5).json()
    assert shown["consumed"] and shown["acknowledged"]
    assert [c["status"] for c in play.calls("consume")] == [404, 200, 400]


def test_acknowledge_once(play):
    token = play.purchase()["purchase_token"]
    assert play.finish("acknowledge", token).status_code == 200
    assert play.finish("acknowledge", token).json()["error"]["errors"][0]["reason"] == "invalidPurchaseState"
    cancelled = play.purchase(state="CANCELLED")["purchase_token"]
    assert play.finish("acknowledge", cancelled).status_code == 400


# ---------- voided purchases ----------

def _voided(play, **query):
    answer = play.api("GET", "/purchases/voidedpurchases", params=query)
    return answer


def test_voided_purchases_come_in_pages_and_partial_refunds_only_when_asked(play):
    now = int(time.time() * 1000)
    tokens = []
    for index in range(5):
        purchase = play.purchase(quantity=3)
        tokens.append(purchase["purchase_token"])
        answer = play.post_control("/voided", {"purchase_token": purchase["purchase_token"],
                                               "voided_time_ms": now - 10_000 + index, "voided_reason": 7})
        assert answer.status_code == 200, answer.text
    partial = play.purchase(quantity=5)
    assert play.post_control("/voided", {"purchase_token": partial["purchase_token"], "voided_quantity": 2,
                                         "voided_time_ms": now - 1_000}).status_code == 200
    seen, page_token, pages = [], None, 0
    while True:
        query = {"type": 0, "includeQuantityBasedPartialRefund": "true", "maxResults": 2}
        body = _voided(play, **({"token": page_token} if page_token else query)).json()
        seen += body.get("voidedPurchases", [])
        pages += 1
        page_token = body.get("tokenPagination", {}).get("nextPageToken")
        if page_token is None:
            break
    assert pages == 3
    assert [v["purchaseToken"] for v in seen] == tokens + [partial["purchase_token"]]
    assert seen[0]["voidedReason"] == 7 and seen[0]["voidedSource"] == 0 and "voidedQuantity" not in seen[0]
    assert seen[-1]["voidedQuantity"] == 2 and seen[-1]["orderId"] == partial["order_id"]
    without_partial = _voided(play).json()["voidedPurchases"]
    assert partial["purchase_token"] not in [v["purchaseToken"] for v in without_partial]
    assert len(without_partial) == 5
    shown = requests.get(f"{play.control_url}/purchases/{partial['purchase_token']}", timeout=5).json()
    assert shown["refunded_quantity"] == 2
    assert play.get_purchase(partial["purchase_token"]).json()["productLineItem"][0]["productOfferDetails"][
        "refundableQuantity"] == 3


def test_voided_purchases_refuse_a_start_older_than_30_days_and_a_bad_page_token(play):
    too_old = int(time.time() * 1000) - 31 * 24 * 3600 * 1000
    assert _voided(play, startTime=too_old).status_code == 400
    assert _voided(play, token="garbage").status_code == 400
    assert _voided(play).json() == {}


def test_voided_page_size_makes_pages_smaller_than_asked(play):
    now = int(time.time() * 1000)
    for index in range(3):
        purchase = play.purchase()
        assert play.post_control("/voided", {"purchase_token": purchase["purchase_token"],
                                             "voided_time_ms": now - 5_000 + index}).status_code == 200
    play.control(voided_page_size=2)
    first = _voided(play, maxResults=1000).json()
    assert len(first["voidedPurchases"]) == 2
    second = _voided(play, token=first["tokenPagination"]["nextPageToken"]).json()
    assert len(second["voidedPurchases"]) == 1 and "tokenPagination" not in second
    assert len(_voided(play, maxResults=1).json()["voidedPurchases"]) == 1


# ---------- refund reviews ----------

def test_reviewrefund_validates_and_only_the_first_answer_counts(play):
    purchase = play.purchase()
    review = play.post_control("/refund_reviews", {"order_id": purchase["order_id"]}).json()
    path = f"/orders/{purchase['order_id']}:reviewrefund"
    good = {"pendingRefundToken": review["pending_refund_token"], "refundPreference": "DECLINE",
            "sampleContentProvided": False, "consumptionPercentageMilliunits": 100000}
    for bad in ({**good, "pendingRefundToken": "prt-wrong"}, {**good, "refundPreference": "GRANT_FULL"},
                {**good, "consumptionPercentageMilliunits": 100001}, {**good, "sampleContentProvided": "no"}):
        assert play.api("POST", path, json=bad).status_code == 400
    assert play.api("POST", "/orders/GPA.0000-0000-0000-00000:reviewrefund", json=good).status_code == 400
    assert play.api("POST", path, json=good).status_code == 200
    second = play.api("POST", path, json={**good, "refundPreference": "APPROVE"})
    assert second.status_code == 400 and second.json()["error"]["status"] == "FAILED_PRECONDITION"
    [shown] = requests.get(f"{play.control_url}/refund_reviews", timeout=5).json()["reviews"]
    assert [(a["body"]["refundPreference"], a["accepted"]) for a in shown["answers"]] == \
        [("DECLINE", True), ("APPROVE", False)]
    assert play.post_control("/refund_reviews", {"order_id": "GPA.none"}).status_code == 400


# ---------- JWKS and push ----------

def _public_key(jwk):
    numbers = rsa.RSAPublicNumbers(int.from_bytes(_b64url_decode(jwk["e"]), "big"),
                                   int.from_bytes(_b64url_decode(jwk["n"]), "big"))
    return numbers.public_key()


def _verifies(public_key, token):
    head, claims, signature = token.split(".")
    try:
        public_key.verify(_b64url_decode(signature), (head + "." + claims).encode(), padding.PKCS1v15(),
                          hashes.SHA256())
        return True
    except Exception:  # noqa: BLE001 - InvalidSignature: the point of the check
        return False


def test_push_tokens_signed_by_the_trusted_key_check_against_the_jwks_and_the_untrusted_do_not(play):
    answer = requests.get(play.base + "/oauth2/v3/certs", verify=play.ca, timeout=5)
    assert "max-age=3600" in answer.headers["Cache-Control"]
    [jwk] = answer.json()["keys"]
    assert jwk["alg"] == "RS256" and jwk["kty"] == "RSA"
    trusted = play.post_control("/push/sign", {}).json()["token"]
    header, claims = (json.loads(_b64url_decode(part)) for part in trusted.split(".")[:2])
    assert header["kid"] == jwk["kid"] and header["alg"] == "RS256"
    assert claims["iss"] == "https://accounts.google.com" and claims["aud"] == AUDIENCE
    assert claims["email"] == PUSH_ACCOUNT and claims["email_verified"] is True
    assert claims["exp"] - claims["iat"] == 3600
    assert _verifies(_public_key(jwk), trusted)
    untrusted = play.post_control("/push/sign", {"key": "untrusted", "header": {"kid": jwk["kid"]}}).json()["token"]
    assert not _verifies(_public_key(jwk), untrusted)
    plain_untrusted = play.post_control("/push/sign", {"key": "untrusted"}).json()["token"]
    assert json.loads(_b64url_decode(plain_untrusted.split(".")[0]))["kid"] != jwk["kid"]


def test_push_sign_takes_chosen_claims_and_wraps_a_notification(play):
    notification = {"version": "1.0", "packageName": PACKAGE, "eventTimeMillis": "1764400000000",
                    "oneTimeProductNotification": {"version": "1.0", "notificationType": 1,
                                                   "purchaseToken": "t", "sku": PRODUCT}}
    answer = play.post_control("/push/sign", {"claims": {"email_verified": False, "aud": None},
                                              "notification": notification, "message_id": "m-1"}).json()
    claims = json.loads(_b64url_decode(answer["token"].split(".")[1]))
    assert claims["email_verified"] is False and "aud" not in claims
    assert answer["authorization"] == "Bearer " + answer["token"]
    message = answer["body"]["message"]
    assert message["messageId"] == "m-1" and json.loads(base64.b64decode(message["data"])) == notification
    assert answer["body"]["subscription"].startswith("projects/")
    assert play.post_control("/push/sign", {"key": "other"}).status_code == 400


# ---------- faults ----------

@pytest.mark.parametrize("fault, reason", [(401, "authError"), (404, "notFound"), (410, "purchaseTokenNoLongerValid"),
                                           (500, "backendError"), (503, "backendError")])
def test_a_fault_answers_googles_error_for_the_next_calls_then_clears(play, fault, reason):
    token = play.purchase()["purchase_token"]
    play.access_token()
    play.control(fault=fault, fault_next=2)
    for _ in range(2):
        answer = play.get_purchase(token)
        assert answer.status_code == fault and answer.json()["error"]["errors"][0]["reason"] == reason
    assert play.get_purchase(token).status_code == 200
    assert play.control()["fault"] is None


def test_429_carries_retry_after_in_seconds(play):
    token = play.purchase()["purchase_token"]
    play.access_token()
    play.control(fault=429, retry_after_s=7)
    answer = play.get_purchase(token)
    assert answer.status_code == 429 and answer.headers["Retry-After"] == "7"
    assert play.get_purchase(token).status_code == 429  # fault_next 0: until cleared
    play.control(fault=None)
    assert play.get_purchase(token).status_code == 200


def test_faults_hit_the_token_endpoint_only_when_aimed_at_it(play):
    play.control(fault=503)
    assert play.exchange(play.grant()).status_code == 200  # "api" (the default) spares the token endpoint
    play.control(fault_on="token")
    assert play.exchange(play.grant()).status_code == 503


def test_a_dropped_call_gets_no_answer_and_a_slow_one_comes_late(play):
    token = play.purchase()["purchase_token"]
    play.access_token()
    play.control(fault="drop", fault_next=1)
    with pytest.raises(requests.ConnectionError):
        play.get_purchase(token)
    play.control(latency_ms=300)
    started = time.monotonic()
    assert play.get_purchase(token).status_code == 200
    assert time.monotonic() - started >= 0.3


def test_http2_and_bad_control_values(play):
    token = play.purchase()["purchase_token"]
    with httpx.Client(http2=True, verify=ssl.create_default_context(cafile=play.ca)) as client:
        answer = client.get(f"{play.base}/androidpublisher/v3/applications/{PACKAGE}/purchases/productsv2/tokens/"
                            f"{token}", headers={"Authorization": "Bearer " + play.access_token()})
    assert answer.http_version == "HTTP/2" and answer.status_code == 200
    for bad in ({"fault": 418}, {"fault_on": "everything"}, {"access_token_ttl_s": 7200}, {"no_such_key": 1}):
        assert requests.post(f"{play.control_url}/control", json=bad, timeout=5).status_code == 400
    assert play.post_control("/purchases", {"package_name": PACKAGE, "product_id": PRODUCT,
                                            "state": "REFUNDED"}).status_code == 400
