"""Faults on purpose (issue "Nothing lost, nothing delivered twice"): the database,
iap-fcgi and nginx go away during bursts of verify requests, Apple fails on the
production -> sandbox path. Each test ends with the invariants of invariants.py."""
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import pytest
import requests

from invariants import Ledger
from support import PAY_30, PAY_6, new_transaction_id, new_user_id, wait_until

BURST = 40


def make_receipts(receipts, count):
    """`count` receipts of two fresh transactions each; returns [(receipt_data, [ids])]."""
    made = []
    for _ in range(count):
        bought = [receipts.purchase(p, transaction_id=new_transaction_id()) for p in (PAY_6, PAY_30)]
        made.append((receipts.app_receipt(bought), [b["transaction_id"] for b in bought]))
    return made


def post(api, receipt_data, user_id):
    try:
        return api.verify(receipt_data, user_id=user_id)
    except requests.RequestException:
        return None


def burst(api, ledger, made, user_id, fault, fault_after=10):
    """Posts every receipt from 8 threads; runs `fault()` once `fault_after` answers came back."""
    answered = threading.Semaphore(0)
    fault_thread = threading.Thread(target=lambda: ([answered.acquire() for _ in range(fault_after)], fault()))
    fault_thread.start()

    def one(item):
        response = post(api, item[0], user_id)
        ledger.record(item[0], response)
        answered.release()
        time.sleep(0.05)
        return response

    with ThreadPoolExecutor(8) as pool:
        list(pool.map(one, made))
    fault_thread.join()


def repost_all(api, ledger, made, user_id):
    """After the fault: the app retries every receipt until it is told to finish."""
    for receipt_data, _ in made:
        response = post(api, receipt_data, user_id)
        ledger.record(receipt_data, response)
        assert response is not None and response.status_code == 200, (
            f"re-post after recovery: {response and response.status_code} {response and response.text[:300]}")
        assert response.json()["status"] in ("delivered", "already_delivered")


@pytest.mark.outage("mariadb")
def test_database_stopped_during_a_burst(api, db, receipts, stack, iap_fcgi_pid):
    user_id, made, ledger = new_user_id(), make_receipts(receipts, BURST), Ledger("mariadb stopped during a burst")
    pid = iap_fcgi_pid()
    try:
        burst(api, ledger, made, user_id, lambda: stack("stop mariadb"))
        outage_answers = dict(ledger.statuses)
    finally:
        stack("start mariadb")
    wait_until(lambda: api.get("/v1/health").status_code == 200, 30, "health after MariaDB is back")
    assert iap_fcgi_pid() == pid, "iap-fcgi was restarted: it must recover by itself"
    assert outage_answers.get("retry_later", 0) > 0, f"the outage was not seen: {outage_answers}"
    repost_all(api, ledger, made, user_id)
    ledger.check(db, [tid for _, ids in made for tid in ids])


@pytest.mark.outage("iap-fcgi")
def test_iap_fcgi_killed_during_a_burst(api, db, receipts, stack, iapctl):
    user_id, made, ledger = new_user_id(), make_receipts(receipts, BURST), Ledger("iap-fcgi SIGKILLed during a burst")
    try:
        burst(api, ledger, made, user_id, lambda: stack("kill iap-fcgi"))
    finally:
        stack("start iap-fcgi")
    wait_until(lambda: api.get("/v1/health").status_code == 200, 30, "health after iap-fcgi restarted")
    # Receipts recorded before the kill whose app never comes back: retry-pending delivers them.
    output = iapctl("retry-pending", "--minimum-age", "0")
    assert "retried" in output
    repost_all(api, ledger, made, user_id)
    ledger.check(db, [tid for _, ids in made for tid in ids])


@pytest.mark.outage("nginx")
def test_nginx_reloaded_during_a_burst(api, db, receipts, stack):
    user_id, made, ledger = new_user_id(), make_receipts(receipts, BURST), Ledger("nginx reloaded during a burst")
    burst(api, ledger, made, user_id, lambda: stack("reload nginx"))
    assert set(ledger.statuses) == {"delivered"}, f"answers around an nginx reload: {dict(ledger.statuses)}"
    ledger.check(db, [tid for _, ids in made for tid in ids])


SANDBOX_PATH_FAULTS = {
    # name: (simulator settings, production calls, sandbox calls) for a sandbox receipt
    "sandbox failing 21005": ({"force_status": 21005, "fault_env": "sandbox"}, 1, 3),
    "sandbox dropping connections": ({"drop_connection": True, "fault_env": "sandbox"}, 1, 3),
    "sandbox slower than the timeout": ({"latency_ms": 2500, "fault_env": "sandbox"}, 1, 3),
    "production failing 21005": ({"force_status": 21005, "fault_env": "production"}, 3, 0),
    "production dropping connections": ({"drop_connection": True, "fault_env": "production"}, 3, 0),
    "both failing 21009": ({"force_status": 21009, "fault_env": "both"}, 3, 0),
    "untrusted certificate": ({"tls": "untrusted"}, 0, 0),
}


@pytest.mark.parametrize("fault", SANDBOX_PATH_FAULTS.values(), ids=SANDBOX_PATH_FAULTS.keys())
def test_apple_fault_on_the_sandbox_path(api, db, receipts, simulator, service_settings, fault):
    settings, production_calls, sandbox_calls = fault
    user_id = new_user_id()
    service_settings.apply(sandbox_users=user_id)
    bought = [receipts.purchase(PAY_6, transaction_id=new_transaction_id())]
    receipt = receipts.app_receipt(bought, environment="Sandbox")
    ledger = Ledger(f"Apple fault on the sandbox path: {settings}")
    simulator.control(**settings)
    simulator.reset_stats()

    failed = api.verify(receipt, user_id=user_id)
    ledger.record(receipt, failed)
    assert failed.status_code == 503 and failed.json()["status"] == "retry_later", failed.text[:300]
    assert failed.json()["finish_transaction"] is False and failed.headers.get("Retry-After")
    stats = simulator.stats()
    assert (stats["production"]["requests"], stats["sandbox"]["requests"]) == (production_calls, sandbox_calls)
    assert db.delivered_count([bought[0]["transaction_id"]]) == 0

    simulator.reset()
    recovered = api.verify(receipt, user_id=user_id)
    ledger.record(receipt, recovered)
    assert recovered.status_code == 200 and recovered.json()["status"] == "delivered", recovered.text[:300]
    assert recovered.json()["environment"] == "Sandbox"
    ledger.check(db, [bought[0]["transaction_id"]])
