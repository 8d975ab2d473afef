"""`iapctl subscriptions show|sync|extend|extend-all` (docs/iapctl.md) against the simulator's App Store Server API
(Tests/Simulator/subscription_api.py): a player's chains and entitlement, Get All Subscription Statuses applied to
`subscriptions`, a renewal date extended (one chain, and every active subscriber of a product with its status polled
until done), Apple's limits refused here before Apple is called, and every run in `staff_audit`."""
import time
from datetime import datetime, timezone

import requests

from support import PAY_30, assert_verify_answer, new_transaction_id, new_user_id
from test_server_api import run_iapctl

DAY = 86_400_000
MINUTE = 60_000


def now_ms():
    return int(time.time() * 1000)


def sim_chain(simulator, **fields):
    """POST /subscriptions/chains: makes (or changes) a chain in the simulator."""
    answer = requests.post(f"{simulator.base_url}/subscriptions/chains", json=fields, timeout=10)
    assert answer.status_code == 200, answer.text
    return answer.json()


def sim_received(simulator):
    """The status and extension requests that reached the simulator since its reset."""
    return requests.get(f"{simulator.base_url}/subscriptions/received", timeout=10).json()["received"]


def subscribed(api, simulator, user, purchase_ms=None, expires_ms=None):
    """A chain of PAY_30 at the simulator, its first period bought for `user` and delivered by the client's JWS
    (which makes its `subscriptions` row): the simulator's chain."""
    order = api.create_order(user, PAY_30)
    purchase_ms = purchase_ms or now_ms() - 10 * MINUTE
    chain = sim_chain(simulator, product_id=PAY_30, original_transaction_id=new_transaction_id(), customer=user,
                      app_account_token=order["order_id"], purchase_ms=purchase_ms,
                      expires_ms=expires_ms or purchase_ms + 30 * DAY)
    answer = api.post_json("/v1/transactions/verify", {"signed_transaction": chain["signed_transaction"], "user_id": user})
    assert_verify_answer(answer, "delivered")
    return chain


def row(db, chain):
    return db.one("SELECT * FROM subscriptions WHERE original_transaction_id = %s", chain["original_transaction_id"])


def expires_ms(db, chain):
    return round(row(db, chain)["expires_at"].replace(tzinfo=timezone.utc).timestamp() * 1000)


def audit(db, action, target):
    return db.query("SELECT staff_name, action, user_id, target, result FROM staff_audit WHERE action = %s AND target"
                    " LIKE %s ORDER BY audit_id", action, target + "%")


def iapctl(*arguments):
    """The release iapctl with the stack's environment, trusting the simulator's signing root: its output."""
    status, stdout, stderr, _ = run_iapctl(*arguments)
    assert status == 0, f"iapctl {' '.join(arguments)} exited {status}:\n{stdout}\n{stderr}"
    return stdout


def iapctl_failing(*arguments):
    """Runs iapctl expecting it to fail: (exit status, stdout, stderr)."""
    status, stdout, stderr, _ = run_iapctl(*arguments)
    assert status != 0, f"iapctl {' '.join(arguments)} succeeded:\n{stdout}"
    return status, stdout, stderr


