"""The replay short-cut and answers that change over time (issue 10, item 6).

Apple's answer to the same receipt bytes grows: a renewed subscription shows up in
`latest_receipt_info`. A request naming a transaction the earlier answer does not hold must ask Apple
again instead of being answered `pending` from the database forever.
"""
import requests

from support import PAY_6, answered_transactions, assert_verify_answer, new_transaction_id, new_user_id


def apple_now_shows(simulator, receipt_data, purchase):
    """From now on the simulator's answer to `receipt_data` lists `purchase` in latest_receipt_info."""
    response = requests.post(simulator.base_url + "/latest_receipt_info",
                             json={"receipt_data": receipt_data, "purchase": purchase}, timeout=10)
    assert response.status_code == 200, response.text


def test_a_named_transaction_missing_from_the_earlier_answer_goes_to_apple(api, db, simulator, receipts):
    user_id = new_user_id()
    first = receipts.purchase(PAY_6, transaction_id=new_transaction_id())
    receipt = receipts.app_receipt([first])
    assert_verify_answer(api.verify(receipt, user_id=user_id, transaction_id=first["transaction_id"]),
                         "delivered")
    renewal = receipts.purchase(PAY_6, transaction_id=new_transaction_id(),
                                original_transaction_id=first["transaction_id"])
    apple_now_shows(simulator, receipt, renewal)
    simulator.reset_stats()

    body = assert_verify_answer(api.verify(receipt, user_id=user_id, transaction_id=renewal["transaction_id"]),
                                "delivered")

    states = {tid: t["state"] for tid, t in answered_transactions(body).items()}
    assert states == {renewal["transaction_id"]: "delivered", first["transaction_id"]: "already_delivered"}
    assert simulator.requests_to("production") == 1, "the receipt was not asked about again"
    stored = db.transaction(renewal["transaction_id"])
    assert stored is not None and stored["user_id"] == user_id

    # Once stored, the renewal is answered like any replay: already delivered, and again without Apple
    # when the request names nothing the stored answers lack.
    simulator.reset_stats()
    assert_verify_answer(api.verify(receipt, user_id=user_id, transaction_id=renewal["transaction_id"]),
                         "already_delivered")
    assert_verify_answer(api.verify(receipt, user_id=user_id, transaction_id=first["transaction_id"]),
                         "already_delivered")
    assert_verify_answer(api.verify(receipt, user_id=user_id), "already_delivered")
    assert simulator.requests_to("production") <= 1, "replays of a delivered receipt went to Apple"


def test_a_named_transaction_apple_does_not_show_yet_stays_pending(api, simulator, receipts):
    """The other side: Apple still does not show the named transaction, so the answer is pending (the app
    keeps it and tries later), after asking Apple once more."""
    user_id = new_user_id()
    first = receipts.purchase(PAY_6, transaction_id=new_transaction_id())
    receipt = receipts.app_receipt([first])
    assert_verify_answer(api.verify(receipt, user_id=user_id), "delivered")
    simulator.reset_stats()

    assert_verify_answer(api.verify(receipt, user_id=user_id, transaction_id=new_transaction_id()), "pending")

    assert simulator.requests_to("production") == 1
