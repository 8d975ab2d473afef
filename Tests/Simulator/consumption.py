"""Send Consumption Information (App Store Server API v2) on the simulator (imported by appstore_sim.py):

  PUT /inApps/v2/transactions/consumption/{transactionId}   on the production and sandbox ports

The bearer token is checked as for the other Server API endpoints (server_api.TokenChecker; 401
otherwise). The body is validated as Apple does (ConsumptionRequest), each refusal a 400 with Apple's
errorCode:
  customerConsented not true                    4000035 InvalidCustomerConsentedError
  deliveryStatus not one of DELIVERY_STATUSES   4000036 InvalidDeliveryStatusError
  sampleContentProvided not a boolean           4000041 InvalidSampleContentProvidedError
  refundPreference not one of REFUND_PREFERENCES, or GRANT_PRORATED without a consumptionPercentage
  above 0                                       4000044 InvalidRefundPreferenceError
  consumptionPercentage not an integer 0-100000 CONSUMPTION_PERCENTAGE_OUT_OF_RANGE
  consumptionPercentage for an auto-renewable subscription   CONSUMPTION_PERCENTAGE_AUTO_RENEWABLE
  consumptionPercentage other than 0 when deliveryStatus is not DELIVERED   UNDELIVERED_PERCENTAGE_NON_ZERO
(Apple documents the last three errors, ConsumptionPercentageOutOfRangeError,
ConsumptionPercentageAutoRenewableSubscriptionError and UndeliveredConsumptionPercentageNonZeroError,
without their numbers in the pages we found: the simulator's own numbers stand in for them.)
Accepted: 202 with an empty body. A body that is not a JSON object: 400 4000000 (GeneralBadRequestError).

Control port:
  POST /consumption/settings  {"fault": null|429|500, "fail_next": N (0: until cleared), "retry_after_ms": ms
                              (a 429's Retry-After is now + this, as a UNIX time in ms), "latency_ms": ms,
                              "auto_renewable": [transaction ids that are auto-renewable subscriptions]}
  GET  /consumption/received  every PUT that arrived, oldest first: {environment, transaction_id, body (the
                              parsed JSON, or null), status (what was answered), at_ms (UNIX ms on arrival)}
Both are cleared by POST /control {"reset": true}.
"""
import json
import time

PATH_PREFIX = "/inApps/v2/transactions/consumption/"
CONTROL_PREFIX = "/consumption/"
DELIVERY_STATUSES = ("DELIVERED", "UNDELIVERED_QUALITY_ISSUE", "UNDELIVERED_WRONG_ITEM",
                     "UNDELIVERED_SERVER_OUTAGE", "UNDELIVERED_OTHER")
REFUND_PREFERENCES = ("DECLINE", "GRANT_FULL", "GRANT_PRORATED")
GENERAL_BAD_REQUEST = 4000000
INVALID_CUSTOMER_CONSENTED = 4000035
INVALID_DELIVERY_STATUS = 4000036
INVALID_SAMPLE_CONTENT_PROVIDED = 4000041
INVALID_REFUND_PREFERENCE = 4000044
CONSUMPTION_PERCENTAGE_OUT_OF_RANGE = 4000181
CONSUMPTION_PERCENTAGE_AUTO_RENEWABLE = 4000182
UNDELIVERED_PERCENTAGE_NON_ZERO = 4000183


def _is_int(value):
    return isinstance(value, int) and not isinstance(value, bool)