def test_show_lists_a_players_chain_and_its_entitlement(api, db, simulator):
    user = new_user_id()
    chain = subscribed(api, simulator, user)
    expiry = datetime.fromtimestamp(chain["expires_ms"] // 1000, timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    lines = iapctl("subscriptions", "show", user).splitlines()
    assert lines == [f"{chain['original_transaction_id']}\t{PAY_30}\tactive\t{expiry}\t-\tProduction"
                     f"\tentitled until {expiry}"]
    assert audit(db, "subscriptions_show", user) == [
        {"staff_name": "iapctl", "action": "subscriptions_show", "user_id": user, "target": user,
         "result": "1 chains shown"}]
    status, _, stderr = iapctl_failing("subscriptions", "show", new_user_id())
    assert status == 1 and "has no subscription chain here" in stderr


def test_extend_moves_the_expiry_here_and_is_audited(api, db, simulator):
    user = new_user_id()
    chain = subscribed(api, simulator, user)
    before = expires_ms(db, chain)
    printed = iapctl("subscriptions", "extend", chain["original_transaction_id"], "--days", "3", "--reason", "3")
    extended = before + 3 * DAY
    iso = datetime.fromtimestamp(extended / 1000, timezone.utc).strftime("%Y-%m-%dT%H:%M:%S")
    assert f"{chain['original_transaction_id']}\textended\t{iso}" in printed
    assert expires_ms(db, chain) == extended and row(db, chain)["status"] == "active", printed
    assert [(r["method"], r["body"] and r["body"]["extendByDays"], r["status"]) for r in sim_received(simulator)] == [
        ("PUT", 3, 200), ("GET", None, 200)]  # the extension, then the chain's status read
    changed = db.query("SELECT expires_at FROM events WHERE original_transaction_id = %s AND type ="
                       " 'subscription_changed' ORDER BY event_id", chain["original_transaction_id"])
    assert round(changed[-1]["expires_at"].replace(tzinfo=timezone.utc).timestamp() * 1000) == extended
    [entry] = audit(db, "subscription_extend", chain["original_transaction_id"])
    assert (entry["staff_name"], entry["user_id"]) == ("iapctl", user)
    assert entry["result"].startswith("3 days, reason 3 (Production, request ") and "extended: expires" in entry["result"]


def test_out_of_range_days_or_reason_are_refused_before_apple_is_called(api, db, simulator):
    chain = subscribed(api, simulator, new_user_id())
    before = expires_ms(db, chain)
    for arguments, message in ((("--days", "91", "--reason", "3"), "--days must be 1 to 90 (Apple's limit), not 91"),
                               (("--days", "0", "--reason", "3"), "--days must be 1 to 90"),
                               (("--days", "5", "--reason", "4"), "--reason must be 0 (undeclared)")):
        _, _, stderr = iapctl_failing("subscriptions", "extend", chain["original_transaction_id"], *arguments)
        assert message in stderr
    _, _, stderr = iapctl_failing("subscriptions", "extend-all", PAY_30, "--days", "91", "--reason", "3")
    assert "--days must be 1 to 90" in stderr
    assert sim_received(simulator) == [] and expires_ms(db, chain) == before
    assert audit(db, "subscription_extend", chain["original_transaction_id"]) == []


def test_apple_extends_a_subscription_twice_a_year_then_says_why_not(api, db, simulator):
    chain = subscribed(api, simulator, new_user_id())
    for _ in range(2):
        iapctl("subscriptions", "extend", chain["original_transaction_id"], "--days", "1", "--reason", "1")
    status, _, stderr = iapctl_failing("subscriptions", "extend", chain["original_transaction_id"], "--days", "1",
                                       "--reason", "1")
    assert status == 1 and "already extended twice in the last 365 days" in stderr
    results = [r["result"] for r in audit(db, "subscription_extend", chain["original_transaction_id"])]
    assert len(results) == 3 and "refused: the subscription was already extended twice" in results[2]


def test_extend_all_polls_the_mass_extension_until_done(api, db, simulator):
    first = subscribed(api, simulator, new_user_id())
    second = subscribed(api, simulator, new_user_id())
    lapsed = sim_chain(simulator, product_id=PAY_30, original_transaction_id=new_transaction_id(), status=2)
    printed = iapctl("subscriptions", "extend-all", PAY_30, "--days", "2", "--reason", "3", "--poll-seconds", "1")
    lines = [line.split("\t") for line in printed.splitlines()]
    request_id = lines[0][0]
    assert lines == [[request_id, "requested"], [request_id, "in progress"],
                     [request_id, "complete", "2 extended", "0 not extended"]]
    calls = [(r["method"], r["path"]) for r in sim_received(simulator)]
    status_path = f"/inApps/v1/subscriptions/extend/mass/{PAY_30}/{request_id}"
    assert calls == [("POST", "/inApps/v1/subscriptions/extend/mass"), ("GET", status_path), ("GET", status_path)]
    chains = {c["original_transaction_id"]: c["expires_ms"] for c in
              requests.get(f"{simulator.base_url}/subscriptions/chains", timeout=10).json()["chains"]}
    assert chains == {first["original_transaction_id"]: first["expires_ms"] + 2 * DAY,
                      second["original_transaction_id"]: second["expires_ms"] + 2 * DAY,
                      lapsed["original_transaction_id"]: lapsed["expires_ms"]}
    results = [r["result"] for r in audit(db, "subscription_extend_all", f"{PAY_30} {request_id}")]
    assert results == ["2 days, reason 3 (Production): mass extension requested",
                       "2 days, reason 3 (Production): complete: 2 extended, 0 not extended"]


def test_sync_applies_a_chain_apple_says_expired(api, db, simulator):
    user = new_user_id()
    chain = subscribed(api, simulator, user)
    assert db.query("SELECT product_id FROM entitlements WHERE user_id = %s", user) == [{"product_id": PAY_30}]
    # The player cancelled and the period ended; the EXPIRED notification never came.
    sim_chain(simulator, original_transaction_id=chain["original_transaction_id"], status=2, expiration_intent=1,
              auto_renew=False)
    printed = iapctl("subscriptions", "sync", "--user", user).splitlines()
    assert printed[0].split("\t")[::3] == [chain["original_transaction_id"], "changed"]
    assert printed[0].split("\t")[1] == "expired" and printed[-1] == "1 chains read, 1 changed"
    stored = row(db, chain)
    assert (stored["status"], stored["expiration_intent"], stored["auto_renew"]) == ("expired", "VOLUNTARY", 0)
    assert db.query("SELECT product_id FROM entitlements WHERE user_id = %s", user) == []
    events = db.query("SELECT subscription_status, user_id FROM events WHERE original_transaction_id = %s AND type ="
                      " 'subscription_changed' ORDER BY event_id", chain["original_transaction_id"])
    assert events[-1] == {"subscription_status": "expired", "user_id": user}
    # Run again: Apple says the same, nothing changes.
    assert iapctl("subscriptions", "sync", "--user", user).splitlines()[-1] == "1 chains read, 0 changed"
    assert [r["result"] for r in audit(db, "subscriptions_sync", user)] == [
        "1 chains read, 1 changed", "1 chains read, 0 changed"]


def test_sync_all_stale_catches_up_a_chain_past_its_expiry(api, db, simulator):
    """A server down while the period ended: the row still says active; --all-stale asks Apple about it."""
    user = new_user_id()
    chain = subscribed(api, simulator, user, purchase_ms=now_ms() - 40 * MINUTE, expires_ms=now_ms() - 5 * MINUTE)
    assert row(db, chain)["status"] == "active"
    sim_chain(simulator, original_transaction_id=chain["original_transaction_id"], status=3)
    printed = iapctl("subscriptions", "sync", "--all-stale")
    assert f"{chain['original_transaction_id']}\tbilling_retry\t" in printed
    assert row(db, chain)["status"] == "billing_retry"
