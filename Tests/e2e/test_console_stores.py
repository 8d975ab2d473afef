"""The support console knows both stores and subscriptions (docs/api.md "Google Play: the same ledger for
Android", "Subscriptions: what a player is entitled to, now"): a player is found by Google's order id
(`GPA.…`) and by a purchase token (posted, looked up by its SHA-256, never shown whole); the player's page
shows each purchase's store, a Google purchase's refunded quantity, Google's refund reviews beside Apple's
refund requests, and each subscription chain with its status and whether the `entitlements` view lists it
now; the reports chart revenue by store. Same browser and helpers as test_console.py.

The Google purchase, its partial refund and its refund review come through the real routes (verify, a
voidedPurchaseNotification refundType 2, a pendingRefundReviewNotification, all against the Google Play
double); the `subscriptions` rows of many statuses are written in SQL, the extended chain is the
simulator's, delivered by its JWS."""
import uuid

import pytest
import requests
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import Select

from support import PAY_6, assert_verify_answer, new_user_id
from test_console import (add_staff, browser_factory, click, console_url, fresh_login_failures, login,  # noqa: F401
                          notice, search, session_client, table_text)
from test_google_refund_reviews import open_review, push_review
from test_google_refunds import pushed_partial_refund, void_at_google
from test_subscriptions_iapctl import sim_received, subscribed

PACKAGE = "com.example.game"


def google_purchase(api, google, user_id, quantity=1):
    """A purchase at the Google Play double delivered to `user_id` by POST /v1/google/purchases/verify:
    (transaction_id, purchase_token)."""
    bought = requests.post(google + "/purchases", timeout=10,
                           json={"package_name": PACKAGE, "product_id": PAY_6, "quantity": quantity})
    assert bought.status_code == 200, bought.text
    token = bought.json()["purchase_token"]
    answer = api.post_json("/v1/google/purchases/verify", {
        "package_name": PACKAGE, "product_id": PAY_6, "purchase_token": token, "user_id": user_id})
    [entry] = assert_verify_answer(answer, "delivered")["transactions"]
    return entry["transaction_id"], token


@pytest.fixture(scope="module")
def viewer_browser(browser_factory):  # noqa: F811
    driver = browser_factory()
    login(driver, add_staff("viewer"))
    return driver


def cells(driver, table_id, key):
    """The cells (by class, else text) of the row of table `table_id` whose text holds `key`."""
    row = driver.find_element(By.XPATH, f"//table[@id='{table_id}']//tr[td[contains(., '{key}')]]")
    return [cell.text for cell in row.find_elements(By.TAG_NAME, "td")]


def test_a_google_purchase_found_by_its_order_id_with_its_store_partial_refund_and_review(
        viewer_browser, api, db, google):
    driver = viewer_browser
    user_id = new_user_id()
    transaction_id, token = google_purchase(api, google, user_id, quantity=3)
    assert transaction_id.startswith("GPA."), transaction_id
    void_at_google(google, token, quantity=1)
    _, response = pushed_partial_refund(api, google, token, transaction_id)
    assert response.status_code == 204, response.text
    push_review(api, google, transaction_id, open_review(google, transaction_id))

    search(driver, "google_order", transaction_id)
    assert driver.find_element(By.ID, "user-id").text == user_id, notice(driver)
    row = cells(driver, "transactions", transaction_id)
    assert row[0].splitlines() == ["Google Play", token[:8] + "…"], row
    assert row[4] == "3 (1 refunded)", row
    assert "Google then refunded 1 of 3" in row[-1], row
    review = cells(driver, "refund-requests", transaction_id)
    assert review[1] == "Google Play" and review[3] == "REFUND_REASON_UNWANTED", review
    assert review[-2].endswith("Google has not decided yet."), review
    assert "Google Play" in table_text(driver, "events")
    notifications = table_text(driver, "google-notifications")
    assert "pendingRefundReview" in notifications and "partly_refunded" in notifications, notifications
    assert token not in driver.page_source, "a purchase token is never shown whole"


def test_a_purchase_token_is_searched_by_a_posted_form_and_never_shown(viewer_browser, api, db, google):
    driver = viewer_browser
    user_id = new_user_id()
    _, token = google_purchase(api, google, user_id)
    search(driver, "purchase_token", token)
    assert driver.find_element(By.ID, "user-id").text == user_id, notice(driver)
    assert token not in driver.current_url and token not in driver.page_source

    unknown = "unknown-" + uuid.uuid4().hex
    search(driver, "purchase_token", unknown)
    assert notice(driver) == f"Nothing found for the token {unknown[:8]}…"
    assert unknown not in driver.page_source, "not echoed back in the search box"

    client, _ = session_client(add_staff("viewer"))
    answer = client.get(console_url() + "/console/search", params={"kind": "purchase_token", "q": token}, timeout=30)
    assert answer.status_code == 200 and "not put in an address" in answer.text, answer.text[:300]
    assert user_id not in answer.text and token not in answer.text


def insert_chain(db, user_id, status, expires_in_hours, grace_hours=None, auto_renew=1, intent=None):
    """A subscriptions row (no route writes the table's chains for the console to read yet)."""
    chain = str(uuid.uuid4().int % 10**15)
    db.execute(
        "INSERT INTO subscriptions (original_transaction_id, store, user_id, product_id, environment, status,"
        " expires_at, grace_period_expires_at, auto_renew, auto_renew_product_id, expiration_intent,"
        " latest_transaction_id, latest_purchase_at, last_signed_date, created_at, updated_at)"
        " VALUES (%s, 'app_store', %s, 'vip.monthly', 'Production', %s, UTC_TIMESTAMP(3) + INTERVAL %s HOUR,"
        " IF(%s IS NULL, NULL, UTC_TIMESTAMP(3) + INTERVAL %s HOUR), %s, 'vip.monthly', %s, %s,"
        " UTC_TIMESTAMP(3) - INTERVAL 30 DAY, UTC_TIMESTAMP(3), UTC_TIMESTAMP(3), UTC_TIMESTAMP(3))",
        chain, user_id, status, expires_in_hours, grace_hours, grace_hours, auto_renew, intent, chain)
    return chain