def problem(body, auto_renewable=False):
    """None for a ConsumptionRequest Apple takes, else (errorCode, errorMessage)."""
    if not isinstance(body, dict):
        return GENERAL_BAD_REQUEST, "Invalid request. The body must be a JSON object."
    if body.get("customerConsented") is not True:
        return INVALID_CUSTOMER_CONSENTED, "Invalid request. The customer consented field is required and must indicate the customer consented."
    delivery = body.get("deliveryStatus")
    if delivery not in DELIVERY_STATUSES:
        return INVALID_DELIVERY_STATUS, "Invalid request. The delivery status field is invalid."
    if not isinstance(body.get("sampleContentProvided"), bool):
        return INVALID_SAMPLE_CONTENT_PROVIDED, "Invalid request. The sample content provided field is invalid."
    percentage = body.get("consumptionPercentage")
    if "consumptionPercentage" in body:
        if not _is_int(percentage) or not 0 <= percentage <= 100000:
            return CONSUMPTION_PERCENTAGE_OUT_OF_RANGE, "Invalid request. The consumption percentage is out of range."
        if auto_renewable:
            return CONSUMPTION_PERCENTAGE_AUTO_RENEWABLE, "Invalid request. The consumption percentage is not supported for auto-renewable subscriptions."
        if delivery != "DELIVERED" and percentage != 0:
            return UNDELIVERED_PERCENTAGE_NON_ZERO, "Invalid request. The consumption percentage must be zero for this delivery status."
    preference = body.get("refundPreference")
    if "refundPreference" in body and preference not in REFUND_PREFERENCES:
        return INVALID_REFUND_PREFERENCE, "Invalid request. The refund preference field is invalid."
    if preference == "GRANT_PRORATED" and not (_is_int(percentage) and percentage > 0):
        return INVALID_REFUND_PREFERENCE, "Invalid request. GRANT_PRORATED needs a consumption percentage above 0."
    return None


class Consumption:
    """What arrived, the faults, and the answers."""

    def __init__(self):
        self.received = []
        self.auto_renewable = set()
        self.fault, self.fail_next, self.retry_after_ms, self.latency_ms = None, 0, 1000, 0

    def answer(self, environment, request, tokens):
        """(HTTP status, body, extra headers) for a PUT, recorded in `received`."""
        status, body, headers = self._answer(request, tokens)
        try:
            parsed = json.loads(request.body or b"null")
        except ValueError:
            parsed = None
        self.received.append({"environment": environment, "transaction_id": request.path[len(PATH_PREFIX):],
                              "body": parsed, "status": status, "at_ms": int(time.time() * 1000)})
        return status, body, headers

    def _answer(self, request, tokens):
        if request.method != "PUT":
            return 405, b'{"errorMessage":"method not allowed"}', ()
        if tokens.problem(request.authorization) is not None:
            return 401, b"", ()
        fault = self._take_fault()
        if fault == 429:
            return 429, b'{"errorCode":4290000,"errorMessage":"Rate limit exceeded."}', \
                (("Retry-After", str(int(time.time() * 1000) + self.retry_after_ms)),)
        if fault is not None:
            return fault, b'{"errorCode":5000000,"errorMessage":"An unknown error occurred."}', ()
        transaction_id = request.path[len(PATH_PREFIX):]
        try:
            body = json.loads(request.body or b"null")
        except ValueError:
            body = None
        refused = problem(body, transaction_id in self.auto_renewable)
        if refused is not None:
            return 400, json.dumps({"errorCode": refused[0], "errorMessage": refused[1]}).encode(), ()
        return 202, b"", ()

    def _take_fault(self):
        fault = self.fault
        if fault is not None and self.fail_next > 0:
            self.fail_next -= 1
            if self.fail_next == 0:
                self.fault = None
        return fault

    def control(self, method, path, body):
        try:
            if path == CONTROL_PREFIX + "received" and method == "GET":
                return 200, self.received
            if path == CONTROL_PREFIX + "settings" and method == "POST":
                self._update(json.loads(body or b"{}"))
                return 200, {"fault": self.fault, "fail_next": self.fail_next, "retry_after_ms": self.retry_after_ms,
                             "latency_ms": self.latency_ms, "auto_renewable": sorted(self.auto_renewable)}
        except ValueError as error:
            return 400, {"error": str(error)}
        return 404, {"error": "not found"}

    def _update(self, changes):
        if not isinstance(changes, dict):
            raise ValueError("the body must be a JSON object")
        for key, value in changes.items():
            if key == "fault" and value in (None, 429, 500, 503):
                self.fault = value
            elif key in ("fail_next", "retry_after_ms", "latency_ms") and _is_int(value) and value >= 0:
                setattr(self, key, value)
            elif key == "auto_renewable" and isinstance(value, list) and all(isinstance(t, str) for t in value):
                self.auto_renewable = set(value)
            else:
                raise ValueError(f"bad value for {key}: {value!r}")
