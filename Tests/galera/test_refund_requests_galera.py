"""Two iap-fcgi instances on one Galera cluster answer each refund request once (docs/events.md "Refund
requests"): both run the sender, each leases a request in a committed transaction before its PUT, and a
lease taken at once on two nodes loses at certification for one of them.

The interleaving is forced: Apple (the simulator) takes three quarters of a PUT's time limit
(IAP_APPLE_TIMEOUT_MS, at most 4 s) to answer each PUT, and each sender answers one request at a time,
so while one instance waits on Apple the other, polling every second, takes the next request: both
instances send, and neither sends what the other holds.
"""
import os
import re

from support import wait_until
from test_refund_request_sender import apple, puts, refund_request

REQUESTS = 4
LATENCY_MS = min(4000, int(os.environ.get("IAP_APPLE_TIMEOUT_MS", "15000")) * 3 // 4)
SENT_LINE = re.compile(r"consumption: request \d+ \(transaction (\d+)\) sent")


def test_two_instances_send_each_refund_request_once(nodes, simulator, run_dir):
    simulator.reset()
    apple(simulator, latency_ms=LATENCY_MS)
    try:
        transaction_ids = [refund_request(nodes[0], "decline") for _ in range(REQUESTS)]
        wait_until(lambda: all(nodes[1].scalar("SELECT status FROM consumption_requests WHERE transaction_id = %s", t)
                               == "sent" for t in transaction_ids), 120, "every refund request sent")
    finally:
        apple(simulator, latency_ms=0)
    for transaction_id in transaction_ids:
        assert [put["status"] for put in puts(simulator, transaction_id)] == [202], transaction_id
        assert nodes[2].scalar("SELECT attempts FROM consumption_requests WHERE transaction_id = %s",
                               transaction_id) == 1
    sent_by = {}
    for log in sorted((run_dir / "logs").glob("iap-fcgi-*.log")):
        sent_by[log.stem] = [t for t in SENT_LINE.findall(log.read_text(errors="replace")) if t in transaction_ids]
    print(f"\nrefund requests sent by instance: { {name: len(sent) for name, sent in sent_by.items()} }")
    assert sorted(t for sent in sent_by.values() for t in sent) == sorted(transaction_ids)
    assert sum(1 for sent in sent_by.values() if sent) == 2, sent_by
