"""Self-tests of the simulator's subscription endpoints (subscription_api.py): Get All Subscription Statuses of
the chains made on the control port, signed with the test PKI; Extend a Subscription Renewal Date with Apple's
validation (1..90 days, a reason 0..3, a request identifier, twice in 365 days); the mass form and its status."""
import uuid

import pytest
import requests

from test_server_api_sim import ServerAPIClient, _payload, certs, sim_api  # noqa: F401 (fixtures)

DAY_MS = 86_400_000


@pytest.fixture(autouse=True)
def fresh(sim_api):  # noqa: F811
    requests.post(f"{sim_api.control_url}/control", json={"reset": True}, timeout=5).raise_for_status()


def chain(sim_api, **fields):  # noqa: F811
    answer = requests.post(f"{sim_api.control_url}/subscriptions/chains", json={"product_id": "vip_monthly", **fields},
                           timeout=5)
    assert answer.status_code == 200, answer.text
    return answer.json()


def call(sim_api, method, path, body=None, environment="production"):  # noqa: F811
    return requests.request(method, f"https://127.0.0.1:{sim_api.ports[environment]}{path}", json=body,
                            headers={"Authorization": "Bearer " + sim_api.token()}, verify=sim_api.ca, timeout=10)


def extension(days=3, reason=3, identifier=None):
    return {"extendByDays": days, "extendReasonCode": reason, "requestIdentifier": identifier or str(uuid.uuid4())}


def test_statuses_list_every_chain_of_the_customer_signed(sim_api):  # noqa: F811
    first = chain(sim_api, customer="player-1", transaction_id="2000000000000102",
                  original_transaction_id="2000000000000101")
    chain(sim_api, customer="player-1", original_transaction_id="2000000000000201", product_id="vip_yearly", status=4)
    chain(sim_api, customer="someone-else", original_transaction_id="2000000000000301")
    answer = sim_api.get("production", "/inApps/v1/subscriptions/2000000000000102")
    assert answer.status_code == 200, answer.text
    body = answer.json()
    assert body["environment"] == "Production" and body["bundleId"] == "com.example.game"
    items = body["data"][0]["lastTransactions"]
    assert sorted((i["originalTransactionId"], i["status"]) for i in items) == [
        ("2000000000000101", 1), ("2000000000000201", 4)]
    by_chain = {i["originalTransactionId"]: i for i in items}
    period = _payload(by_chain["2000000000000101"]["signedTransactionInfo"])
    assert (period["transactionId"], period["expiresDate"]) == ("2000000000000102", first["expires_ms"])
    grace = _payload(by_chain["2000000000000201"]["signedRenewalInfo"])
    assert grace["isInBillingRetryPeriod"] is True and grace["gracePeriodExpiresDate"] > period["expiresDate"]
    filtered = sim_api.get("production", "/inApps/v1/subscriptions/2000000000000101?status=4").json()
    assert [i["status"] for i in filtered["data"][0]["lastTransactions"]] == [4]


def test_statuses_of_an_unknown_transaction_or_environment_are_4040010(sim_api):  # noqa: F811
    chain(sim_api, original_transaction_id="2000000000000401")
    for environment, path in (("production", "/inApps/v1/subscriptions/999"),
                              ("sandbox", "/inApps/v1/subscriptions/2000000000000401")):
        answer = sim_api.get(environment, path)
        assert answer.status_code == 404 and answer.json()["errorCode"] == 4040010


def test_an_extension_moves_the_expiry_a_status_read_shows(sim_api):  # noqa: F811
    made = chain(sim_api, original_transaction_id="2000000000000501")
    answer = call(sim_api, "PUT", "/inApps/v1/subscriptions/extend/2000000000000501", extension(days=7, reason=3))
    assert answer.status_code == 200, answer.text
    assert answer.json()["success"] is True and answer.json()["effectiveDate"] == made["expires_ms"] + 7 * DAY_MS
    status = sim_api.get("production", "/inApps/v1/subscriptions/2000000000000501").json()
    period = _payload(status["data"][0]["lastTransactions"][0]["signedTransactionInfo"])
    assert period["expiresDate"] == made["expires_ms"] + 7 * DAY_MS
    info = _payload(sim_api.get("production", "/inApps/v1/transactions/2000000000000501").json()["signedTransactionInfo"])
    assert info["expiresDate"] == made["expires_ms"] + 7 * DAY_MS


