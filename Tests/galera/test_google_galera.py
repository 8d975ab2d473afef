"""A Google Play purchase token verified concurrently through both iap-fcgi instances of a Galera
cluster (POST /v1/google/purchases/verify): delivered exactly once, on every node one transactions row
(UNIQUE purchase_token_sha256), one delivered event and one order, and consumed at Google once."""
import concurrent.futures
import hashlib
import json
import os
import threading

import pytest
import requests

import fastcgi_client
from support import PAY_6, new_user_id, wait_until

PACKAGE = "com.example.game"
PURCHASES = 12
REQUESTS_PER_INSTANCE = 4


@pytest.fixture(scope="module")
def google():
    url = os.environ.get("GOOGLE_SIM_CONTROL_URL")
    if not url:
        pytest.fail("GOOGLE_SIM_CONTROL_URL is not set: eval \"$(scripts/stack env)\"", pytrace=False)
    return url


def bought(google):
    answer = requests.post(google + "/purchases", json={"package_name": PACKAGE, "product_id": PAY_6}, timeout=10)
    assert answer.status_code == 200, answer.text
    return answer.json()


def consume_calls(google, token):
    quoted = requests.utils.quote(token, safe="")
    return [c["status"] for c in requests.get(google + "/calls", timeout=10).json()["calls"]
            if c["endpoint"] == "consume" and (token in c["path"] or quoted in c["path"])]


def verify_all_at_once(instance_sockets, body):
    """The same request through every instance, REQUESTS_PER_INSTANCE each, released together."""
    sockets = [path for path in instance_sockets for _ in range(REQUESTS_PER_INSTANCE)]
    start = threading.Barrier(len(sockets))

    def post(socket_path):
        start.wait()
        answer = fastcgi_client.request_once(socket_path, "POST", "/v1/google/purchases/verify", body=body)
        return answer.status, answer.json()["status"]

    with concurrent.futures.ThreadPoolExecutor(len(sockets)) as pool:
        return list(pool.map(post, sockets))


def what_each_node_holds(nodes, token):
    """For a failure's message: the rows of one purchase token on each node, and whose requests they were."""
    token_sha256 = hashlib.sha256(token.encode()).hexdigest()
    lines = []
    for number, node in enumerate(nodes, 1):
        transactions = node.query("SELECT transaction_id, state, receipt_id, user_id FROM transactions"
                                  " WHERE purchase_token_sha256 = %s", token_sha256)
        receipts = node.query("SELECT receipt_id, transaction_id, verified_at FROM receipts"
                              " WHERE kind = 'google' AND sha256 = %s ORDER BY receipt_id", token_sha256)
        events = node.query("SELECT event_id, type FROM events WHERE transaction_id IN"
                            " (SELECT transaction_id FROM transactions WHERE purchase_token_sha256 = %s)", token_sha256)
        status = {name: node.scalar("SELECT VARIABLE_VALUE FROM information_schema.GLOBAL_STATUS"
                                    " WHERE VARIABLE_NAME = %s", name)
                  for name in ("WSREP_CLUSTER_STATE_UUID", "WSREP_CLUSTER_SIZE", "WSREP_LOCAL_STATE_COMMENT")}
        lines.append(f"node {number} {status}: transactions {transactions}; receipts {receipts}; events {events}")
    return "\n".join(lines)


def test_one_token_verified_through_both_instances_at_once_is_delivered_once(nodes, instance_sockets, google):
    statuses = {}
    purchases = []
    for _ in range(PURCHASES):
        purchase, user_id = bought(google), new_user_id()
        body = json.dumps({"package_name": PACKAGE, "product_id": PAY_6, "purchase_token": purchase["purchase_token"],
                           "user_id": user_id}).encode()
        answers = verify_all_at_once(instance_sockets, body)
        for _, status in answers:
            statuses[status] = statuses.get(status, 0) + 1
        assert [status for _, status in answers].count("delivered") == 1, \
            f"{answers}\n{what_each_node_holds(nodes, purchase['purchase_token'])}"
        assert all(status in ("delivered", "already_delivered") for _, status in answers), answers
        purchases.append((purchase, user_id))
    print(f"\nGalera, {PURCHASES} tokens x {REQUESTS_PER_INSTANCE * len(instance_sockets)} concurrent verifies "
          f"through {len(instance_sockets)} instances: {statuses}")

    for purchase, user_id in purchases:
        token_sha256 = hashlib.sha256(purchase["purchase_token"].encode()).hexdigest()
        for node in nodes:
            rows = node.query("SELECT transaction_id, state, user_id, store FROM transactions"
                              " WHERE purchase_token_sha256 = %s", token_sha256)
            assert [(r["transaction_id"], r["state"], r["user_id"], r["store"]) for r in rows] == \
                [(purchase["order_id"], "delivered", user_id, "google_play")], rows
            assert node.scalar("SELECT COUNT(*) FROM events WHERE transaction_id = %s AND type = 'delivered'",
                               purchase["order_id"]) == 1
            assert node.scalar("SELECT COUNT(*) FROM orders WHERE user_id = %s", user_id) == 1
        wait_until(lambda: consume_calls(google, purchase["purchase_token"]) == [200], 20,
                   "one consume at Google, by one instance")
    for purchase, _ in purchases:
        assert consume_calls(google, purchase["purchase_token"]) == [200]
