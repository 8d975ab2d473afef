"""The Google Play Developer API as the double answers it (imported by googleplay_sim.py): purchases,
consume and acknowledge, voided purchases and refund reviews, each answered in Google's shapes and with
Google's checks. No I/O: googleplay_sim.py routes requests here and sends what comes back."""
import base64
import json
import re
import secrets
import time
from datetime import datetime, timezone

STATES = ("PURCHASED", "PENDING", "CANCELLED")
PREFERENCES = ("APPROVE", "DECLINE", "NEUTRAL")
MAX_VOIDED_AGE_MS = 30 * 24 * 3600 * 1000
MAX_VOIDED_PAGE = 1000
MAX_ACCOUNT_ID = 64

_API = r"^/androidpublisher/v3/applications/(?P<package>[^/]+)"
ENDPOINTS = (
    ("GET", "productsv2", re.compile(_API + r"/purchases/productsv2/tokens/(?P<token>[^/]+)$")),
    ("POST", "consume", re.compile(_API + r"/purchases/products/(?P<product>[^/]+)/tokens/(?P<token>[^/:]+):consume$")),
    ("POST", "acknowledge",
     re.compile(_API + r"/purchases/products/(?P<product>[^/]+)/tokens/(?P<token>[^/:]+):acknowledge$")),
    ("GET", "voidedpurchases", re.compile(_API + r"/purchases/voidedpurchases$")),
    ("POST", "reviewrefund", re.compile(_API + r"/orders/(?P<order>[^/:]+):reviewrefund$")),
)


def google_error(code, message, reason, status):
    """Google's error body (status like "INVALID_ARGUMENT", reason like "invalidPurchaseState")."""
    return {"error": {"code": code, "message": message,
                      "errors": [{"message": message, "domain": "androidpublisher", "reason": reason}],
                      "status": status}}


def not_found(what):
    return 404, google_error(404, f"{what} not found.", "notFound", "NOT_FOUND")


def invalid(message, reason="invalid"):
    return 400, google_error(400, message, reason, "INVALID_ARGUMENT")


