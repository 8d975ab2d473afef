"""App Store Server Notifications V2 from the simulator (imported by appstore_sim.py; tests import
`notification` and `signed_notification` to sign their own).

Control port:
  POST /notifications/send  {"url", "notification_type", "subtype"?, "notification_uuid"?, "signed_ms"?,
                             "environment"? ("Production"), "bundle_id"?, "retry_intervals_s"?,
                             "consumption_request_reason"? (data.consumptionRequestReason of a
                             CONSUMPTION_REQUEST: UNINTENDED_PURCHASE, FULFILLMENT_ISSUE,
                             UNSATISFIED_WITH_PURCHASE, LEGAL, OTHER),
                             "transaction": {signed_data.transaction() fields: product_id, transaction_id,
                             app_account_token, revocation_ms, environment, ...; and revocation_reason,
                             revocation_type, revocation_percentage for a partial refund: REFUND with
                             "revocation_type": "REFUND_PRORATED", "revocation_percentage": 40000} or null (TEST),
                             "renewal_info"? (subscriptions: see subscription_notifications.py)}
      Signs the transaction and the notification around it with the test StoreKit PKI and POSTs
      {"signedPayload"} to url from a thread of its own; answers at once with {"notification_uuid",
      "transaction_id", "signed_payload"}. A failed attempt (no answer within 10 s, or not 2xx) is sent
      again after each of retry_intervals_s in turn, as Apple does in production (1, 12, 24, 48 and 72
      hours: the default; tests pass seconds). Sandbox notifications are not retried, as at Apple.
  GET /notifications/sent   every notification sent: {notification_uuid, url, attempts: [{at_ms,
                            status or error}], delivered}
Every notification sent is kept for Get Notification History:
  POST /inApps/v1/notifications/history[?paginationToken=T] on the production and sandbox ports, JWT
  checked as for the other Server API endpoints (401 otherwise), body {"startDate", "endDate" (ms),
  "notificationType"?, "transactionId"?}: {"notificationHistory": [{"signedPayload", "sendAttempts"}],
  "hasMore", "paginationToken"}, the environment's notifications signed in [startDate, endDate), oldest
  first, PAGE_SIZE a page (control key page_size through POST /notifications/settings {"page_size"}).
"""
import json
import threading
import time
import urllib.error
import urllib.request
import uuid

import signed_data
import subscription_notifications

HISTORY_PATH = "/inApps/v1/notifications/history"
CONTROL_PREFIX = "/notifications/"
APPLE_RETRY_INTERVALS_S = (3600, 12 * 3600, 24 * 3600, 48 * 3600, 72 * 3600)
PAGE_SIZE = 20
SEND_TIMEOUT_S = 10
# transaction fields of /notifications/send that replace what signed_data.transaction() writes for a refund.
REVOCATION_FIELDS = {"revocation_reason": "revocationReason", "revocation_type": "revocationType",
                     "revocation_percentage": "revocationPercentage"}


def notification(notification_type, signed_transaction_info=None, *, subtype=None, notification_uuid=None,
                 signed_ms=None, bundle_id="com.example.game", environment="Production",
                 consumption_request_reason=None, signed_renewal_info=None):
    """A notification payload as Apple writes it (responseBodyV2DecodedPayload). A CONSUMPTION_REQUEST
    carries data.consumptionRequestReason (Apple leaves it out when the customer gave none)."""
    data = {"appAppleId": 1234567890, "bundleId": bundle_id, "bundleVersion": "1", "environment": environment}
    if signed_transaction_info is not None:
        data["signedTransactionInfo"] = signed_transaction_info
    if signed_renewal_info is not None:
        data["signedRenewalInfo"] = signed_renewal_info
    if consumption_request_reason is not None:
        data["consumptionRequestReason"] = consumption_request_reason
    payload = {"notificationType": notification_type, "notificationUUID": notification_uuid or str(uuid.uuid4()),
               "version": "2.0", "signedDate": signed_ms or int(time.time() * 1000), "data": data}
    if subtype:
        payload["subtype"] = subtype
    return payload


def signed_notification(certs, notification_type, transaction_payload=None, *, chain="good", renewal_payload=None,
                        **fields):
    """(signedPayload, payload): the transaction (a signed_data.transaction() dict, or None) and the renewal info
    (a signed_data.renewal_info() dict, or None) signed, put in a notification, and that signed too."""
    info = signed_data.sign(transaction_payload, certs, chain=chain) if transaction_payload is not None else None
    if renewal_payload is not None:
        fields["signed_renewal_info"] = signed_data.sign(renewal_payload, certs, chain=chain)
    payload = notification(notification_type, info, **fields)
    return signed_data.sign(payload, certs, chain=chain), payload


