"""Every session the service opens is strict (`sql_mode`), whatever the server's
global default: a value too long for its column is an error, never a value cut
short into another one."""
import pytest

from invariants import Ledger
from server_admin import globals_set
from support import PAY_6, PAY_30, assert_verify_answer, new_transaction_id, new_user_id

# transactions.transaction_id is VARCHAR(64).
COLUMN_LENGTH = 64


@pytest.mark.outage("iap-fcgi")
def test_transaction_id_longer_than_its_column_is_never_cut_short(api, db, stack, receipts):
    user_id = new_user_id()
    # Two ids that differ only past the column's length.
    shared_prefix = (new_transaction_id() * 4)[:COLUMN_LENGTH]
    first = receipts.purchase(PAY_6, transaction_id=shared_prefix + "1")
    second = receipts.purchase(PAY_30, transaction_id=shared_prefix + "2")
    ledger = Ledger("transaction id longer than its column, server sql_mode ''")
    with globals_set(sql_mode=""):
        stack("stop iap-fcgi")
        stack("start iap-fcgi")   # its sessions start with the server's permissive default
        answers = [ledger.post(api, receipts.app_receipt([bought]), user_id=user_id) for bought in (first, second)]
    stack("stop iap-fcgi")
    stack("start iap-fcgi")

    # The database refuses the id: the purchase is not delivered under another id, and the
    # receipt stays on record unverified, for the client's next try once the column is widened.
    statuses = [response.json().get("status") for response in answers]
    cut_short = db.query("SELECT transaction_id, user_id FROM transactions WHERE transaction_id LIKE %s",
                         shared_prefix + "%")
    assert cut_short == [], f"transaction ids stored cut short: {cut_short}; answers {statuses}"
    for response in answers:
        assert_verify_answer(response, "retry_later")
    rows = db.query("SELECT receipt_id, verified_at FROM receipts WHERE user_id = %s", user_id)
    assert len(rows) == 2 and all(row["verified_at"] is None for row in rows), rows
    ledger.check(db)
    # These rows can never be verified while the column is 64 characters: they would be left for
    # every `iapctl retry-pending` run of the suite (test_retry_pending expects none of others').
    db.execute("DELETE FROM receipts WHERE user_id = %s", user_id)