def rfc3339(ms):
    return datetime.fromtimestamp(ms / 1000, timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.") + f"{ms % 1000:03d}Z"


def new_order_id():
    digits = lambda n: "".join(secrets.choice("0123456789") for _ in range(n))  # noqa: E731
    return f"GPA.{digits(4)}-{digits(4)}-{digits(4)}-{digits(5)}"


def new_purchase_token():
    """Shaped like Google's: letters, then a long URL-safe part after a dot."""
    letters = "".join(secrets.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(24))
    return letters + ".AO-J1O" + secrets.token_urlsafe(96)


def _is_int(value):
    return isinstance(value, int) and not isinstance(value, bool)


class Purchase:
    def __init__(self, package, product, quantity, state, test, account_id, order_id, token, region, time_ms):
        self.package, self.product, self.quantity, self.state = package, product, quantity, state
        self.test, self.account_id, self.order_id, self.token = test, account_id, order_id, token
        self.region, self.time_ms = region, time_ms
        self.acknowledged = self.consumed = False
        self.refunded_quantity = 0

    def productsv2(self):
        """The purchases.productsv2 resource (ProductPurchaseV2)."""
        offer = {"quantity": self.quantity, "refundableQuantity": self.quantity - self.refunded_quantity,
                 "consumptionState": "CONSUMPTION_STATE_CONSUMED" if self.consumed
                 else "CONSUMPTION_STATE_YET_TO_BE_CONSUMED",
                 "purchaseOptionId": "legacy-base"}
        body = {"kind": "androidpublisher#productPurchaseV2",
                "productLineItem": [{"productId": self.product, "productOfferDetails": offer}],
                "purchaseStateContext": {"purchaseState": self.state},
                "acknowledgementState": "ACKNOWLEDGEMENT_STATE_ACKNOWLEDGED" if self.acknowledged
                else "ACKNOWLEDGEMENT_STATE_PENDING",
                "regionCode": self.region}
        if self.state == "PURCHASED":
            body["purchaseCompletionTime"] = rfc3339(self.time_ms)
        if self.test:
            body["testPurchaseContext"] = {"fopType": "TEST"}
        if self.order_id is not None:
            body["orderId"] = self.order_id
        if self.account_id is not None:
            body["obfuscatedExternalAccountId"] = self.account_id
        return body

    def as_dict(self):
        return {"package_name": self.package, "product_id": self.product, "quantity": self.quantity,
                "state": self.state, "test": self.test, "obfuscated_account_id": self.account_id,
                "order_id": self.order_id, "purchase_token": self.token, "region_code": self.region,
                "purchase_time_ms": self.time_ms, "acknowledged": self.acknowledged, "consumed": self.consumed,
                "refunded_quantity": self.refunded_quantity}


class Play:
    """Purchases, voided purchases and refund reviews, made on the control port and read by the API."""

    def __init__(self):
        self.purchases = {}      # token -> Purchase
        self.voided = []         # voided purchase resources, as listed
        self.reviews = {}        # pending refund token -> {"package_name", "order_id", "answers": [...]}

    # ---------- made on the control port ----------

    def create_purchase(self, body):
        """{"package_name", "product_id", "quantity" (1), "state" (PURCHASED), "test" (false),
        "obfuscated_account_id", "order_id" (absent: a new GPA.…; null: none), "purchase_token" (absent:
        a new one), "region_code" ("US"), "purchase_time_ms" (now)}."""
        if not isinstance(body, dict) or not isinstance(body.get("package_name"), str) \
                or not isinstance(body.get("product_id"), str):
            raise ValueError('the body must be {"package_name": ..., "product_id": ..., ...}')
        quantity, state = body.get("quantity", 1), body.get("state", "PURCHASED")
        if not _is_int(quantity) or quantity < 1:
            raise ValueError("quantity is a positive integer")
        if state not in STATES:
            raise ValueError(f"state is one of {', '.join(STATES)}")
        account_id = body.get("obfuscated_account_id")
        if account_id is not None and (not isinstance(account_id, str) or len(account_id) > MAX_ACCOUNT_ID):
            raise ValueError(f"obfuscated_account_id is a string of at most {MAX_ACCOUNT_ID} characters")
        order_id = body["order_id"] if "order_id" in body else new_order_id()
        token = body.get("purchase_token") or new_purchase_token()
        if order_id is not None and not isinstance(order_id, str) or not isinstance(token, str):
            raise ValueError("order_id and purchase_token are strings")
        if token in self.purchases:
            raise ValueError("that purchase_token exists")
        time_ms = body.get("purchase_time_ms", int(time.time() * 1000))
        if not _is_int(time_ms):
            raise ValueError("purchase_time_ms is an integer")
        purchase = Purchase(body["package_name"], body["product_id"], quantity, state, bool(body.get("test")),
                            account_id, order_id, token, body.get("region_code", "US"), time_ms)
        self.purchases[token] = purchase
        return purchase.as_dict()

    def create_purchases(self, body):
        """{"count" (1..200000), and create_purchase's fields but purchase_token and order_id}: that many
        new purchases alike (each its own token and order id), for benchmarks; {"purchase_tokens": [...]}."""
        count = body.get("count") if isinstance(body, dict) else None
        if not _is_int(count) or not 1 <= count <= 200_000:
            raise ValueError("count is an integer from 1 to 200000")
        if "purchase_token" in body or "order_id" in body:
            raise ValueError("a batch makes its own purchase_token and order_id")
        template = {key: value for key, value in body.items() if key != "count"}
        return {"purchase_tokens": [self.create_purchase(template)["purchase_token"] for _ in range(count)]}

    def update_purchase(self, body):
        """{"purchase_token", "state"}: a pending purchase paid (PURCHASED) or cancelled."""
        purchase = self.purchases.get(body.get("purchase_token")) if isinstance(body, dict) else None
        if purchase is None:
            raise ValueError("unknown purchase_token")
        if body.get("state") not in STATES:
            raise ValueError(f"state is one of {', '.join(STATES)}")
        purchase.state = body["state"]
        return purchase.as_dict()

    def purchase(self, token):
        purchase = self.purchases.get(token)
        if purchase is None:
            raise ValueError("unknown purchase_token")
        return purchase.as_dict()

    def void(self, body):
        """{"purchase_token", "voided_quantity" (absent: the whole purchase), "voided_reason" (0),
        "voided_source" (0), "voided_time_ms" (now)}: listed by voidedpurchases from then on."""
        purchase = self.purchases.get(body.get("purchase_token")) if isinstance(body, dict) else None
        if purchase is None:
            raise ValueError("unknown purchase_token")
        left = purchase.quantity - purchase.refunded_quantity
        quantity = body.get("voided_quantity", left)
        if not _is_int(quantity) or not 0 < quantity <= left:
            raise ValueError(f"voided_quantity is 1..{left}")
        fields = {key: body.get(key, default) for key, default in
                  (("voided_reason", 0), ("voided_source", 0), ("voided_time_ms", int(time.time() * 1000)))}
        if not all(_is_int(value) for value in fields.values()):
            raise ValueError("voided_reason, voided_source and voided_time_ms are integers")
        purchase.refunded_quantity += quantity
        voided = {"kind": "androidpublisher#voidedPurchase", "purchaseToken": purchase.token,
                  "purchaseTimeMillis": str(purchase.time_ms), "voidedTimeMillis": str(fields["voided_time_ms"]),
                  "voidedSource": fields["voided_source"], "voidedReason": fields["voided_reason"]}
        if purchase.order_id is not None:
            voided["orderId"] = purchase.order_id
        if quantity < purchase.quantity:
            voided["voidedQuantity"] = quantity
        self.voided.append((purchase.package, voided))
        self.voided.sort(key=lambda entry: int(entry[1]["voidedTimeMillis"]))
        return voided

    def open_review(self, body):
        """{"order_id"} of a purchase: a pending refund review, answered by orders.reviewrefund with the
        pendingRefundToken returned."""
        order_id = body.get("order_id") if isinstance(body, dict) else None
        purchase = next((p for p in self.purchases.values() if p.order_id == order_id), None)
        if purchase is None:
            raise ValueError("no purchase has that order_id")
        token = "prt-" + secrets.token_urlsafe(24)
        self.reviews[token] = {"package_name": purchase.package, "order_id": order_id, "answers": []}
        return {"pending_refund_token": token, "package_name": purchase.package, "order_id": order_id}

    def review_list(self):
        return [{"pending_refund_token": token, **review} for token, review in self.reviews.items()]

    # ---------- the API ----------

    def answer(self, endpoint, match, query, body):
        """(HTTP status, JSON-able body) for an authorised API call."""
        package = match["package"]
        if endpoint == "productsv2":
            purchase = self._purchase_of(package, match["token"])
            return (200, purchase.productsv2()) if purchase else not_found("Purchase token")
        if endpoint in ("consume", "acknowledge"):
            return self._finish(endpoint, package, match["product"], match["token"])
        if endpoint == "voidedpurchases":
            return self._voided_page(package, query)
        return self._review_refund(package, match["order"], body)

    def _purchase_of(self, package, token):
        purchase = self.purchases.get(token)
        return purchase if purchase is not None and purchase.package == package else None

    def _finish(self, endpoint, package, product, token):
        """Consume or acknowledge: one success per purchase (consuming acknowledges); a second is 400
        invalidPurchaseState, as is either on a purchase not PURCHASED."""
        purchase = self._purchase_of(package, token)
        if purchase is None or purchase.product != product:
            return not_found("Purchase token")
        if purchase.state != "PURCHASED":
            return invalid("The purchase is not in a valid state to perform the desired operation.",
                           "invalidPurchaseState")
        done = purchase.consumed if endpoint == "consume" else purchase.acknowledged
        if done:
            return invalid("The purchase is not in a valid state to perform the desired operation.",
                           "invalidPurchaseState")
        if endpoint == "consume":
            purchase.consumed = True
        purchase.acknowledged = True
        return 200, {}

    def _voided_page(self, package, query):
        now = int(time.time() * 1000)
        page_token = query.get("token")
        if page_token is not None:
            try:
                filters = json.loads(base64.urlsafe_b64decode(page_token.encode()))
                start, end, limit, kind, partial, offset = (filters[key] for key in
                                                            ("start", "end", "limit", "type", "partial", "offset"))
            except (ValueError, KeyError, TypeError):
                return invalid("Invalid pagination token.", "invalidPageToken")
        else:
            try:
                start = int(query.get("startTime", now - MAX_VOIDED_AGE_MS))
                end = int(query.get("endTime", now))
                limit = int(query.get("maxResults", MAX_VOIDED_PAGE))
                kind = int(query.get("type", 0))
            except ValueError:
                return invalid("Invalid value in the query.")
            partial = query.get("includeQuantityBasedPartialRefund", "false") == "true"
            offset = 0
            if start < now - MAX_VOIDED_AGE_MS:
                return invalid("startTime is too far in the past: at most 30 days.", "startTimeTooOld")
            if end < start or end > now + 60_000:
                return invalid("endTime must be after startTime and not in the future.")
            if not 1 <= limit <= MAX_VOIDED_PAGE or kind not in (0, 1):
                return invalid("maxResults is 1..1000 and type 0 or 1.")
        chosen = [voided for owner, voided in self.voided
                  if owner == package and start <= int(voided["voidedTimeMillis"]) <= end
                  and (partial or "voidedQuantity" not in voided)]
        page = chosen[offset:offset + limit]
        body = {"voidedPurchases": page} if page else {}
        if offset + limit < len(chosen):
            following = {"start": start, "end": end, "limit": limit, "type": kind, "partial": partial,
                         "offset": offset + limit}
            body["tokenPagination"] = {"nextPageToken": base64.urlsafe_b64encode(
                json.dumps(following).encode()).decode()}
        return 200, body

    def _review_refund(self, package, order_id, body):
        """orders.reviewrefund, validated as Google does; only the first answer to a review counts (a
        later one is refused)."""
        if not isinstance(body, dict):
            return invalid("The request body must be a JSON object.")
        review = self.reviews.get(body.get("pendingRefundToken"))
        if review is None or review["order_id"] != order_id or review["package_name"] != package:
            return invalid("Invalid pending refund token.", "invalidPendingRefundToken")
        if body.get("refundPreference") not in PREFERENCES:
            return invalid("refundPreference must be APPROVE, DECLINE or NEUTRAL.", "invalidRefundPreference")
        milli = body.get("consumptionPercentageMilliunits")
        if milli is not None and (not _is_int(milli) or not 0 <= milli <= 100_000):
            return invalid("consumptionPercentageMilliunits must be 0..100000.")
        if "sampleContentProvided" in body and not isinstance(body["sampleContentProvided"], bool):
            return invalid("sampleContentProvided must be a boolean.")
        events = body.get("consumptionUsageEvents", [])
        if not isinstance(events, list) or len(events) > 1000:
            return invalid("consumptionUsageEvents is a list of at most 1000.")
        first = not review["answers"]
        review["answers"].append({"body": body, "accepted": first})
        if not first:
            return 400, google_error(400, "The refund review has already been answered.",
                                     "refundReviewAlreadyAnswered", "FAILED_PRECONDITION")
        return 200, {}
