"""POST /v1/google/purchases/verify under load: Google's answers that wait together are written in one
database transaction (GooglePurchaseVerifier), and whatever the batches, each purchase token is delivered
exactly once, each request leaves its own audit row, and a request that is not paid or names a token
twice changes nothing of the others."""
import concurrent.futures
import random

from support import assert_verify_answer, new_user_id, wait_until
from test_google_purchases import at_google, calls, google, google_without_faults, purchase, sha256, verify  # noqa: F401

PURCHASES = 200
POSTED_TWICE = 40
UNKNOWN_TOKENS = 10


def placeholders(values):
    return ", ".join(["%s"] * len(values))


def test_many_purchases_at_once_are_each_delivered_once_with_one_audit_row_per_request(api, db, google):
    bought = [purchase(google) for _ in range(PURCHASES)]
    owners = {b["purchase_token"]: new_user_id() for b in bought}
    requests_ = [(b["purchase_token"], owners[b["purchase_token"]]) for b in bought]
    requests_ += [(b["purchase_token"], new_user_id()) for b in bought[:POSTED_TWICE]]
    unknown = [f"unknown-batch-{random.getrandbits(64):016x}" for _ in range(UNKNOWN_TOKENS)]
    requests_ += [(token, new_user_id()) for token in unknown]
    random.shuffle(requests_)

    with concurrent.futures.ThreadPoolExecutor(64) as pool:
        answers = list(pool.map(lambda r: (r, verify(api, r[0], r[1])), requests_))

    statuses = {}
    for (token, user), answer in answers:
        statuses.setdefault(token, []).append((user, answer.status_code, answer.json()))
    for token in unknown:
        [(_, _, body)] = statuses[token]
        assert body["status"] == "not_paid", body
    for b in bought:
        token = b["purchase_token"]
        seen = sorted(body["status"] for _, _, body in statuses[token])
        expected = ["already_delivered", "delivered"] if len(statuses[token]) == 2 else ["delivered"]
        assert seen == expected, statuses[token]
        [(winner, _, delivered)] = [s for s in statuses[token] if s[2]["status"] == "delivered"]
        assert delivered["transactions"][0]["transaction_id"] == b["order_id"], delivered
        row = db.one("SELECT user_id, order_id, state, store FROM transactions WHERE purchase_token_sha256 = %s",
                     sha256(token))
        assert (row["user_id"], row["order_id"], row["state"], row["store"]) == (
            winner, delivered["order_id"], "delivered", "google_play"), (row, delivered)

    order_ids = [b["order_id"] for b in bought]
    marks = placeholders(order_ids)
    assert db.scalar(f"SELECT COUNT(*) FROM transactions WHERE transaction_id IN ({marks})", *order_ids) == PURCHASES
    delivered_events = db.query(
        f"SELECT transaction_id, COUNT(*) AS n FROM events WHERE type = 'delivered' AND store = 'google_play'"
        f" AND transaction_id IN ({marks}) GROUP BY transaction_id", *order_ids)
    assert len(delivered_events) == PURCHASES and {e["n"] for e in delivered_events} == {1}, delivered_events
    hashes = [sha256(token) for token in statuses]
    audits = db.query(
        f"SELECT sha256, COUNT(*) AS n FROM receipts WHERE kind = 'google' AND sha256 IN ({placeholders(hashes)})"
        " GROUP BY sha256", *hashes)
    assert {a["sha256"]: a["n"] for a in audits} == {sha256(t): len(s) for t, s in statuses.items()}, audits
    # Written in batches: the audit rows of one batch are one INSERT, with one verified_at.
    batches = db.scalar(f"SELECT COUNT(DISTINCT verified_at) FROM receipts WHERE kind = 'google'"
                        f" AND sha256 IN ({placeholders(hashes)})", *hashes)
    assert batches <= len(requests_) // 2, f"{len(requests_)} requests written in {batches} batches"

    # Each delivery owed Google one consume, made once.
    sample = bought[:5] + bought[-5:]
    for b in sample:
        wait_until(lambda: at_google(google, b["purchase_token"])["consumed"], 30, "the purchase consumed at Google")
    wait_until(lambda: db.scalar(f"SELECT COUNT(*) FROM google_finishes WHERE transaction_id IN ({marks})",
                                 *order_ids) == 0, 60, "every google_finishes row gone")
    for b in sample:
        assert [c["status"] for c in calls(google, "consume", b["purchase_token"])] == [200]


def test_a_purchase_the_database_refuses_fails_alone_and_its_batch_is_delivered(api, db, google, run_dir):
    log = run_dir / "logs" / "iap-fcgi.log"
    offset = log.stat().st_size
    good = [purchase(google) for _ in range(46)]
    # An order id longer than transactions.transaction_id holds: its row cannot be written.
    refused = [purchase(google, order_id=f"GPA.{random.getrandbits(64):016x}." + "9" * 70) for _ in range(2)]
    posted = good[:23] + refused[:1] + good[23:] + refused[1:]
    with concurrent.futures.ThreadPoolExecutor(len(posted)) as pool:
        answers = list(pool.map(lambda b: verify(api, b["purchase_token"], new_user_id()), posted))

    for b, answer in zip(posted, answers):
        expected = "retry_later" if b in refused else "delivered"
        assert_verify_answer(answer, expected)
    wait_until(lambda: "answers not written together" in log.read_bytes()[offset:].decode(errors="replace"), 10,
               "a batch holding a refused purchase written again one by one")
    hashes = [sha256(b["purchase_token"]) for b in posted]
    rows = db.query(f"SELECT purchase_token_sha256 AS sha, state FROM transactions"
                    f" WHERE purchase_token_sha256 IN ({placeholders(hashes)})", *hashes)
    assert sorted((r["sha"], r["state"]) for r in rows) == sorted(
        (sha256(b["purchase_token"]), "delivered") for b in good), rows
    audits = db.query(f"SELECT sha256, COUNT(*) AS n FROM receipts WHERE kind = 'google'"
                      f" AND sha256 IN ({placeholders(hashes)}) GROUP BY sha256", *hashes)
    assert {a["sha256"]: a["n"] for a in audits} == {h: 1 for h in hashes}, audits
