"""Self-tests of the simulator's Finish Transaction (finish_api.py): the JWT checks of the other Server
API endpoints, 200 on success, each call recorded for the control port, and the faults 404, 429 and 500."""
import time

import pytest
import requests
from cryptography.hazmat.primitives.asymmetric import ec

from test_server_api_sim import certs, fresh_server_api, sim_api  # noqa: F401 (fixtures)


def finish(sim_api, environment, transaction_id, token=None, method="POST"):
    headers = {} if token is False else {"Authorization": "Bearer " + (token or sim_api.token())}
    return requests.request(method, f"https://127.0.0.1:{sim_api.ports[environment]}"
                                    f"/inApps/v1/transactions/{transaction_id}/finish",
                            headers=headers, verify=sim_api.ca, timeout=10)


def calls(sim_api):
    answer = requests.get(f"{sim_api.control_url}/finish/calls", timeout=5)
    assert answer.status_code == 200, answer.text
    return [(c["transaction_id"], c["environment"], c["status"]) for c in answer.json()]


def fault(sim_api, **changes):
    return requests.post(f"{sim_api.control_url}/finish/control", json=changes, timeout=5)


def test_a_finish_with_a_good_token_is_200_and_recorded_per_environment(sim_api):
    assert finish(sim_api, "production", "2000000000000001").status_code == 200
    assert finish(sim_api, "sandbox", "2000000000000002").status_code == 200
    assert calls(sim_api) == [("2000000000000001", "production", 200), ("2000000000000002", "sandbox", 200)]


@pytest.mark.parametrize("token", [False, "not.a.jwt", "key"])
def test_a_finish_without_a_good_token_is_401_and_recorded(sim_api, token):
    if token == "key":
        token = sim_api.token(key=ec.generate_private_key(ec.SECP256R1()))
    answer = finish(sim_api, "production", "2000000000000003", token=token)
    assert answer.status_code == 401
    assert calls(sim_api) == [("2000000000000003", "production", 401)]


def test_other_methods_and_ids_are_refused(sim_api):
    assert finish(sim_api, "production", "2000000000000004", method="GET").status_code == 405
    bad_id = finish(sim_api, "production", "abc-def")
    assert bad_id.status_code == 404 and bad_id.json()["errorCode"] == 4040010


def test_faults_hit_the_next_calls_then_clear(sim_api):
    assert fault(sim_api, fault=500, fail_next=2).status_code == 200
    statuses = [finish(sim_api, "production", "2000000000000005").status_code for _ in range(3)]
    assert statuses == [500, 500, 200]
    assert fault(sim_api, fault=404, fail_next=1).status_code == 200
    assert finish(sim_api, "sandbox", "2000000000000006").json()["errorCode"] == 4040010


def test_a_429_carries_retry_after_as_a_unix_time_in_ms(sim_api):
    assert fault(sim_api, fault=429, fail_next=1, retry_after_ms=5000).status_code == 200
    before = int(time.time() * 1000)
    answer = finish(sim_api, "production", "2000000000000007")
    assert answer.status_code == 429
    assert before + 5000 <= int(answer.headers["Retry-After"]) <= int(time.time() * 1000) + 5000


@pytest.mark.parametrize("changes", [{"fault": 503}, {"fault": True}, {"fail_next": -1}, {"retry_after_ms": "1"},
                                     {"other": 1}])
def test_bad_control_values_are_400_and_change_nothing(sim_api, changes):
    answer = fault(sim_api, **changes)
    assert answer.status_code == 400, answer.text
    assert finish(sim_api, "production", "2000000000000008").status_code == 200


def test_a_reset_forgets_the_calls_and_the_fault(sim_api):
    fault(sim_api, fault=500, fail_next=0)
    finish(sim_api, "production", "2000000000000009")
    requests.post(f"{sim_api.control_url}/control", json={"reset": True}, timeout=5).raise_for_status()
    assert calls(sim_api) == []
    assert finish(sim_api, "production", "2000000000000009").status_code == 200