@pytest.mark.parametrize("body, code", [
    (extension(days=91), 4000009), (extension(days=0), 4000009), (extension(days="3"), 4000009),
    (extension(reason=4), 4000010), (extension(reason=True), 4000010),
    ({"extendByDays": 3, "extendReasonCode": 1}, 4000011), (extension(identifier="x" * 129), 4000011),
])
def test_a_bad_extension_is_400_with_apples_code_and_extends_nothing(sim_api, body, code):  # noqa: F811
    made = chain(sim_api, original_transaction_id="2000000000000601")
    answer = call(sim_api, "PUT", "/inApps/v1/subscriptions/extend/2000000000000601", body)
    assert answer.status_code == 400 and answer.json()["errorCode"] == code, answer.text
    shown = requests.get(f"{sim_api.control_url}/subscriptions/chains", timeout=5).json()["chains"][0]
    assert shown["expires_ms"] == made["expires_ms"] and shown["extensions"] == []


def test_twice_a_year_then_4030005_and_an_inactive_chain_is_4030004(sim_api):  # noqa: F811
    chain(sim_api, original_transaction_id="2000000000000701")
    path = "/inApps/v1/subscriptions/extend/2000000000000701"
    repeated = extension()
    assert call(sim_api, "PUT", path, repeated).status_code == 200
    again = call(sim_api, "PUT", path, repeated)  # the same request identifier: answered again, not counted
    assert again.status_code == 200
    assert call(sim_api, "PUT", path, extension()).status_code == 200
    third = call(sim_api, "PUT", path, extension())
    assert third.status_code == 403 and third.json()["errorCode"] == 4030005
    chain(sim_api, original_transaction_id="2000000000000702", status=2)
    expired = call(sim_api, "PUT", "/inApps/v1/subscriptions/extend/2000000000000702", extension())
    assert expired.status_code == 403 and expired.json()["errorCode"] == 4030004
    unknown = call(sim_api, "PUT", "/inApps/v1/subscriptions/extend/2000000000000702", extension(),
                   environment="sandbox")
    assert unknown.status_code == 404 and unknown.json()["errorCode"] == 4040005


def test_a_mass_extension_completes_after_a_poll_and_extends_the_products_active_chains(sim_api):  # noqa: F811
    active = chain(sim_api, original_transaction_id="2000000000000801")
    expired = chain(sim_api, original_transaction_id="2000000000000802", status=2)
    other = chain(sim_api, original_transaction_id="2000000000000803", product_id="vip_yearly")
    body = {**extension(days=5), "productId": "vip_monthly"}
    answer = call(sim_api, "POST", "/inApps/v1/subscriptions/extend/mass", body)
    assert answer.status_code == 200 and answer.json() == {"requestIdentifier": body["requestIdentifier"]}
    status_path = f"/inApps/v1/subscriptions/extend/mass/vip_monthly/{body['requestIdentifier']}"
    assert call(sim_api, "GET", status_path).json() == {"requestIdentifier": body["requestIdentifier"],
                                                        "complete": False}
    done = call(sim_api, "GET", status_path).json()
    assert done["complete"] is True and (done["succeededCount"], done["failedCount"]) == (1, 0)
    shown = {c["original_transaction_id"]: c["expires_ms"]
             for c in requests.get(f"{sim_api.control_url}/subscriptions/chains", timeout=5).json()["chains"]}
    assert shown == {"2000000000000801": active["expires_ms"] + 5 * DAY_MS,
                     "2000000000000802": expired["expires_ms"], "2000000000000803": other["expires_ms"]}
    unknown = call(sim_api, "GET", "/inApps/v1/subscriptions/extend/mass/vip_monthly/nope")
    assert unknown.status_code == 404 and unknown.json()["errorCode"] == 4040009
    no_product = call(sim_api, "POST", "/inApps/v1/subscriptions/extend/mass", extension())
    assert no_product.status_code == 400 and no_product.json()["errorCode"] == 4000023


def test_a_bad_token_is_401_and_every_request_is_recorded(sim_api):  # noqa: F811
    chain(sim_api, original_transaction_id="2000000000000901")
    refused = sim_api.get("production", "/inApps/v1/subscriptions/2000000000000901", token=False)
    assert refused.status_code == 401
    call(sim_api, "PUT", "/inApps/v1/subscriptions/extend/2000000000000901", extension(days=2, reason=1))
    received = requests.get(f"{sim_api.control_url}/subscriptions/received", timeout=5).json()["received"]
    assert [(r["method"], r["status"], r["body"]["extendByDays"]) for r in received] == [("PUT", 200, 2)]


@pytest.mark.parametrize("fields, message", [
    ({"status": 6}, "status is"), ({"colour": "red"}, "unknown chain field"), ({"expires_ms": "soon"}, "expires_ms"),
    ({"environment": "Xcode"}, "environment is"),
])
def test_a_bad_chain_is_400(sim_api, fields, message):  # noqa: F811
    answer = requests.post(f"{sim_api.control_url}/subscriptions/chains", json={"product_id": "vip", **fields},
                           timeout=5)
    assert answer.status_code == 400 and message in answer.json()["error"], answer.text
