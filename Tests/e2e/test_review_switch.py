"""The review switch cannot be turned into a way to get sandbox purchases for free.

`/v1/version` publishes the review version and `app_version` is whatever a client sends: a
version "no client has" (the old procedure's `0.0.0`) is one any sandbox tester can send. Leaving
review is `iapctl review-version --clear`; a placeholder is refused by iapctl, and one left in the
settings table by the old procedure honours nothing. While the service has not read its settings
(the database was down at start-up), a sandbox receipt waits (`retry_later`) instead of being
rejected for good.
"""
import os
import subprocess
from pathlib import Path

import pytest

from support import PAY_6, assert_verify_answer, new_transaction_id, new_user_id, wait_until

REVIEW_VERSION = "1.3.0"
REPO = Path(__file__).resolve().parents[2]
IAPCTL = REPO / ".build" / "release" / "iapctl"


def run_iapctl(*arguments):
    return subprocess.run([str(IAPCTL), *arguments], cwd=REPO, env=os.environ, capture_output=True, text=True,
                          timeout=60)


def sandbox_receipt(receipts):
    bought = receipts.purchase(PAY_6, transaction_id=new_transaction_id())
    return bought["transaction_id"], receipts.app_receipt([bought], environment="Sandbox")


@pytest.mark.parametrize("placeholder", ["0.0.0", "0", "0.0", "00.000", "9.9.9", "999", "99.99.99", "x", "none",
                                         "-", "n/a"])
def test_iapctl_refuses_a_placeholder_review_version(db, placeholder):
    before = db.setting("review_version")

    result = run_iapctl("review-version", placeholder)

    assert result.returncode != 0, f"iapctl accepted {placeholder!r}: {result.stdout}"
    assert "--clear" in result.stderr, f"the refusal does not point at --clear: {result.stderr}"
    assert db.setting("review_version") == before


@pytest.mark.parametrize("version", ["1.3.0", "2", "10.0", "1.0.9", "2.0.0b1"])
def test_iapctl_takes_real_versions(db, iapctl, version):
    iapctl("review-version", version)
    assert db.setting("review_version") == version


def test_iapctl_clear_leaves_no_version_in_review(api, db, iapctl, receipts, service_settings):
    service_settings.apply(review_version=REVIEW_VERSION)

    iapctl("review-version", "--clear")

    assert db.setting("review_version") == ""
    wait_until(lambda: api.version()["review_version"] == "", 7, "GET /v1/version showing no review version")
    for app_version in (REVIEW_VERSION, None):
        _, receipt = sandbox_receipt(receipts)
        assert_verify_answer(api.verify(receipt, user_id=new_user_id(), app_version=app_version), "rejected")


def test_a_placeholder_left_in_the_settings_honours_no_sandbox_receipt(api, db, iapctl, receipts, service_settings):
    """A database that followed the old procedure still holds `0.0.0`: a client sending it gets nothing."""
    service_settings.apply(review_version=REVIEW_VERSION)
    db.set_setting("review_version", "0.0.0")
    wait_until(lambda: api.version()["review_version"] != REVIEW_VERSION, 7, "the service reading the new value")

    assert api.version("0.0.0")["in_review"] is False
    user_id = new_user_id()
    tid, receipt = sandbox_receipt(receipts)
    assert_verify_answer(api.verify(receipt, user_id=user_id, app_version="0.0.0"), "rejected")
    assert db.transaction(tid) is None
    assert "--clear" in iapctl("review-version"), "iapctl shows the placeholder without saying what to do"


@pytest.mark.outage("iap-fcgi")
def test_a_sandbox_receipt_waits_while_the_settings_are_unread(api, db, receipts, stack, service_settings):
    """The settings table unreadable when iap-fcgi starts (as with the database down at start-up, coming
    back before the first successful refresh): an App Review purchase is answered retry_later, not
    rejected with finish_transaction true, and is delivered once the settings are read."""
    service_settings.apply(review_version=REVIEW_VERSION)
    user_id = new_user_id()
    tid, receipt = sandbox_receipt(receipts)
    db.execute("RENAME TABLE settings TO settings_unreadable")
    try:
        stack("stop iap-fcgi")
        stack("start iap-fcgi")

        waiting = api.verify(receipt, user_id=user_id, app_version=REVIEW_VERSION)
        assert_verify_answer(waiting, "retry_later")
        assert "Retry-After" in waiting.headers
        assert db.transaction(tid) is None
        # Production receipts do not depend on the settings.
        bought = receipts.purchase(PAY_6, transaction_id=new_transaction_id())
        assert_verify_answer(api.verify(receipts.app_receipt([bought]), user_id=user_id), "delivered")
    finally:
        db.execute("RENAME TABLE settings_unreadable TO settings")
    wait_until(lambda: api.version()["review_version"] == REVIEW_VERSION, 7, "the service reading its settings")

    assert_verify_answer(api.verify(receipt, user_id=user_id, app_version=REVIEW_VERSION), "delivered")
    assert db.transaction(tid)["state"] == "delivered"