def test_each_subscription_chain_with_its_status_and_entitlement_now(viewer_browser, db):
    driver = viewer_browser
    user_id = new_user_id()
    chains = {
        "paid": insert_chain(db, user_id, "active", 24 * 10),
        "grace": insert_chain(db, user_id, "grace_period", -2, grace_hours=48),
        "lapsed": insert_chain(db, user_id, "active", -1),   # past expires_at, no notification said so
        "retry": insert_chain(db, user_id, "billing_retry", -5, auto_renew=1),
        "expired": insert_chain(db, user_id, "expired", -24 * 3, auto_renew=0, intent="VOLUNTARY"),
    }
    search(driver, "user", user_id)
    rows = {name: cells(driver, "subscriptions", chain) for name, chain in chains.items()}
    until = db.scalar("SELECT DATE_FORMAT(entitled_until, '%%Y-%%m-%%d %%H:%%i:%%s') FROM entitlements"
                      " WHERE original_transaction_id = %s", chains["paid"])
    assert rows["paid"][4] == "active" and rows["paid"][9].startswith(f"yes, until {until}"), rows["paid"]
    assert rows["paid"][7] == "on (next: vip.monthly)", rows["paid"]
    assert rows["grace"][4] == "grace_period" and rows["grace"][9].startswith("yes, until"), rows["grace"]
    assert rows["grace"][6], "the grace period's end is shown"
    for name in ("lapsed", "retry", "expired"):
        assert rows[name][9] == "no", (name, rows[name])
    assert "no renewal has arrived" in rows["lapsed"][10], rows["lapsed"]
    assert rows["expired"][4] == "expired" and rows["expired"][7] == "off" and rows["expired"][8] == "VOLUNTARY"


def test_reports_chart_revenue_by_store(viewer_browser, api, db, google):
    driver = viewer_browser
    google_purchase(api, google, new_user_id())
    row = db.one("SELECT day, currency, deliveries, net FROM report_daily_revenue"
                 " WHERE day = UTC_DATE() AND store = 'google_play' AND product_id = %s", PAY_6)
    driver.get(console_url() + "/console/reports")
    bar = f"{row['day']} Google Play {PAY_6} {row['currency']}: {row['deliveries']}</title>"
    assert bar in driver.page_source, "the deliveries chart's Google Play bar of today is the view's figure"
    assert "Production net revenue per day, by store and currency" in driver.page_source


def test_an_admin_extends_a_chain_at_apple_and_a_support_role_may_not(browser_factory, api, db, simulator):  # noqa: F811
    """A chain made at the simulator and delivered by its JWS (test_subscriptions_iapctl's `subscribed`)."""
    user_id = new_user_id()
    chain = subscribed(api, simulator, user_id)["original_transaction_id"]
    form = {"action": "subscription_extend", "user": user_id, "target": chain, "value": "3", "reason": "3"}

    support_client, csrf = session_client(add_staff("support"))
    page = support_client.get(console_url() + "/console/player", params={"user": user_id}, timeout=30).text
    assert chain in page and "extend-button" not in page, "no extension form for support"
    for path in ("/console/confirm", "/console/act"):
        answer = support_client.post(console_url() + path, data=dict(form, csrf=csrf), timeout=30)
        assert answer.status_code == 403 and "may not do this" in answer.text, (path, answer.status_code)

    admin = add_staff("admin")
    driver = browser_factory()
    login(driver, admin)
    search(driver, "user", user_id)
    row = f"//table[@id='subscriptions']//tr[td[contains(., '{chain}')]]"
    driver.find_element(By.XPATH, row + "//input[@name='value']").send_keys("3")
    Select(driver.find_element(By.XPATH, row + "//select[@name='reason']")).select_by_value("3")
    click(driver, By.XPATH, row + "//button")
    assert "renewal date" in driver.find_element(By.ID, "question").text
    assert sim_received(simulator) == [], "nothing asked of Apple before confirming"
    click(driver, By.ID, "confirm")
    result = driver.find_element(By.ID, "result").text
    assert result.startswith("3 days, reason 3 (Production, request ") and "extended: expires" in result, result
    assert [(r["method"], r["body"]["extendByDays"], r["body"]["extendReasonCode"], r["status"])
            for r in sim_received(simulator)] == [("PUT", 3, 3, 200)]

    admin_client, admin_csrf = session_client(admin)
    answer = admin_client.post(console_url() + "/console/act", data=dict(form, csrf=admin_csrf, value="91"), timeout=30)
    assert "refused: days must be 1 to 90" in answer.text, answer.text[:500]
    assert len(sim_received(simulator)) == 1, "a refused extension never reaches Apple"

    rows = db.query("SELECT staff_name, action, user_id, client_ip, result FROM staff_audit WHERE target = %s"
                    " ORDER BY audit_id", chain)
    assert [(r["staff_name"], r["action"], r["user_id"], r["client_ip"]) for r in rows] == [
        (admin, "subscription_extend", user_id, "127.0.0.1")] * 2, rows
    assert rows[0]["result"] == result and rows[1]["result"].startswith("refused: days must be 1 to 90")
