"""The App Store Server API client (Get Transaction Info, Look Up Order ID) through `iapctl lookup` and
`iapctl transaction-info`, against the simulator's Server API: the JWT, 4040010 -> the sandbox, 429 with
Retry-After, 5xx retries, 401 as a configuration error, signed transactions verified before use."""
import os
import subprocess
import time
import uuid

import requests

from conftest import IAPCTL, REPO
from support import PAY_6, new_transaction_id, new_user_id

SIMULATOR_SIGNING_ROOT = "signing-root.pem"
APPSTORE_VARIABLES = ("IAP_APPSTORE_KEY_ID", "IAP_APPSTORE_ISSUER_ID", "IAP_APPSTORE_PRIVATE_KEY_FILE")


def certs_dir():
    return os.path.join(os.environ["IAP_RUN"], "certs")


def run_iapctl(*arguments, **env_changes):
    """(exit status, stdout, stderr, seconds) of the release iapctl with the stack's environment, the
    simulator's signing root trusted, and `env_changes` (None removes a variable)."""
    env = dict(os.environ, IAP_APPLE_ROOT_CA_FILE=os.path.join(certs_dir(), SIMULATOR_SIGNING_ROOT))
    for name, value in env_changes.items():
        if value is None:
            env.pop(name, None)
        else:
            env[name] = value
    started = time.monotonic()
    result = subprocess.run([str(IAPCTL), *arguments], cwd=REPO, env=env, capture_output=True, text=True, timeout=60)
    return result.returncode, result.stdout, result.stderr, time.monotonic() - started


def register_transaction(simulator, product_id=PAY_6, environments=("Production",), **fields):
    response = requests.post(simulator.base_url + "/server_api/transactions", timeout=10,
                             json={"product_id": product_id, "environments": list(environments), **fields})
    assert response.status_code == 200, response.text
    return response.json()


def register_order(simulator, transaction_ids):
    order_id = "E2E" + uuid.uuid4().hex[:10].upper()
    response = requests.post(simulator.base_url + "/server_api/orders", timeout=10,
                             json={"order_id": order_id, "transaction_ids": list(transaction_ids)})
    assert response.status_code == 200, response.text
    return order_id


def server_api_requests(simulator):
    return simulator.stats()["server_api"]["requests"]