class Notifications:
    """What was sent, the retries under way, and Get Notification History."""

    def __init__(self, certs):
        self.certs = certs
        self.sent = []           # dicts, oldest first (also the history)
        self.page_size = PAGE_SIZE
        self.lock = threading.Lock()
        self.stopped = threading.Event()

    def stop(self):
        """Retries still waiting are not made (the simulator was reset)."""
        self.stopped.set()

    # control
    def control(self, method, path, body):
        try:
            if path == CONTROL_PREFIX + "send" and method == "POST":
                return 200, self.send(json.loads(body or b"{}"))
            if path == CONTROL_PREFIX + "sent" and method == "GET":
                with self.lock:
                    return 200, [{key: entry[key] for key in ("notification_uuid", "url", "attempts", "delivered",
                                                              "notification_type")} for entry in self.sent]
            if path == CONTROL_PREFIX + "settings" and method == "POST":
                page_size = json.loads(body or b"{}").get("page_size")
                if not isinstance(page_size, int) or isinstance(page_size, bool) or page_size < 1:
                    raise ValueError("page_size is a positive integer")
                self.page_size = page_size
                return 200, {"page_size": page_size}
        except ValueError as error:
            return 400, {"error": str(error)}
        return 404, {"error": "not found"}

    def send(self, body):
        if not isinstance(body, dict) or not isinstance(body.get("url"), str) \
                or not isinstance(body.get("notification_type"), str):
            raise ValueError('the body must be {"url": ..., "notification_type": ..., "transaction": {...}}')
        environment = body.get("environment", "Production")
        intervals = body.get("retry_intervals_s", APPLE_RETRY_INTERVALS_S)
        if not isinstance(intervals, list | tuple) or not all(isinstance(i, int | float) and i >= 0 for i in intervals):
            raise ValueError("retry_intervals_s is a list of seconds")
        transaction = body.get("transaction")
        payload = None
        if transaction is not None:
            if not isinstance(transaction, dict) or not isinstance(transaction.get("product_id"), str):
                raise ValueError('transaction must be {"product_id": ..., ...} or null')
            fields = {key: value for key, value in transaction.items() if key != "product_id"}
            fields.setdefault("environment", environment)
            revocation = {apple: fields.pop(key) for key, apple in REVOCATION_FIELDS.items() if key in fields}
            try:
                payload = signed_data.transaction(transaction["product_id"], **fields)
            except TypeError as error:
                raise ValueError(f"transaction: {error}") from None
            payload.update(revocation)
        renewal_fields = body.get("renewal_info")
        renewal = None
        if subscription_notifications.is_subscription(payload, renewal_fields):
            if not isinstance(renewal_fields, dict | None):
                raise ValueError("renewal_info is an object of signed_data.renewal_info() fields")
            try:
                renewal = subscription_notifications.renewal_info_for(
                    body["notification_type"], body.get("subtype"), payload, signed_ms=body.get("signed_ms"),
                    **(renewal_fields or {}))
            except TypeError as error:
                raise ValueError(f"renewal_info: {error}") from None
        signed, notified = signed_notification(
            self.certs, body["notification_type"], payload, subtype=body.get("subtype"),
            notification_uuid=body.get("notification_uuid"), signed_ms=body.get("signed_ms"),
            bundle_id=body.get("bundle_id", "com.example.game"), environment=environment,
            consumption_request_reason=body.get("consumption_request_reason"), renewal_payload=renewal)
        entry = {"notification_uuid": notified["notificationUUID"], "notification_type": body["notification_type"],
                 "url": body["url"], "environment": environment, "signed_ms": notified["signedDate"],
                 "transaction_id": payload and payload["transactionId"], "signed_payload": signed,
                 "attempts": [], "delivered": False}
        with self.lock:
            self.sent.append(entry)
        retries = list(intervals) if environment == "Production" else []
        threading.Thread(target=self._deliver, args=(entry, retries), daemon=True).start()
        return {"notification_uuid": entry["notification_uuid"], "transaction_id": entry["transaction_id"],
                "signed_payload": signed}

    def _deliver(self, entry, retries):
        waits = [0] + retries
        for wait in waits:
            if self.stopped.wait(wait):
                return
            attempt = {"at_ms": int(time.time() * 1000)}
            request = urllib.request.Request(entry["url"], data=json.dumps({"signedPayload": entry["signed_payload"]})
                                             .encode(), headers={"Content-Type": "application/json"}, method="POST")
            try:
                with urllib.request.urlopen(request, timeout=SEND_TIMEOUT_S) as answer:
                    attempt["status"] = answer.status
            except urllib.error.HTTPError as error:
                attempt["status"] = error.code
            except (urllib.error.URLError, OSError) as error:
                attempt["error"] = str(getattr(error, "reason", error))
            with self.lock:
                entry["attempts"].append(attempt)
                if 200 <= attempt.get("status", 0) < 300:
                    entry["delivered"] = True
                    return

    # Get Notification History
    def history(self, environment, request, tokens):
        if request.method != "POST":
            return 405, b'{"errorMessage":"method not allowed"}'
        if tokens.problem(request.authorization) is not None:
            return 401, b""
        try:
            query = json.loads(request.body or b"{}")
            start, end = query["startDate"], query["endDate"]
            if not isinstance(start, int) or not isinstance(end, int):
                raise ValueError
        except (ValueError, KeyError, TypeError):
            return 400, b'{"errorCode":4000006,"errorMessage":"Invalid request."}'
        token = dict(part.partition("=")[::2] for part in request.query.split("&") if part).get("paginationToken")
        offset = int(token) if token and token.isdigit() else 0
        with self.lock:
            matching = [entry for entry in self.sent
                        if entry["environment"].lower() == environment and start <= entry["signed_ms"] < end
                        and query.get("notificationType") in (None, entry["notification_type"])
                        and query.get("transactionId") in (None, entry["transaction_id"])]
            matching.sort(key=lambda entry: entry["signed_ms"])
            page = matching[offset:offset + self.page_size]
            items = [{"signedPayload": entry["signed_payload"],
                      "sendAttempts": [{"attemptDate": a["at_ms"],
                                        "sendAttemptResult": "SUCCESS" if 200 <= a.get("status", 0) < 300
                                        else "UNSUCCESSFUL_HTTP_RESPONSE_CODE" if "status" in a else "TIMED_OUT"}
                                       for a in entry["attempts"]]} for entry in page]
        has_more = offset + len(page) < len(matching)
        answer = {"notificationHistory": items, "hasMore": has_more}
        if has_more:
            answer["paginationToken"] = str(offset + len(page))
        return 200, json.dumps(answer).encode()
