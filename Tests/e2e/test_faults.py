"""Faults on purpose (issue "Nothing lost, nothing delivered twice"): the database,
iap-fcgi and nginx go away during bursts of verify requests, and Apple is slow,
failing or dropping connections anywhere on the production -> sandbox path. Each
test ends with the invariants of invariants.py and adds its counts to
$IAP_RUN/fault-counts.txt."""
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import pytest

from invariants import Ledger
from support import (PAY_30, PAY_6, assert_verify_answer, new_transaction_id, new_user_id, open_receipts,
                     wait_until)

BURST = 40              # verify requests per burst, two transactions each
BURST_SECONDS = 4.0     # spread evenly over this long
FAULT_AFTER = 10        # the fault starts once this many answers came back
HEALTH_TIMEOUT = 30


def make_receipts(receipts, count, environment="Production"):
    """`count` receipts of two fresh transactions each; returns [(receipt_data, [ids])]."""
    made = []
    for _ in range(count):
        bought = [receipts.purchase(p, transaction_id=new_transaction_id()) for p in (PAY_6, PAY_30)]
        made.append((receipts.app_receipt(bought, environment=environment), [b["transaction_id"] for b in bought]))
    return made


def all_ids(made):
    return [tid for _, ids in made for tid in ids]


def burst(api, ledger, made, user_id, fault):
    """Posts every receipt once, one every BURST_SECONDS / len(made) seconds, each
    from a thread of its own; runs `fault()` in another thread once FAULT_AFTER
    answers came back. Returns when every request is answered and the fault is
    over; re-raises what `fault()` raised."""
    answered = threading.Semaphore(0)
    fault_failed = []

    def run_fault():
        for _ in range(FAULT_AFTER):
            answered.acquire()
        try:
            fault()
        except BaseException as error:  # re-raised in the test's thread
            fault_failed.append(error)

    interval = BURST_SECONDS / len(made)
    start = time.monotonic()

    def post(index):
        time.sleep(max(0.0, start + index * interval - time.monotonic()))
        ledger.post(api, made[index][0], user_id=user_id)
        answered.release()

    fault_thread = threading.Thread(target=run_fault)
    fault_thread.start()
    with ThreadPoolExecutor(len(made)) as pool:
        list(pool.map(post, range(len(made))))
    fault_thread.join()
    if fault_failed:
        raise fault_failed[0]


def assert_burst_answers(ledger, allowed):
    seen = dict(ledger.statuses)
    assert set(seen) <= set(allowed), f"{ledger.name}: answers {seen}, only {sorted(allowed)} may occur"
    return seen


def repost_all(api, ledger, made, user_id):
    """After the fault: the app sends every receipt again, as it does until told to finish."""
    for receipt_data, _ in made:
        response = ledger.post(api, receipt_data, user_id=user_id)
        assert response is not None, f"{ledger.name}: re-post after recovery: no answer"
        assert response.status_code == 200 and response.json()["status"] in ("delivered", "already_delivered"), (
            f"{ledger.name}: re-post after recovery: {response.status_code} {response.text[:300]}")


def retry_pending(db, iapctl, ledger, user_id):
    """Runs `iapctl retry-pending --minimum-age 0`: afterwards no receipt of the user is left unverified.
    Returns how many were unverified before."""
    before = open_receipts(db, user_id)
    output = iapctl("retry-pending", "--minimum-age", "0").strip()
    assert output.startswith("retried "), output
    assert open_receipts(db, user_id) == 0, f"{ledger.name}: retry-pending left receipts unverified: {output}"
    ledger.note(f"retry-pending verified {before} receipt(s) left unverified")
    return before


def wait_for_health(api, what):
    wait_until(lambda: api.get("/v1/health").status_code == 200, HEALTH_TIMEOUT, f"/v1/health 200 {what}")


# --- the database, iap-fcgi and nginx go away during a burst ---------------------------------------

@pytest.mark.outage("mariadb")
def test_database_stopped_during_a_burst(api, db, receipts, simulator, stack, iapctl, iap_fcgi_pid):
    ledger, user_id, made = Ledger("MariaDB stopped during a burst"), new_user_id(), make_receipts(receipts, BURST)
    pid = iap_fcgi_pid()
    # Some requests are waiting on Apple when MariaDB goes: Apple answers, and nothing can be written.
    simulator.control(latency_ms=200)
    try:
        burst(api, ledger, made, user_id, lambda: stack("stop mariadb"))
    finally:
        stack("start mariadb")
    seen = assert_burst_answers(ledger, {"delivered", "retry_later"})
    assert seen.get("retry_later", 0) > 0, f"the outage was not seen: {seen}"
    wait_for_health(api, "after MariaDB is back")
    assert iap_fcgi_pid() == pid, "iap-fcgi was restarted: it must reconnect to MariaDB by itself"

    simulator.reset()
    retry_pending(db, iapctl, ledger, user_id)
    repost_all(api, ledger, made, user_id)
    ledger.check(db, all_ids(made))


