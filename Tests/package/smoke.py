"""The installed package's smoke test (scripts/package-install-test): one request of each kind through
nginx to the iap-fcgi of the Debian package, checked by its answers and by the rows it left.

Usage: python3 Tests/package/smoke.py BASE_URL [--health-only | --traffic STOP_FILE]
--traffic: orders and health checks one after another until STOP_FILE exists (an upgrade meanwhile);
any answer other than 201 and 200 is printed and the exit status is 1.
Reads IAP_RUN (the stack's certificates: the simulator's CA and StoreKit 2 test PKI) and
IAP_PACKAGE_DB_* (the package's own database on the stack's MariaDB)."""
import os
import sys
from pathlib import Path

TESTS = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(TESTS / "e2e"), str(TESTS / "Simulator")]

import receipts  # noqa: E402  (after the path above)
import signed_data  # noqa: E402
from notification_support import CERTS, events_of, purchase, refunded, send  # noqa: E402
from support import PAY_6, Api, Database, assert_verify_answer, new_user_id  # noqa: E402


def ok(what):
    print(f"  ok: {what}", flush=True)


def health(api):
    answer = api.get("/v1/health")
    assert answer.status_code == 200, f"GET /v1/health: {answer.status_code} {answer.text[:300]!r}"
    ok(f"GET /v1/health: 200 {answer.text.strip()[:120]}")


def smoke(api, db):
    health(api)

    user = new_user_id()
    order = api.create_order(user, PAY_6, price="6.00")
    ok(f"POST /v1/orders: 201, order {order['order_id']}")

    receipt = receipts.app_receipt([receipts.purchase(PAY_6)])
    first = assert_verify_answer(api.verify(receipt, order_id=order["order_id"]), "delivered")
    ok(f"POST /v1/receipts/verify: {first['status']} (code {first['code']})")
    again = assert_verify_answer(api.verify(receipt, order_id=order["order_id"]), "already_delivered")
    ok(f"POST /v1/receipts/verify, the same receipt again: {again['status']} (code {again['code']})")
    assert db.scalar("SELECT status FROM orders WHERE order_id = %s", order["order_id"]) == "delivered"
    ok("the order's row: delivered")

    payload = purchase()
    jws = signed_data.sign(payload, CERTS)
    signed = api.post_json("/v1/transactions/verify", {"signed_transaction": jws, "user_id": user})
    answer = assert_verify_answer(signed, "delivered")
    ok(f"POST /v1/transactions/verify (StoreKit 2 JWS): {answer['status']}")

    notification = send(api, "REFUND", refunded(payload))
    ok(f"POST /v1/notifications/apple (REFUND): accepted, {notification['notificationUUID']}")
    events = [kind for kind, _, _ in events_of(db, payload["transactionId"])]
    assert events == ["delivered", "refunded"], f"the signed transaction's events: {events}"
    ok(f"the signed transaction's events: {events}")


def traffic(api, stop_file):
    """Requests while the service is upgraded and restarted: none may fail (a schema error is a 500)."""
    answers, failures = 0, []
    while not os.path.exists(stop_file):
        for path, send_one, expected in (
                ("POST /v1/orders", lambda: api.post_json("/v1/orders", {"user_id": new_user_id(), "product_id": PAY_6,
                                                                        "price": "6.00"}), 201),
                ("GET /v1/health", lambda: api.get("/v1/health"), 200)):
            answer = send_one()
            answers += 1
            if answer.status_code != expected:
                failures.append(f"{path}: {answer.status_code} {answer.text[:200]!r}")
    print(f"  traffic: {answers} answers, {len(failures)} unexpected", flush=True)
    for failure in failures[:10]:
        print(f"    {failure}")
    return not failures


def main():
    api = Api(sys.argv[1])
    if sys.argv[2:] == ["--health-only"]:
        health(api)
        return
    if sys.argv[2:3] == ["--traffic"]:
        sys.exit(0 if traffic(api, sys.argv[3]) else 1)
    db = Database(host="127.0.0.1", port=int(os.environ["IAP_MARIADB_PORT"]), user=os.environ["IAP_PACKAGE_DB_USER"],
                  password=os.environ["IAP_PACKAGE_DB_PASSWORD"], database=os.environ["IAP_PACKAGE_DB_NAME"])
    try:
        smoke(api, db)
    finally:
        db.close()


if __name__ == "__main__":
    main()
