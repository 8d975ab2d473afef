"""A receipt's bytes stored once across a Galera cluster with two iap-fcgi instances: each instance
knows only the rows it wrote (an index in memory), so it stores the bytes once and its later rows of
the same bytes name its own row; on every node each pointer names a row of the same sha256 that holds
the bytes, and retry-pending delivers the purchase once from them."""
import json

import fastcgi_client
from invariants import Ledger
from support import PAY_6, new_user_id, placeholders

POSTS_PER_INSTANCE = 3
APPLE_CALLS_PER_ENVIRONMENT = 3


class Answer:
    """What Ledger.record reads of a FastCGI answer."""

    def __init__(self, answer):
        self.status_code = answer.status
        self._body = answer.json()

    def json(self):
        return self._body


def test_each_instance_stores_a_retried_receipts_bytes_once(
        nodes, instance_sockets, receipts, simulator, iapctl):
    ledger, user_id = Ledger("Galera: a receipt retried through both instances"), new_user_id()
    purchase = receipts.purchase(PAY_6)
    receipt = receipts.app_receipt([purchase])
    body = json.dumps({"receipt_data": receipt, "user_id": user_id}).encode()
    for _ in range(POSTS_PER_INSTANCE):
        for socket_path in instance_sockets:
            simulator.control(force_status=21005, fail_next=APPLE_CALLS_PER_ENVIRONMENT)
            answer = Answer(fastcgi_client.request_once(socket_path, "POST", "/v1/receipts/verify", body=body))
            ledger.record(receipt, answer, user_id)
            assert answer.json()["status"] == "retry_later", answer.json()
    simulator.reset()
    posts = POSTS_PER_INSTANCE * len(instance_sockets)

    for node in nodes:
        rows = node.query("SELECT receipt_id, sha256, receipt_data, bytes_in FROM receipts WHERE user_id = %s"
                          " ORDER BY receipt_id", user_id)
        assert len(rows) == posts, rows
        holders = {row["receipt_id"]: row for row in rows if row["receipt_data"] is not None}
        assert len(holders) == len(instance_sockets), f"{len(holders)} rows hold the bytes: one per instance expected"
        assert all(row["receipt_data"] == receipt and row["bytes_in"] is None for row in holders.values())
        readers = [row for row in rows if row["receipt_id"] not in holders]
        assert all(row["bytes_in"] in holders and row["sha256"] == holders[row["bytes_in"]]["sha256"]
                   for row in readers), readers
        ids = [row["receipt_id"] for row in rows]
        recovered = node.query(f"SELECT receipt_data FROM receipt_bytes WHERE receipt_id IN ({placeholders(ids)})",
                               *ids)
        assert [row["receipt_data"] for row in recovered] == [receipt] * posts

    output = iapctl("retry-pending", "--minimum-age", "0", "--limit", "100000")

    for node in nodes:
        assert node.delivered_count([purchase["transaction_id"]]) == 1, output
        ledger.check(node, [purchase["transaction_id"]], write_counts=node is nodes[0])