def test_lookup_prints_each_transaction_with_its_state_here(api, db, receipts, simulator):
    delivered_id = new_transaction_id()
    bought = receipts.purchase(PAY_6, transaction_id=delivered_id)
    answer = api.verify(receipts.app_receipt([bought]), user_id=new_user_id()).json()
    assert answer["status"] == "delivered", answer
    first = register_transaction(simulator, transaction_id=delivered_id)
    second = register_transaction(simulator, product_id="zydj.product.pay_30")
    order_id = register_order(simulator, [first["transaction_id"], second["transaction_id"]])

    status, out, err, _ = run_iapctl("lookup", order_id)

    assert status == 0, err
    lines = [line.split("\t") for line in out.strip().splitlines()]
    assert len(lines) == 2, out
    assert lines[0][0] == delivered_id and lines[0][1] == PAY_6 and lines[0][3] == "delivered", lines[0]
    assert lines[1][0] == second["transaction_id"] and lines[1][1] == "zydj.product.pay_30", lines[1]
    assert lines[1][3] == "not here", lines[1]
    assert lines[1][2] == time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(second["purchase_ms"] // 1000)), lines[1]
    assert [r["path"] for r in server_api_requests(simulator)] == [f"/inApps/v1/lookup/{order_id}"]


def test_an_order_apple_does_not_know_exits_1(simulator):
    status, out, err, _ = run_iapctl("lookup", "NOSUCHORDER1")
    assert status == 1 and out == "", (status, out, err)
    assert "Apple does not know the order id NOSUCHORDER1" in err, err
    # Look Up Order ID is production only: the sandbox is never asked.
    assert [r["environment"] for r in server_api_requests(simulator)] == ["production"]


def test_a_429_is_waited_out_until_its_retry_after(simulator):
    order_id = register_order(simulator, [register_transaction(simulator)["transaction_id"]])
    simulator.control(api_fault=429, api_fail_next=1, api_retry_after_ms=700)

    status, out, err, seconds = run_iapctl("lookup", order_id)

    assert status == 0 and len(out.strip().splitlines()) == 1, (status, out, err)
    calls = server_api_requests(simulator)
    assert [c["status"] for c in calls] == [429, 200], calls
    waited_ms = calls[1]["at_ms"] - calls[0]["at_ms"]
    assert 690 <= waited_ms < 1500, f"the second call came {waited_ms} ms after the 429 (Retry-After: 700 ms)"
    assert seconds >= 0.69


def test_a_429_whose_retry_after_passes_the_budget_ends_at_once(simulator):
    order_id = register_order(simulator, [register_transaction(simulator)["transaction_id"]])
    simulator.control(api_fault=429, api_retry_after_ms=60_000)

    status, _, err, seconds = run_iapctl("lookup", order_id)

    assert status == 1 and "did not answer in time" in err, (status, err)
    assert [c["status"] for c in server_api_requests(simulator)] == [429]
    budget_s = int(os.environ["IAP_APPLE_TIMEOUT_MS"]) / 1000
    assert seconds < budget_s, f"iapctl took {seconds:.2f} s: it waited instead of ending"


def test_a_500_is_retried_and_a_lasting_one_is_bounded(simulator):
    order_id = register_order(simulator, [register_transaction(simulator)["transaction_id"]])
    simulator.control(api_fault=500, api_fail_next=1)
    status, out, err, _ = run_iapctl("lookup", order_id)
    assert status == 0 and out.strip(), err
    assert [c["status"] for c in server_api_requests(simulator)] == [500, 200]

    simulator.reset_stats()
    simulator.control(api_fault=500, api_fail_next=0)
    status, _, err, seconds = run_iapctl("lookup", order_id)
    assert status == 1 and "did not answer in time" in err, err
    calls = server_api_requests(simulator)
    assert 2 <= len(calls) <= 3 and {c["status"] for c in calls} == {500}, calls
    assert seconds < int(os.environ["IAP_APPLE_TIMEOUT_MS"]) / 1000 + 1


def test_a_transaction_production_does_not_know_is_fetched_from_the_sandbox(simulator):
    sandbox_only = register_transaction(simulator, environments=("Sandbox",))

    status, out, err, _ = run_iapctl("transaction-info", sandbox_only["transaction_id"])

    assert status == 0, err
    assert out.strip().split("\t") == [
        sandbox_only["transaction_id"], PAY_6,
        time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(sandbox_only["purchase_ms"] // 1000)), "Sandbox"], out
    calls = server_api_requests(simulator)
    assert [(c["environment"], c["status"]) for c in calls] == [("production", 404), ("sandbox", 200)], calls


def test_a_production_transaction_is_not_asked_of_the_sandbox(simulator):
    known = register_transaction(simulator, environments=("Production", "Sandbox"))
    status, out, err, _ = run_iapctl("transaction-info", known["transaction_id"])
    assert status == 0 and out.strip().endswith("\tProduction"), (out, err)
    assert [c["environment"] for c in server_api_requests(simulator)] == ["production"]


def test_a_transaction_neither_environment_knows_exits_1(simulator):
    status, _, err, _ = run_iapctl("transaction-info", new_transaction_id())
    assert status == 1 and "neither production nor the sandbox knows" in err, err
    assert [(c["environment"], c["status"]) for c in server_api_requests(simulator)] == [
        ("production", 404), ("sandbox", 404)]


def test_a_bad_token_is_refused_and_logged_as_a_configuration_error(simulator, tmp_path):
    order_id = register_order(simulator, [register_transaction(simulator)["transaction_id"]])
    other_key = tmp_path / "other-key.p8"
    subprocess.run(["openssl", "genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256",
                    "-out", str(other_key)], check=True, capture_output=True)
    for change in ({"IAP_APPSTORE_KEY_ID": "WRONGKEY01"}, {"IAP_APPSTORE_ISSUER_ID": str(uuid.uuid4())},
                   {"IAP_APPSTORE_PRIVATE_KEY_FILE": str(other_key)}, {"IAP_BUNDLE_IDS": "com.example.other"}):
        simulator.reset_stats()
        status, out, err, _ = run_iapctl("lookup", order_id, **change)
        assert status == 1 and out == "", (change, status, out, err)
        assert err.count("configuration error: the App Store Server API answered 401") == 1, (change, err)
        assert "401" in err.splitlines()[-1], (change, err)
        assert [c["status"] for c in server_api_requests(simulator)] == [401], (change, "401 is not retried")
    # The key itself never reaches a log.
    with open(os.path.join(certs_dir(), "appstore-key.p8")) as key_file:
        key_body = key_file.read().split("-----")[2].strip().splitlines()[0]
    assert key_body not in err


def test_without_configuration_lookup_refuses_clearly(simulator):
    status, out, err, _ = run_iapctl("lookup", "MK5TTTVWJH", **{name: None for name in APPSTORE_VARIABLES})
    assert status != 0 and out == "", (status, out, err)
    assert "App Store Server API is not configured" in err and "IAP_APPSTORE_KEY_ID" in err, err
    assert server_api_requests(simulator) == []


def test_a_bad_configuration_value_is_named(simulator):
    status, _, err, _ = run_iapctl("lookup", "MK5TTTVWJH", IAP_APPSTORE_KEY_ID=None)
    assert status != 0 and "IAP_APPSTORE_KEY_ID" in err and "is required" in err, err
    status, _, err, _ = run_iapctl("lookup", "MK5TTTVWJH", IAP_APPSTORE_PRIVATE_KEY_FILE="/nonexistent/key.p8")
    assert status != 0 and "IAP_APPSTORE_PRIVATE_KEY_FILE" in err, err
    status, _, err, _ = run_iapctl("lookup", "MK5TTTVWJH", IAP_APPSTORE_API_URL="http://127.0.0.1:1")
    assert status != 0 and "IAP_APPSTORE_API_URL" in err and "https" in err, err
    assert server_api_requests(simulator) == []


def test_a_signed_transaction_that_does_not_chain_to_our_roots_is_refused(simulator):
    order_id = register_order(simulator, [register_transaction(simulator)["transaction_id"]])
    status, out, err, _ = run_iapctl(
        "lookup", order_id, IAP_APPLE_ROOT_CA_FILE=os.path.join(certs_dir(), "signing-untrusted-root.pem"))
    assert status == 1 and out == "" and "does not verify" in err, (status, out, err)


def test_an_untrusted_certificate_is_never_talked_to(simulator):
    order_id = register_order(simulator, [register_transaction(simulator)["transaction_id"]])
    simulator.control(tls="untrusted")
    status, out, err, _ = run_iapctl("lookup", order_id)
    assert status == 1 and out == "" and "did not answer in time" in err, (status, out, err)
    assert server_api_requests(simulator) == []


def test_iap_fcgi_refuses_to_start_with_a_bad_key_naming_the_variable(tmp_path):
    not_a_key = os.path.join(certs_dir(), "ca.pem")
    for key_file, problem in ((str(tmp_path / "missing.p8"), "cannot read"), (not_a_key, "not a P-256 private key")):
        env = {"PATH": os.environ["PATH"], "IAP_LISTEN": str(tmp_path / "never.sock"),
               "IAP_BUNDLE_IDS": "com.example.game", "IAP_APPSTORE_KEY_ID": "SIMKEY0001",
               "IAP_APPSTORE_ISSUER_ID": "issuer", "IAP_APPSTORE_PRIVATE_KEY_FILE": key_file}
        result = subprocess.run([str(REPO / ".build" / "release" / "iap-fcgi")], env=env, capture_output=True,
                                text=True, timeout=30)
        assert result.returncode != 0, result.stderr
        assert f"IAP_APPSTORE_PRIVATE_KEY_FILE: {key_file}" in result.stderr or \
            f"IAP_APPSTORE_PRIVATE_KEY_FILE: {problem}" in result.stderr, result.stderr
        assert problem in result.stderr, result.stderr
        assert not os.path.exists(tmp_path / "never.sock")
