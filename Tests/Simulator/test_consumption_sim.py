"""Self-tests of the simulator's Send Consumption Information (consumption.py): the JWT check, Apple's
validation with its error codes, 202, what it records, and the faults it can be told to answer."""
import time

import pytest
import requests

from test_server_api_sim import ServerAPIClient, certs, sim_api  # noqa: F401 (fixtures)

PATH = "/inApps/v2/transactions/consumption/"
GOOD = {"customerConsented": True, "deliveryStatus": "DELIVERED", "sampleContentProvided": False,
        "consumptionPercentage": 40000, "refundPreference": "GRANT_PRORATED"}


@pytest.fixture(autouse=True)
def fresh(sim_api):  # noqa: F811
    requests.post(f"{sim_api.control_url}/control", json={"reset": True}, timeout=5).raise_for_status()


def put(sim_api, transaction_id, body, environment="production", token=None):  # noqa: F811
    headers = {} if token is False else {"Authorization": "Bearer " + (token or sim_api.token())}
    return requests.put(f"https://127.0.0.1:{sim_api.ports[environment]}{PATH}{transaction_id}", json=body,
                        headers=headers, verify=sim_api.ca, timeout=10)


def settings(sim_api, **changes):  # noqa: F811
    answer = requests.post(f"{sim_api.control_url}/consumption/settings", json=changes, timeout=5)
    assert answer.status_code == 200, answer.text
    return answer.json()


def received(sim_api):  # noqa: F811
    return requests.get(f"{sim_api.control_url}/consumption/received", timeout=5).json()


def test_a_valid_answer_is_202_and_recorded(sim_api):  # noqa: F811
    answer = put(sim_api, "2000000000000001", GOOD, environment="sandbox")
    assert answer.status_code == 202 and answer.content == b""
    [entry] = received(sim_api)
    assert (entry["environment"], entry["transaction_id"], entry["body"], entry["status"]) == (
        "sandbox", "2000000000000001", GOOD, 202)


def test_without_a_good_token_it_is_401(sim_api):  # noqa: F811
    assert put(sim_api, "2000000000000002", GOOD, token=False).status_code == 401
    assert put(sim_api, "2000000000000002", GOOD, token=sim_api.token(bid="com.example.other")).status_code == 401


@pytest.mark.parametrize("change, error_code", [
    ({"customerConsented": False}, 4000035),
    ({"customerConsented": None}, 4000035),
    ({"deliveryStatus": "NOT_DELIVERED"}, 4000036),
    ({"sampleContentProvided": "no"}, 4000041),
    ({"refundPreference": "MAYBE"}, 4000044),
    ({"refundPreference": "GRANT_PRORATED", "consumptionPercentage": 0}, 4000044),
    ({"consumptionPercentage": 100001}, 4000181),
    ({"consumptionPercentage": -1}, 4000181),
    ({"consumptionPercentage": 40.5}, 4000181),
    ({"deliveryStatus": "UNDELIVERED_OTHER", "refundPreference": "GRANT_FULL"}, 4000183),
])
def test_apples_validation(sim_api, change, error_code):  # noqa: F811
    answer = put(sim_api, "2000000000000003", {**GOOD, **change})
    assert answer.status_code == 400 and answer.json()["errorCode"] == error_code, answer.text
    assert received(sim_api)[0]["status"] == 400


def test_no_consumption_for_an_auto_renewable_subscription(sim_api):  # noqa: F811
    settings(sim_api, auto_renewable=["2000000000000004"])
    answer = put(sim_api, "2000000000000004", GOOD)
    assert answer.status_code == 400 and answer.json()["errorCode"] == 4000182
    without = {key: value for key, value in GOOD.items() if key != "consumptionPercentage"}
    assert put(sim_api, "2000000000000004", {**without, "refundPreference": "DECLINE"}).status_code == 202


def test_told_faults(sim_api):  # noqa: F811
    settings(sim_api, fault=429, fail_next=1, retry_after_ms=5000)
    before = int(time.time() * 1000)
    limited = put(sim_api, "2000000000000005", GOOD)
    assert limited.status_code == 429 and int(limited.headers["Retry-After"]) >= before + 5000
    assert put(sim_api, "2000000000000005", GOOD).status_code == 202
    settings(sim_api, fault=500, fail_next=0)
    assert [put(sim_api, "2000000000000005", GOOD).status_code for _ in range(2)] == [500, 500]
    settings(sim_api, fault=None, latency_ms=700)
    started = time.monotonic()
    assert put(sim_api, "2000000000000005", GOOD).status_code == 202
    assert time.monotonic() - started >= 0.7
    assert [entry["status"] for entry in received(sim_api)] == [429, 202, 500, 500, 202]
    assert requests.post(f"{sim_api.control_url}/consumption/settings", json={"fault": 418}, timeout=5).status_code == 400
