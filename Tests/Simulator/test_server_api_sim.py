"""Self-tests of the simulator's App Store Server API (server_api.py): the JWT checks, registered
transactions and orders signed with the test PKI, 4040010, and the faults."""
import base64
import json
import ssl
import subprocess
import time
import uuid

import httpx
import pytest
import requests
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.asymmetric.utils import decode_dss_signature

from test_simulator import MAKE_CERTS, start_simulator

KEY_ID, ISSUER_ID, BUNDLE_ID = "SIMKEY0001", "57246542-96fe-1a63-e053-0824d011072a", "com.example.game"


@pytest.fixture(scope="module")
def certs(tmp_path_factory):
    directory = tmp_path_factory.mktemp("certs")
    subprocess.run([str(MAKE_CERTS), str(directory)], check=True)
    return directory


@pytest.fixture(scope="module")
def sim_api(certs):
    process, ports = start_simulator(certs)  # the key from CERTS/appstore-key.p8, the default ids
    yield ServerAPIClient(certs, ports)
    process.terminate()
    process.wait(timeout=10)


@pytest.fixture(autouse=True)
def fresh_server_api(sim_api):
    requests.post(f"{sim_api.control_url}/control", json={"reset": True}, timeout=5).raise_for_status()


def _b64url(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def _payload(jws):
    part = jws.split(".")[1]
    return json.loads(base64.urlsafe_b64decode(part + "=" * (-len(part) % 4)))


class ServerAPIClient:
    def __init__(self, certs, ports):
        self.ca = str(certs / "ca.pem")
        with open(certs / "appstore-key.p8", "rb") as source:
            self.key = serialization.load_pem_private_key(source.read(), password=None)
        self.ports = {"production": ports[0], "sandbox": ports[1]}
        self.control_url = f"http://127.0.0.1:{ports[2]}"

    def token(self, key=None, header=None, **claims):
        now = int(time.time())
        header = {"alg": "ES256", "kid": KEY_ID, "typ": "JWT", **(header or {})}
        claims = {"iss": ISSUER_ID, "iat": now, "exp": now + 1200, "aud": "appstoreconnect-v1", "bid": BUNDLE_ID,
                  **claims}
        signing_input = _b64url(json.dumps(header).encode()) + "." + _b64url(json.dumps(claims).encode())
        r, s = decode_dss_signature((key or self.key).sign(signing_input.encode(), ec.ECDSA(hashes.SHA256())))
        return signing_input + "." + _b64url(r.to_bytes(32, "big") + s.to_bytes(32, "big"))

    def get(self, environment, path, token=None):
        headers = {} if token is False else {"Authorization": "Bearer " + (token or self.token())}
        return requests.get(f"https://127.0.0.1:{self.ports[environment]}{path}", headers=headers,
                            verify=self.ca, timeout=10)

    def register(self, environments=("Production",), product_id="com.example.game.gems", **fields):
        answer = requests.post(f"{self.control_url}/server_api/transactions", timeout=5,
                               json={"product_id": product_id, "environments": list(environments), **fields})
        assert answer.status_code == 200, answer.text
        return answer.json()["transaction_id"]

    def control(self, **settings):
        answer = requests.post(f"{self.control_url}/control", json=settings, timeout=5)
        assert answer.status_code == 200, answer.text
        return answer.json()


def test_a_registered_transaction_is_answered_signed_in_its_environments(sim_api):
    tid = sim_api.register(environments=("Sandbox",), app_account_token=str(uuid.uuid4()))
    missing = sim_api.get("production", f"/inApps/v1/transactions/{tid}")
    assert missing.status_code == 404 and missing.json()["errorCode"] == 4040010
    found = sim_api.get("sandbox", f"/inApps/v1/transactions/{tid}")
    assert found.status_code == 200, found.text
    jws = found.json()["signedTransactionInfo"]
    header = json.loads(base64.urlsafe_b64decode(jws.split(".")[0] + "=="))
    assert header["alg"] == "ES256" and len(header["x5c"]) == 3
    payload = _payload(jws)
    assert payload["transactionId"] == tid and payload["environment"] == "Sandbox"
    assert payload["productId"] == "com.example.game.gems"


def test_lookup_answers_registered_orders_in_production_only(sim_api):
    tids = [sim_api.register(), sim_api.register(product_id="com.example.game.coins")]
    answer = requests.post(f"{sim_api.control_url}/server_api/orders", json={"order_id": "MK5TTTVWJH",
                                                                         "transaction_ids": tids}, timeout=5)
    assert answer.status_code == 200, answer.text
    found = sim_api.get("production", "/inApps/v1/lookup/MK5TTTVWJH").json()
    assert found["status"] == 0 and [_payload(j)["transactionId"] for j in found["signedTransactions"]] == tids
    assert sim_api.get("production", "/inApps/v1/lookup/UNKNOWN1").json() == {"status": 1}
    assert sim_api.get("sandbox", "/inApps/v1/lookup/MK5TTTVWJH").status_code == 404
    refused = requests.post(f"{sim_api.control_url}/server_api/orders",
                            json={"order_id": "X", "transaction_ids": ["999"]}, timeout=5)
    assert refused.status_code == 400 and "unregistered" in refused.text


@pytest.mark.parametrize("change", [
    {"header": {"kid": "OTHERKEY01"}}, {"header": {"alg": "HS256"}}, {"header": {"typ": "JOSE"}},
    {"iss": "someone-else"}, {"aud": "appstoreconnect-v2"}, {"bid": "com.example.other"},
    {"iat": int(time.time()), "exp": int(time.time()) + 3601}, {"iat": int(time.time()) - 7200,
                                                                "exp": int(time.time()) - 10},
    {"key": ec.generate_private_key(ec.SECP256R1())},
])
def test_a_bad_token_is_401(sim_api, change):
    tid = sim_api.register()
    assert sim_api.get("production", f"/inApps/v1/transactions/{tid}").status_code == 200
    assert sim_api.get("production", f"/inApps/v1/transactions/{tid}", token=sim_api.token(**change)).status_code == 401


def test_no_token_or_a_malformed_one_is_401(sim_api):
    tid = sim_api.register()
    assert sim_api.get("production", f"/inApps/v1/transactions/{tid}", token=False).status_code == 401
    assert sim_api.get("production", f"/inApps/v1/transactions/{tid}", token="a.b").status_code == 401
    assert sim_api.get("production", f"/inApps/v1/transactions/{tid}", token="x.y.z").status_code == 401


def test_http2_requests_carry_the_token_too(sim_api):
    tid = sim_api.register()
    with httpx.Client(http2=True, verify=ssl.create_default_context(cafile=sim_api.ca)) as client:
        answer = client.get(f"https://127.0.0.1:{sim_api.ports['production']}/inApps/v1/transactions/{tid}",
                            headers={"Authorization": "Bearer " + sim_api.token()})
    assert answer.http_version == "HTTP/2" and answer.status_code == 200, answer.text


def test_a_429_carries_retry_after_as_a_unix_time_in_ms_and_fail_next_clears_it(sim_api):
    tid = sim_api.register()
    sim_api.control(api_fault=429, api_fail_next=1, api_retry_after_ms=1500)
    before = int(time.time() * 1000)
    limited = sim_api.get("production", f"/inApps/v1/transactions/{tid}")
    assert limited.status_code == 429
    retry_after = int(limited.headers["Retry-After"])
    assert before + 1500 <= retry_after <= int(time.time() * 1000) + 1500
    assert sim_api.get("production", f"/inApps/v1/transactions/{tid}").status_code == 200
    requests_seen = requests.get(f"{sim_api.control_url}/stats", timeout=5).json()["server_api"]["requests"]
    assert [r["status"] for r in requests_seen] == [429, 200]


def test_a_500_fault_hits_only_the_environment_asked(sim_api):
    tid = sim_api.register(environments=("Production", "Sandbox"))
    sim_api.control(api_fault=500, api_fault_env="sandbox")
    assert sim_api.get("sandbox", f"/inApps/v1/transactions/{tid}").status_code == 500
    assert sim_api.get("production", f"/inApps/v1/transactions/{tid}").status_code == 200
    assert sim_api.control(api_fault=None)["api_fault"] is None
    assert sim_api.get("sandbox", f"/inApps/v1/transactions/{tid}").status_code == 200


def test_bad_control_values_are_refused(sim_api):
    for settings in ({"api_fault": 418}, {"api_fail_next": -1}, {"api_fault_env": "mars"}):
        answer = requests.post(f"{sim_api.control_url}/control", json=settings, timeout=5)
        assert answer.status_code == 400, settings


def test_notification_history_is_paged_and_checks_the_token(sim_api):
    """Notifications sent to nowhere (notifications.py) are served by Get Notification History."""
    sent = []
    for notification_type in ("ONE_TIME_CHARGE", "REFUND", "TEST"):
        answer = requests.post(f"{sim_api.control_url}/notifications/send", timeout=5, json={
            "url": "http://127.0.0.1:9/", "notification_type": notification_type, "retry_intervals_s": [],
            "transaction": None if notification_type == "TEST" else {"product_id": "com.example.game.gems"}})
        assert answer.status_code == 200, answer.text
        sent.append(answer.json()["notification_uuid"])
    requests.post(f"{sim_api.control_url}/notifications/settings", json={"page_size": 2}, timeout=5).raise_for_status()
    url = f"https://127.0.0.1:{sim_api.ports['production']}/inApps/v1/notifications/history"
    window = {"startDate": int(time.time() * 1000) - 60_000, "endDate": int(time.time() * 1000) + 60_000}

    def page(token=None, bearer=None):
        return requests.post(url + (f"?paginationToken={token}" if token else ""), json=window, verify=sim_api.ca,
                             headers={"Authorization": "Bearer " + (bearer or sim_api.token())}, timeout=10)

    first = page().json()
    assert first["hasMore"] is True and len(first["notificationHistory"]) == 2
    second = page(first["paginationToken"]).json()
    assert second["hasMore"] is False and "paginationToken" not in second
    found = [_payload(item["signedPayload"])["notificationUUID"]
             for item in first["notificationHistory"] + second["notificationHistory"]]
    assert found == sent
    assert page(bearer=sim_api.token(iss="someone-else")).status_code == 401
    sandbox = requests.post(url.replace(str(sim_api.ports["production"]), str(sim_api.ports["sandbox"])), json=window,
                            verify=sim_api.ca, headers={"Authorization": "Bearer " + sim_api.token()}, timeout=10)
    assert sandbox.json() == {"notificationHistory": [], "hasMore": False}