@pytest.mark.outage("iap-fcgi")
def test_iap_fcgi_killed_during_a_burst(api, db, receipts, simulator, stack, iapctl):
    ledger, user_id, made = Ledger("iap-fcgi SIGKILLed during a burst"), new_user_id(), make_receipts(receipts, BURST)
    # Requests are waiting on Apple when the process dies: recorded, never verified.
    simulator.control(latency_ms=300)

    def crash_and_restart():
        stack("kill iap-fcgi")
        time.sleep(1)
        stack("start iap-fcgi")

    try:
        burst(api, ledger, made, user_id, crash_and_restart)
    finally:
        stack("start iap-fcgi")   # does nothing when it runs
    # nginx answers its JSON 503 while iap-fcgi is gone (invariants.py counts a non-JSON answer as http_<status>).
    seen = assert_burst_answers(ledger, {"delivered", "retry_later", "service_unavailable", "connection_error"})
    assert seen.get("service_unavailable", 0) + seen.get("connection_error", 0) > 0, f"the crash was not seen: {seen}"
    wait_for_health(api, "after iap-fcgi was started again")

    simulator.reset()
    left = retry_pending(db, iapctl, ledger, user_id)
    assert left > 0, "no receipt was recorded but left unverified by the kill: the test missed what it is about"
    repost_all(api, ledger, made, user_id)
    ledger.check(db, all_ids(made))


@pytest.mark.outage("nginx")
def test_nginx_reloaded_during_a_burst(api, db, receipts, simulator, stack):
    ledger, user_id, made = Ledger("nginx reloaded during a burst"), new_user_id(), make_receipts(receipts, BURST)
    simulator.control(latency_ms=300)   # requests under way in the old workers during the reload

    burst(api, ledger, made, user_id, lambda: stack("reload nginx"))

    assert_burst_answers(ledger, {"delivered"})
    ledger.check(db, all_ids(made))


# --- Apple faults on the production -> sandbox path -----------------------------------------------

# Sandbox receipts are honoured for this app version (the review switch: docs/api.md
# "POST /v1/receipts/verify" step 4).
REVIEW_VERSION = "9.8.7-fault-tests"
RECEIPT_ENVIRONMENTS = ("Production", "Sandbox")
FAULT_ENVIRONMENTS = ("production", "sandbox", "both")

APPLE_FAULTS = {
    "slower than the timeout": {"latency_ms": 2300},   # the test stack's IAP_APPLE_TIMEOUT_MS is 2000
    "failing with 21005": {"force_status": 21005},
    "dropping connections": {"drop_connection": True},
}

# (receipt environment, fault_env) -> (answer, production calls, sandbox calls) while the fault lasts:
# 3 calls to an environment that fails (the retry policy), and a sandbox receipt reaches the sandbox only
# once production said 21007. Every call reaches the simulator once: libcurl re-sends none by itself.
DURING_FAULT = {
    ("Production", "production"): ("retry_later", 3, 0),
    ("Production", "sandbox"): ("delivered", 1, 0),      # the fault is not on its path
    ("Production", "both"): ("retry_later", 3, 0),
    ("Sandbox", "production"): ("retry_later", 3, 0),    # production never says 21007
    ("Sandbox", "sandbox"): ("retry_later", 1, 3),       # 21007, then the sandbox three times
    ("Sandbox", "both"): ("retry_later", 3, 0),
}
# Apple slower than the budget (IAP_APPLE_TIMEOUT_MS bounds a receipt's whole conversation with Apple):
# the first call to the slow environment times out when the budget is spent, and nothing follows it.
DURING_SLOW_APPLE = {
    ("Production", "production"): ("retry_later", 1, 0),
    ("Production", "sandbox"): ("delivered", 1, 0),
    ("Production", "both"): ("retry_later", 1, 0),
    ("Sandbox", "production"): ("retry_later", 1, 0),
    ("Sandbox", "sandbox"): ("retry_later", 1, 1),
    ("Sandbox", "both"): ("retry_later", 1, 0),
}
# Calls of a receipt's first verification once Apple is well again; a receipt delivered before makes none
# (the replay short-cut).
WHEN_WELL = {"Production": (1, 0), "Sandbox": (1, 1)}


