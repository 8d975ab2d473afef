"""The notification metrics: accepted notifications by type, refusals by a reason of a fixed set
(never a value the sender wrote)."""
from notification_support import deliver_by_verify, post, refunded, send, signed
from support import new_user_id
from test_operations_metrics import delta, scrape


def test_notifications_are_counted_by_type_and_refusals_by_reason(api, db):
    payload, _ = deliver_by_verify(api, db, new_user_id())
    before = scrape()

    send(api, "REFUND", refunded(payload))
    send(api, "TEST")
    foreign, _ = signed("TEST", bundle_id="com.example.other")
    assert post(api, foreign).status_code == 400

    after = scrape()
    assert delta(before, after, "iap_notifications_total", type="REFUND", subtype="") == 1
    assert delta(before, after, "iap_notifications_total", type="TEST", subtype="") == 1
    assert delta(before, after, "iap_notifications_rejected_total", reason="bundle") == 1
    assert not [series for (name, series) in after if name == "iap_notifications_rejected_total"
                and any("com.example.other" in value for _, value in series)], "a sender's text became a label"
