"""The service's prepared statements stay few whatever the batch sizes: each of
its sessions keeps a bounded number, and the statements over several rows exist
for a few row counts only. Past the server's `max_prepared_stmt_count` every
PREPARE fails, server-wide, and the service could answer nothing but
`retry_later`."""
import threading
from concurrent.futures import ThreadPoolExecutor

import pytest

from server_admin import globals_set, status_value
from support import PAY_6, PAY_30, PAY_98, new_transaction_id, new_user_id

PRODUCTS = [PAY_6, PAY_30, PAY_98]
# Statements the server may hold beyond those of the service once warmed up. The service's
# sessions hold more than this when every batch size makes statements of its own.
HEADROOM = 80


def burst(api, receipts, user_id, size, purchases_each):
    """`size` receipts of `purchases_each` new purchases, posted at once; their answers."""
    posted = [receipts.app_receipt([receipts.purchase(PRODUCTS[(i + j) % 3], transaction_id=new_transaction_id())
                                    for j in range(purchases_each)]) for i in range(size)]
    start = threading.Barrier(size, timeout=30)

    def post(receipt):
        start.wait()
        return api.verify(receipt, user_id=user_id)

    with ThreadPoolExecutor(max_workers=size) as pool:
        return list(pool.map(post, posted))


@pytest.mark.outage("iap-fcgi")
def test_service_answers_within_a_low_max_prepared_stmt_count(api, stack, receipts, simulator):
    user_id = new_user_id()
    simulator.control(latency_ms=200)   # the answers of a burst reach the delivery threads together
    stack("stop iap-fcgi")
    stack("start iap-fcgi")
    for size in (1, 2, 3):   # warm up: the statements every verification uses
        burst(api, receipts, user_id, size, 1)
    baseline = status_value("Prepared_stmt_count")
    answers = []
    with globals_set(max_prepared_stmt_count=baseline + HEADROOM):
        for round_ in range(4):
            for size in range(2, 17):
                answers += [(size, r.status_code, r.json().get("status"))
                            for r in burst(api, receipts, user_id, size, 1 + (size + round_) % 3)]
        held = status_value("Prepared_stmt_count")
        # Statements no request has needed yet: client orders, and verifications naming them.
        orders = [api.post_json("/v1/orders", {"user_id": user_id, "product_id": PAY_6}) for _ in range(8)]
        assert [o.status_code for o in orders] == [201] * len(orders), [o.text for o in orders]
        for order in orders:
            bought = receipts.purchase(PAY_6, transaction_id=new_transaction_id())
            response = api.verify(receipts.app_receipt([bought]), user_id=user_id, order_id=order.json()["order_id"],
                                  transaction_id=bought["transaction_id"])
            answers.append(("order", response.status_code, response.json().get("status")))
    print(f"baseline {baseline}, held after the bursts {held}")
    refused = [answer for answer in answers if answer[2] != "delivered"]
    assert not refused, (f"{len(refused)} of {len(answers)} verifications not delivered with "
                         f"max_prepared_stmt_count {baseline + HEADROOM} (statements held: {held}): {refused[:5]}")