def one_receipt_per_environment(receipts):
    """{"Production": (receipt_data, transaction id), "Sandbox": (...)}, one fresh transaction each."""
    made = {}
    for environment in RECEIPT_ENVIRONMENTS:
        bought = receipts.purchase(PAY_6, transaction_id=new_transaction_id())
        made[environment] = (receipts.app_receipt([bought], environment=environment), bought["transaction_id"])
    return made


def post_together(api, ledger, made, user_id):
    """Posts the receipts of `made` at once; returns their answers by environment."""
    def post(environment):
        return ledger.post(api, made[environment][0], user_id=user_id, app_version=REVIEW_VERSION)
    with ThreadPoolExecutor(len(made)) as pool:
        return dict(zip(made, pool.map(post, made)))


def calls(simulator):
    stats = simulator.stats()
    return stats["production"]["requests"], stats["sandbox"]["requests"]


def total(call_counts):
    return tuple(map(sum, zip(*call_counts))) if call_counts else (0, 0)


def assert_apple_fault_then_recovery(api, db, simulator, receipts, ledger, fault, fault_env, expected):
    """Both receipts posted under the fault: `expected[receipt environment]` answers and calls; then the
    fault cleared: whatever was deferred is delivered, what was delivered is answered without Apple."""
    where = f"{fault} on {fault_env}"
    user_id, made = new_user_id(), one_receipt_per_environment(receipts)
    simulator.reset()   # no fault, counters zeroed
    simulator.control(fault_env=fault_env, **fault)

    answers = post_together(api, ledger, made, user_id)

    for environment, response in answers.items():
        status = expected[environment][0]
        assert response is not None, f"{where}: {environment} receipt: no answer"
        body = assert_verify_answer(response, status)
        tid = made[environment][1]
        if status == "retry_later":
            assert db.transaction(tid) is None, f"{where}: {environment} receipt: retry_later, yet {tid} is stored"
        else:
            assert body["environment"] == environment and body["transactions"][0]["state"] == "delivered", body
    during = total([expected[environment][1:] for environment in made])
    assert calls(simulator) == during, f"{where}: (production, sandbox) calls, expected {during}"

    simulator.reset()
    answers = post_together(api, ledger, made, user_id)

    for environment, response in answers.items():
        deferred = expected[environment][0] == "retry_later"
        body = assert_verify_answer(response, "delivered" if deferred else "already_delivered")
        assert body["environment"] == environment, f"{where}: {environment} receipt answered from {body}"
    after = total([WHEN_WELL[environment] for environment in made if expected[environment][0] == "retry_later"])
    assert calls(simulator) == after, f"{where}, cleared: (production, sandbox) calls, expected {after}"
    return [tid for _, tid in made.values()]


@pytest.mark.parametrize("fault", APPLE_FAULTS.values(), ids=APPLE_FAULTS.keys())
def test_apple_fault_on_the_production_to_sandbox_path(api, db, receipts, simulator, service_settings, fault):
    """Each fault on production, on the sandbox and on both, with a Production and a Sandbox receipt."""
    name = next(name for name, settings in APPLE_FAULTS.items() if settings is fault)
    ledger = Ledger(f"Apple {name}: production, sandbox, both x Production, Sandbox receipt")
    service_settings.apply(review_version=REVIEW_VERSION)
    paid = []
    table = DURING_SLOW_APPLE if "latency_ms" in fault else DURING_FAULT
    for fault_env in FAULT_ENVIRONMENTS:
        expected = {environment: table[(environment, fault_env)] for environment in RECEIPT_ENVIRONMENTS}
        paid += assert_apple_fault_then_recovery(api, db, simulator, receipts, ledger, fault, fault_env, expected)
    ledger.check(db, paid)


def test_untrusted_certificate_on_the_production_to_sandbox_path(api, db, receipts, simulator, service_settings):
    """A certificate not issued by IAP_CA_FILE's CA (a man in the middle): nothing is believed, not even a
    21007; no call gets past the TLS handshake, so the simulator counts none. (The simulator presents it on
    both endpoints: its `tls` setting does not follow `fault_env`.)"""
    ledger = Ledger("Apple presenting an untrusted certificate: Production, Sandbox receipt")
    service_settings.apply(review_version=REVIEW_VERSION)
    expected = {environment: ("retry_later", 0, 0) for environment in RECEIPT_ENVIRONMENTS}
    paid = assert_apple_fault_then_recovery(api, db, simulator, receipts, ledger, {"tls": "untrusted"}, "both",
                                            expected)
    ledger.check(db, paid)
