"""The refund notifications the simulator writes (notifications.py) have Apple's shape:
CONSUMPTION_REQUEST with data.consumptionRequestReason, a prorated REFUND's revocation fields in the
signed transaction, REFUND_DECLINED as a plain notification."""
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import notifications  # noqa: E402


def test_a_consumption_request_carries_its_reason_in_data_only_when_given():
    asked = notifications.notification("CONSUMPTION_REQUEST", "jws", consumption_request_reason="UNINTENDED_PURCHASE",
                                       signed_ms=1_764_000_000_000)
    assert asked["notificationType"] == "CONSUMPTION_REQUEST" and asked["signedDate"] == 1_764_000_000_000
    assert asked["data"]["consumptionRequestReason"] == "UNINTENDED_PURCHASE"
    assert asked["data"]["signedTransactionInfo"] == "jws"
    assert "consumptionRequestReason" not in notifications.notification("CONSUMPTION_REQUEST", "jws")["data"]
    assert "consumptionRequestReason" not in notifications.notification("REFUND_DECLINED", "jws")["data"]


def test_send_puts_a_partial_refunds_fields_into_the_signed_transaction(tmp_path, monkeypatch):
    """What /notifications/send signs, caught before signing (no PKI needed) and not POSTed anywhere."""
    signed = {}

    def keep(payload, certs, chain="good"):
        signed.setdefault("transaction" if "transactionId" in payload else "notification", payload)
        return "signed"

    monkeypatch.setattr(notifications.signed_data, "sign", keep)
    sender = notifications.Notifications(str(tmp_path))
    monkeypatch.setattr(sender, "_deliver", lambda entry, retries: None)
    sender.send({"url": "http://127.0.0.1:9/", "notification_type": "REFUND", "retry_intervals_s": [],
                 "transaction": {"product_id": "com.example.game.gems", "revocation_ms": 1_764_000_000_000,
                                 "revocation_type": "REFUND_PRORATED", "revocation_percentage": 40000,
                                 "revocation_reason": 0}})
    transaction = signed["transaction"]
    assert (transaction["revocationType"], transaction["revocationPercentage"], transaction["revocationReason"]) == (
        "REFUND_PRORATED", 40000, 0)
    assert transaction["revocationDate"] == 1_764_000_000_000
