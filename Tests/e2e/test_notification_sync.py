"""`iapctl notifications sync --since DATE`: notifications Apple sent while nothing took them are
fetched from Get Notification History (the simulator's, JWT checked, paged) and applied as if posted;
running it again changes nothing."""
import os
import subprocess
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

import requests

from notification_support import ROUTE, deliver_by_verify, event_invariant_violations, events_of, notification_row
from support import PAY_6, new_user_id, wait_until

REPO = Path(__file__).resolve().parents[2]
IAPCTL = REPO / ".build" / "release" / "iapctl"

UNREACHABLE = "http://127.0.0.1:9/v1/notifications/apple"   # discard port: nothing listens


def simulator_send(simulator, url, notification_type, transaction):
    answer = requests.post(f"{simulator.base_url}/notifications/send", json={
        "url": url, "notification_type": notification_type, "retry_intervals_s": [],
        "transaction": transaction}, timeout=10)
    assert answer.status_code == 200, answer.text
    return answer.json()


def attempted(simulator, count):
    entries = requests.get(f"{simulator.base_url}/notifications/sent", timeout=10).json()
    return len(entries) == count and all(entry["attempts"] for entry in entries)


def sync(since, trusting_the_test_pki=True):
    """iapctl notifications sync; the stack's iap-fcgi trusts the test PKI through IAP_APPLE_ROOT_CA_FILE,
    and so does iapctl here unless told otherwise (then Apple's own root: nothing verifies)."""
    env = dict(os.environ)
    if trusting_the_test_pki:
        env["IAP_APPLE_ROOT_CA_FILE"] = str(Path(os.environ["IAP_RUN"]) / "certs" / "signing-root.pem")
    return subprocess.run([str(IAPCTL), "notifications", "sync", "--since", since], cwd=REPO, env=env,
                          capture_output=True, text=True, timeout=60)


def synced(since, **options):
    result = sync(since, **options)
    assert result.returncode == 0, (result.stdout, result.stderr)
    return result.stdout


def test_sync_applies_what_apple_could_not_deliver_once(api, db, simulator):
    user = new_user_id()
    order = api.create_order(user)
    delivered, delivered_order = deliver_by_verify(api, db, user)
    charge = simulator_send(simulator, UNREACHABLE, "ONE_TIME_CHARGE",
                            {"product_id": PAY_6, "app_account_token": order["order_id"]})
    refund = simulator_send(simulator, UNREACHABLE, "REFUND",
                            {"product_id": PAY_6, "transaction_id": delivered["transactionId"],
                             "revocation_ms": int(time.time() * 1000), "revocation_type": "REFUND_PRORATED",
                             "revocation_percentage": 50000})
    declined = simulator_send(simulator, UNREACHABLE, "REFUND_DECLINED", {"product_id": PAY_6})
    posted = simulator_send(simulator, api.url(ROUTE), "ONE_TIME_CHARGE", {"product_id": PAY_6})
    wait_until(lambda: attempted(simulator, 4), 10, "every notification attempted once")
    assert notification_row(db, posted["notification_uuid"]) is not None, "the reachable one was posted"
    for lost in (charge, refund, declined):
        assert notification_row(db, lost["notification_uuid"]) is None, "Apple could not reach the service"
    requests.post(f"{simulator.base_url}/notifications/settings", json={"page_size": 2}, timeout=10)

    since = (datetime.now(timezone.utc) - timedelta(days=1)).strftime("%Y-%m-%dT%H:%M:%SZ")
    untrusted = synced(since, trusting_the_test_pki=False)
    assert "fetched 4, applied 0, already stored 0, refused 4" in untrusted, untrusted
    assert notification_row(db, charge["notification_uuid"]) is None, "what does not verify is not stored"
    first = synced(since)
    assert "fetched 4, applied 3, already stored 1, refused 0" in first, first

    row = db.transaction(charge["transaction_id"])
    assert (row["state"], row["order_id"], row["user_id"]) == ("delivered", order["order_id"], user)
    assert notification_row(db, charge["notification_uuid"])["source"] == "sync"
    assert events_of(db, charge["transaction_id"]) == [("delivered", user, order["order_id"])]
    row = db.transaction(delivered["transactionId"])
    assert (row["state"], row["revocation_type"], row["revocation_percentage"]) == ("refunded", "REFUND_PRORATED", 50000)
    assert [e[0] for e in events_of(db, delivered["transactionId"])] == ["delivered", "refunded"]
    assert notification_row(db, declined["notification_uuid"])["effect"] == "stored"
    assert notification_row(db, posted["notification_uuid"])["source"] == "post"

    notifications_before = db.scalar("SELECT COUNT(*) FROM notifications")
    events_before = db.scalar("SELECT COUNT(*) FROM events")
    again = synced(since[:10])
    assert "fetched 4, applied 0, already stored 4, refused 0" in again, again
    assert db.scalar("SELECT COUNT(*) FROM notifications") == notifications_before
    assert db.scalar("SELECT COUNT(*) FROM events") == events_before
    assert event_invariant_violations(db) == []


def test_sync_refuses_a_date_it_cannot_read_or_apple_does_not_keep(db):
    for since in ("yesterday", "2026-13-01", (datetime.now(timezone.utc) - timedelta(days=200)).strftime("%Y-%m-%d")):
        result = sync(since)
        assert result.returncode != 0 and "--since" in result.stderr, (since, result.stdout, result.stderr)
