#!/usr/bin/env python3
"""App Store verifyReceipt simulator for iap-fcgi's tests, local runs and benchmarks.

  POST https://127.0.0.1:PRODUCTION/verifyReceipt   answers like buy.itunes.apple.com
  POST https://127.0.0.1:SANDBOX/verifyReceipt      answers like sandbox.itunes.apple.com
  http://127.0.0.1:CONTROL: GET|POST /control (faults, JSON; keys left out keep their value),
                            GET /stats, POST /stats/reset,
                            POST /latest_receipt_info {"receipt_data", "purchase"} (a subscription renewed),
                            POST /server_api/transactions, POST /server_api/orders (see server_api.py),
                            POST /notifications/send, GET /notifications/sent (see notifications.py),
                            /subscriptions/chains|received|settings (see subscription_api.py)
  GET https://127.0.0.1:PRODUCTION|SANDBOX/inApps/v1/transactions/{id}, /inApps/v1/lookup/{orderId}:
                            the App Store Server API, its JWT checked (server_api.py); its subscription
                            statuses and renewal-date extensions under /inApps/v1/subscriptions/
                            (subscription_api.py)
  POST https://127.0.0.1:PRODUCTION|SANDBOX/inApps/v1/notifications/history: Get Notification History
                            of the notifications sent (notifications.py)
  POST https://127.0.0.1:PRODUCTION|SANDBOX/inApps/v1/transactions/{id}/finish: Finish Transaction, each
                            call recorded (finish_api.py: GET /finish/calls, POST /finish/control)
  PUT https://127.0.0.1:PRODUCTION|SANDBOX/inApps/v2/transactions/consumption/{id}: Send Consumption
                            Information, validated as Apple does; POST /consumption/settings, GET
                            /consumption/received on the control port (consumption.py)

Control keys:
  latency_ms       each answer leaves this long after its request arrived (requests do not queue)
  force_status     answer {"status": N} without looking at the receipt
  drop_connection  read the request, then close the connection without answering
  fail_next        N > 0: only the next N requests get the fault (force_status, else a drop, else 21005),
                   then the fault clears; 0: force_status / drop_connection apply until cleared
  fail_for_ms      N > 0: the fault (as for fail_next) lasts N ms from the first request it hits, then
                   clears (a burst of a given length); 0: no time limit
  is_retryable     true/false: forced answers carry it under retryable_key; null: they do not
  retryable_key    "is-retryable" (default) or "is_retryable" (Apple spells it both ways)
  fault_env        "both" (default), "production" or "sandbox": the endpoints the faults and latency hit
  shared_secret    when set, a request whose "password" is missing or different gets 21004
  tls              "trusted" (CA-issued certificate) or "untrusted" (self-signed), for new connections;
                   a change closes the idle keep-alive connections; while untrusted, a client resuming
                   a TLS session is cut off after the handshake (the session proves the real certificate)
  http2            true (default unless --http1-only): new connections offer HTTP/2 by ALPN ("h2", then
                   "http/1.1"); false: only HTTP/1.1. A change closes the idle keep-alive connections
  reset            true: everything back to the command-line settings, counters zeroed

Both HTTPS ports speak HTTP/1.1 and HTTP/2 (the h2 library), chosen per connection by ALPN, like Apple's
endpoints; an HTTP/2 connection carries up to 128 requests at once, each answered on its own (latency,
faults; a drop resets that stream only). Receipts are made by receipts.py in this folder. One asyncio
process (uvloop when importable); it logs nothing per request. See README.md.
"""
import argparse
import asyncio
import base64
import json
import os
import resource
import signal
import ssl
import sys
import time
from datetime import datetime, timezone
from functools import lru_cache
from zoneinfo import ZoneInfo

import h2.config
import h2.connection
import h2.events
import h2.exceptions
import h2.settings
from h2.errors import ErrorCodes

import finish_api
import consumption
import notifications
import receipts
import server_api
import subscription_api

ENVIRONMENTS = ("production", "sandbox")
MAX_HEAD = 64 * 1024
MAX_BODY = 8 * 1024 * 1024
RECEIPT_CACHE_SIZE = 4096
DROP = object()  # a fault: close the connection (HTTP/2: reset the stream) instead of answering


# ---------- Apple's answers ----------

_PACIFIC = ZoneInfo("America/Los_Angeles")


@lru_cache(maxsize=8192)
def _formatted_second(seconds):
    """Apple's two spellings of one second: "2014-07-24 09:11:01 Etc/GMT" and its Los Angeles twin."""
    moment = datetime.fromtimestamp(seconds, timezone.utc)
    return (moment.strftime("%Y-%m-%d %H:%M:%S Etc/GMT"),
            moment.astimezone(_PACIFIC).strftime("%Y-%m-%d %H:%M:%S America/Los_Angeles"))


def apple_date(name, ms):
    """Apple's date triple: name, name_ms and name_pst, all strings."""
    gmt, pacific = _formatted_second(ms // 1000)
    return {name: gmt, name + "_ms": str(ms), name + "_pst": pacific}


_compact = json.JSONEncoder(separators=(",", ":"), ensure_ascii=True).encode


_STATUS_ONLY = {}


def status_only(status):
    """The bytes of {"status": N}, made once per status."""
    body = _STATUS_ONLY.get(status)
    if body is None:
        body = _STATUS_ONLY[status] = _compact({"status": status}).encode()
    return body


_REQUEST_DATE_MARK = '"request_date":"request date goes here"'


class VerifiedReceipt:
    """A receipt whose signature checked out, with its status-0 answer serialised once.

    The answer of an app receipt differs between requests only in request_date, so it is kept as the
    JSON before and after that field; an iOS 6 answer has no request date and is kept whole. `latest`:
    the purchases Apple shows in `latest_receipt_info` (app receipts only), as a renewing subscription's
    answer grows over time for the same receipt bytes.
    """
    __slots__ = ("sandbox", "head", "tail")

    def __init__(self, payload, latest=()):
        self.sandbox = payload["environment"] == "Sandbox"
        if payload["kind"] == "ios6":
            self.head, self.tail = _compact({"status": 0, "receipt": self._ios6(payload)}).encode(), None
            return
        production = not self.sandbox
        receipt = {"receipt_type": "Production" if production else "ProductionSandbox",
                   "adam_id": payload["app_item_id"], "app_item_id": payload["app_item_id"],
                   "bundle_id": payload["bundle_id"], "application_version": payload["application_version"],
                   "download_id": payload["download_id"],
                   "version_external_identifier": payload["version_external_identifier"],
                   **apple_date("receipt_creation_date", payload["receipt_creation_ms"]),
                   "request_date": "request date goes here",
                   **apple_date("original_purchase_date", payload["original_purchase_ms"]),
                   "original_application_version": payload["original_application_version"],
                   "in_app": [self._in_app(p) for p in payload["in_app"]]}
        answer = {"status": 0, "environment": "Production" if production else "Sandbox", "receipt": receipt}
        if latest:
            answer["latest_receipt_info"] = [self._in_app(p) for p in latest]
        pending = self._pending_renewal_info(list(payload["in_app"]) + list(latest))
        if pending:
            answer["pending_renewal_info"] = pending
        head, tail = _compact(answer).split(_REQUEST_DATE_MARK)
        self.head, self.tail = head.encode(), tail.encode()

    def answer(self, now_ms):
        if self.tail is None:
            return self.head
        gmt, pacific = _formatted_second(now_ms // 1000)
        request_date = '"request_date":"%s","request_date_ms":"%d","request_date_pst":"%s"' % (gmt, now_ms, pacific)
        return b"".join((self.head, request_date.encode(), self.tail))

    @staticmethod
    def _transaction(p):
        return {"quantity": str(p["quantity"]), "product_id": p["product_id"],
                "transaction_id": p["transaction_id"], "original_transaction_id": p["original_transaction_id"],
                **apple_date("purchase_date", p["purchase_ms"]),
                **apple_date("original_purchase_date", p["purchase_ms"]),
                **(apple_date("expires_date", p["expires_ms"]) if p.get("expires_ms") is not None else {})}

    @staticmethod
    def _pending_renewal_info(purchases):
        """One entry per subscription chain among `purchases` (those with expires_ms): renewing, unless its
        latest purchase carries "pending_renewal" fields (auto_renew_status, expiration_intent,
        is_in_billing_retry_period, grace_period_expires_date_ms ...) that say otherwise."""
        latest = {}
        for p in purchases:
            if p.get("expires_ms") is not None:
                chain = p["original_transaction_id"]
                if chain not in latest or p["purchase_ms"] >= latest[chain]["purchase_ms"]:
                    latest[chain] = p
        return [{"auto_renew_product_id": p["product_id"], "product_id": p["product_id"],
                 "original_transaction_id": chain, "auto_renew_status": "1", **p.get("pending_renewal", {})}
                for chain, p in latest.items()]

    @classmethod
    def _in_app(cls, p):
        fields = cls._transaction(p)
        fields["is_trial_period"] = "false"
        cls._add_cancellation(fields, p)
        return fields

    @classmethod
    def _ios6(cls, payload):
        fields = {"bid": payload["bid"], "bvrs": payload["bvrs"], "item_id": payload["item_id"],
                  **cls._transaction(payload["purchase"]),
                  "unique_identifier": payload["unique_identifier"],
                  "unique_vendor_identifier": payload["unique_vendor_identifier"]}
        cls._add_cancellation(fields, payload["purchase"])
        return fields

    @staticmethod
    def _add_cancellation(fields, p):
        if p.get("cancellation_ms") is not None:
            fields.update(apple_date("cancellation_date", p["cancellation_ms"]))
            fields["cancellation_reason"] = "0"


class Verifier:
    """verifyReceipt's logic: a request body in, (status, answer bytes) out."""
    PURCHASE_KEYS = {"product_id", "transaction_id", "original_transaction_id", "quantity", "purchase_ms"}

    def __init__(self):
        # receipt-data string -> VerifiedReceipt or the failure status; the service sends one receipt
        # more than once (production, then sandbox; retries), so each is decoded and serialised once.
        self.cache = {}
        # receipt bytes -> purchases added to its latest_receipt_info (POST /latest_receipt_info)
        self.latest = {}

    def add_latest(self, data, purchase):
        """From now on Apple's answer to the receipt `data` lists `purchase` in latest_receipt_info (a
        subscription renewed since the receipt was made). Returns how many purchases it has added to that
        receipt; raises ValueError when `data` is not a valid app receipt or `purchase` not one made by
        receipts.purchase()."""
        try:
            if receipts.decode(data)["kind"] != "app":
                raise ValueError("latest_receipt_info is for app receipts")
        except (receipts.MalformedReceipt, receipts.BadSignature) as error:
            raise ValueError(f"not a valid receipt: {error}") from None
        if not isinstance(purchase, dict) or not self.PURCHASE_KEYS <= purchase.keys():
            raise ValueError("purchase must be an object made by receipts.purchase()")
        added = self.latest.setdefault(self._key(data), [])
        added.append(purchase)
        self.cache.clear()  # answers serialised before this one lack it
        return len(added)

    @staticmethod
    def _key(data):
        """The receipt's bytes, whatever line breaks its base64 has."""
        return base64.b64decode(data.replace("\n", "").replace("\r", ""))

    def verify(self, environment, body, shared_secret):
        try:
            request = json.loads(body)
        except ValueError:
            return 21000, status_only(21000)
        if not isinstance(request, dict):
            return 21000, status_only(21000)
        data = request.get("receipt-data")
        if not isinstance(data, str) or not data:
            return 21002, status_only(21002)
        receipt = self.cache.get(data)
        if receipt is None:
            receipt = self.cache[data] = self._decode(data)
            if len(self.cache) > RECEIPT_CACHE_SIZE:
                del self.cache[next(iter(self.cache))]  # the oldest entry
        if isinstance(receipt, int):
            return receipt, status_only(receipt)
        if receipt.sandbox and environment == "production":
            return 21007, status_only(21007)
        if not receipt.sandbox and environment == "sandbox":
            return 21008, status_only(21008)
        if shared_secret is not None and request.get("password") != shared_secret:
            return 21004, status_only(21004)
        return 0, receipt.answer(int(time.time() * 1000))

    def _decode(self, data):
        try:
            payload = receipts.decode(data)
            return VerifiedReceipt(payload, self.latest.get(self._key(data), ()))
        except receipts.BadSignature:
            return 21003
        except (receipts.MalformedReceipt, KeyError, TypeError):
            return 21002


# ---------- settings, faults and counters ----------

class Settings:
    """What /control changes. Each key's meaning is in the module doc."""
    KEYS = ("latency_ms", "force_status", "drop_connection", "fail_next", "fail_for_ms", "is_retryable",
            "retryable_key", "fault_env", "shared_secret", "tls", "http2")

    def __init__(self, latency_ms=0, shared_secret=None, untrusted=False, http2=True):
        self.latency_ms = latency_ms
        self.force_status = None
        self.drop_connection = False
        self.fail_next = 0
        self.fail_for_ms = 0
        self.burst_ends = None  # loop time at which a fail_for_ms burst ends, once a request has started it
        self.is_retryable = None
        self.retryable_key = "is-retryable"
        self.fault_env = "both"
        self.shared_secret = shared_secret
        self.tls = "untrusted" if untrusted else "trusted"
        self.http2 = http2

    def as_dict(self):
        return {key: getattr(self, key) for key in self.KEYS}

    def update(self, changes):
        """Applies a /control body after checking all of it; raises ValueError naming what is wrong."""
        checked = {}
        for key, value in changes.items():
            if key not in self.KEYS:
                raise ValueError(f"unknown key {key!r}")
            checked[key] = self._check(key, value)
        for key, value in checked.items():
            setattr(self, key, value)
        if "fail_for_ms" in checked:
            self.burst_ends = None

    @staticmethod
    def _check(key, value):
        def is_int(v):
            return isinstance(v, int) and not isinstance(v, bool)

        if key == "latency_ms" and (is_int(value) or isinstance(value, float)) and value >= 0:
            return value
        if key == "force_status" and (value is None or is_int(value)):
            return value
        if key == "drop_connection" and isinstance(value, bool):
            return value
        if key == "fail_next" and is_int(value) and value >= 0:
            return value
        if key == "fail_for_ms" and (is_int(value) or isinstance(value, float)) and value >= 0:
            return value
        if key == "is_retryable" and (value is None or isinstance(value, bool)):
            return value
        if key == "retryable_key" and value in ("is-retryable", "is_retryable"):
            return value
        if key == "fault_env" and value in ("both",) + ENVIRONMENTS:
            return value
        if key == "shared_secret" and (value is None or isinstance(value, str)):
            return value
        if key == "tls" and value in ("trusted", "untrusted"):
            return value
        if key == "http2" and isinstance(value, bool):
            return value
        raise ValueError(f"bad value for {key}: {value!r}")

    def hits(self, environment):
        return self.fault_env == "both" or self.fault_env == environment

    def take_fault(self, environment, now):
        """None, DROP or a status to force on this request (arrived at loop time `now`); counts down
        fail_next, and ends a fail_for_ms burst once its time is up."""
        if not self.hits(environment):
            return None
        if self.fail_for_ms > 0:
            if self.burst_ends is None:
                self.burst_ends = now + self.fail_for_ms / 1000
            if now < self.burst_ends:
                return self._fault()
            self.force_status, self.drop_connection, self.fail_for_ms, self.burst_ends = None, False, 0, None
            return None
        if self.fail_next > 0:
            self.fail_next -= 1
            fault = self._fault()
            if self.fail_next == 0:  # the N faulty answers are out: back to normal
                self.force_status, self.drop_connection = None, False
            return fault
        if self.drop_connection:
            return DROP
        return self.force_status

    def _fault(self):
        """The fault of a fail_next or fail_for_ms request: force_status, else a drop, else 21005."""
        return DROP if self.drop_connection else (self.force_status if self.force_status is not None else 21005)

    def forced_answer(self, status):
        if self.is_retryable is None:
            return status_only(status)
        return _compact({"status": status, self.retryable_key: self.is_retryable}).encode()


class Stats:
    """Requests that reached /verifyReceipt (so after the TLS handshake), per endpoint and per protocol
    ("http1", "http2"); open connections to both endpoints, in all and per protocol; and when the last
    ARRIVALS_KEPT requests to each endpoint arrived (`arrived_ms`: milliseconds on the simulator's monotonic
    clock, so only their differences mean anything), to see how far apart a client's retries came."""
    PROTOCOLS = ("http1", "http2")
    ARRIVALS_KEPT = 64

    def __init__(self):
        self.inflight = 0
        self.connections = 0
        self.open = dict.fromkeys(self.PROTOCOLS, 0)
        self.reset()

    def reset(self):
        self.per_environment = {e: {"requests": 0, "dropped": 0, "status": {}} for e in ENVIRONMENTS}
        self.per_protocol = dict.fromkeys(self.PROTOCOLS, 0)
        self.arrivals = {e: [] for e in ENVIRONMENTS}
        self.max_inflight = self.inflight  # gauges carry on: those requests and connections are still open
        self.max_connections = self.connections
        self.max_open = dict(self.open)

    def arrived(self, environment, protocol, now):
        """A request to `environment` arrived at loop time `now`."""
        arrivals = self.arrivals[environment]
        arrivals.append(round(now * 1000, 3))
        if len(arrivals) > self.ARRIVALS_KEPT:
            del arrivals[0]
        self.per_environment[environment]["requests"] += 1
        self.per_protocol[protocol] += 1
        self.inflight += 1
        if self.inflight > self.max_inflight:
            self.max_inflight = self.inflight

    def answered(self, environment, status):
        counts = self.per_environment[environment]["status"]
        key = str(status)
        counts[key] = counts.get(key, 0) + 1

    def dropped(self, environment):
        self.per_environment[environment]["dropped"] += 1

    def opened(self, protocol):
        self.connections += 1
        if self.connections > self.max_connections:
            self.max_connections = self.connections
        self.open[protocol] += 1
        if self.open[protocol] > self.max_open[protocol]:
            self.max_open[protocol] = self.open[protocol]

    def closed(self, protocol):
        self.connections -= 1
        self.open[protocol] -= 1

    def as_dict(self):
        counts = {**self.per_environment, "inflight": self.inflight, "max_inflight": self.max_inflight,
                  "connections": self.connections, "max_connections": self.max_connections,
                  "arrived_ms": {e: list(self.arrivals[e]) for e in ENVIRONMENTS}}
        for protocol in self.PROTOCOLS:
            counts[protocol + "_requests"] = self.per_protocol[protocol]
            counts[protocol + "_connections"] = self.open[protocol]
            counts["max_" + protocol + "_connections"] = self.max_open[protocol]
        return counts


# ---------- requests and exchanges ----------
#
# A site (AppleSite, ControlSite) answers a Request through its exchange: the HTTP/1.1 connection that
# carried it (one request at a time) or the HTTP/2 stream. An exchange has
#   send(code, body, keep_alive)   answer with application/json (keep_alive matters to HTTP/1.1 only)
#   drop()                         no answer: HTTP/1.1 closes the connection, HTTP/2 resets the stream
#   later(when, callback, *args)   callback(*args) at loop time `when`, unless the client leaves first:
#                                  then the timer is cancelled and the site's abandoned(exchange) is called
# A connection to a site has `protocol` ("http1" or "http2"), `idle` (no request being answered) and
# close_politely(), and tells its site connection_made(self) and connection_lost(self).

class Request:
    __slots__ = ("method", "path", "body", "keep_alive", "arrived", "authorization", "query")

    def __init__(self, method, path, body, keep_alive, arrived, authorization=None, query=""):
        self.method, self.path, self.body, self.keep_alive, self.arrived = method, path, body, keep_alive, arrived
        self.authorization = authorization  # the Authorization header as sent (the Server API's bearer token)
        self.query = query  # after "?" (Get Notification History's paginationToken)


class BadRequest(Exception):
    def __init__(self, code):
        super().__init__(code)
        self.code = code


REASONS = {200: b"OK", 400: b"Bad Request", 401: b"Unauthorized", 403: b"Forbidden", 404: b"Not Found",
           405: b"Method Not Allowed", 413: b"Payload Too Large", 429: b"Too Many Requests", 431: b"Request Header Fields Too Large",
           500: b"Internal Server Error"}


# ---------- HTTP/1.1 ----------

def response_bytes(code, body, keep_alive, headers=()):
    extra = b"".join(b"%s: %s\r\n" % (name.encode(), value.encode()) for name, value in headers)
    head = b"HTTP/1.1 %d %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n%s%s\r\n" % (
        code, REASONS.get(code, b"OK"), len(body), extra, b"" if keep_alive else b"Connection: close\r\n")
    return head + body


class HTTPConnection(asyncio.Protocol):
    """One HTTP/1.1 client connection, and the exchange of its current request: parses requests
    (Content-Length or chunked bodies, Expect: 100-continue) and hands each to its site, one at a time;
    a request that arrives early waits in the buffer."""
    protocol = "http1"

    def __init__(self, site):
        self.site = site
        self.transport = None
        self.buffer = bytearray()
        self.head = None       # (method, path, keep_alive, body_start, content_length or None if chunked)
        self.busy = False      # a request is being answered
        self.continued = False  # "100 Continue" sent for the request being received
        self.expects_continue = False
        self.timer = None      # a delayed answer's handle
        self.paused = False

    @property
    def idle(self):
        return not self.busy

    def close_politely(self):
        self.transport.close()

    # asyncio callbacks
    def connection_made(self, transport):
        self.transport = transport
        self.site.connection_made(self)

    def connection_lost(self, exc):
        self.transport = None
        if self.timer is not None:
            self.timer.cancel()
            self.timer = None
            self.site.abandoned(self)
        self.site.connection_lost(self)

    def data_received(self, data):
        self.buffer += data
        if not self.busy:
            self._next_request()
        elif len(self.buffer) > MAX_HEAD and not self.paused:
            self.paused = True
            self.transport.pause_reading()

    # answering, for the sites
    def send(self, code, body, keep_alive=True, headers=()):
        self.busy = False
        if self.transport is None:
            return
        self.transport.write(response_bytes(code, body, keep_alive, headers))
        if not keep_alive:
            self.transport.close()
            return
        if self.paused:
            self.paused = False
            self.transport.resume_reading()
        if self.buffer:
            self._next_request()

    def drop(self):
        self.busy = False
        if self.transport is not None:
            self.transport.abort()

    def later(self, when, callback, *args):
        """Runs callback(*args) at loop time `when`; a closed connection cancels it (site.abandoned)."""
        self.timer = asyncio.get_running_loop().call_at(when, self._fire, callback, args)

    def _fire(self, callback, args):
        self.timer = None
        callback(*args)

    # parsing
    def _next_request(self):
        try:
            request = self._parse()
        except BadRequest as error:
            self.buffer.clear()
            self.head = None
            self.busy = True
            self.send(error.code, _compact({"error": REASONS[error.code].decode()}).encode(), keep_alive=False)
            return
        if request is not None:
            self.busy = True
            self.site.handle(self, request)

    def _parse(self):
        if self.head is None:
            while self.buffer.startswith(b"\r\n"):  # stray line ends some clients send after a body
                del self.buffer[:2]
            end = self.buffer.find(b"\r\n\r\n")
            if end < 0:
                if len(self.buffer) > MAX_HEAD:
                    raise BadRequest(431)
                return None
            self.head = self._parse_head(bytes(self.buffer[:end]), end + 4)
        method, path, keep_alive, start, length, authorization, query = self.head
        if length is None:
            parsed = self._chunked_body(start)
        else:
            parsed = (bytes(self.buffer[start:start + length]), start + length) \
                if len(self.buffer) >= start + length else None
        if parsed is None:
            if self.expects_continue and not self.continued:
                self.continued = True
                self.transport.write(b"HTTP/1.1 100 Continue\r\n\r\n")
            return None
        body, end = parsed
        del self.buffer[:end]
        self.head, self.continued = None, False
        return Request(method, path, body, keep_alive, asyncio.get_running_loop().time(), authorization, query)

    def _parse_head(self, head, body_start):
        lines = head.split(b"\r\n")
        parts = lines[0].split(b" ")
        if len(parts) != 3 or not parts[2].startswith(b"HTTP/1."):
            raise BadRequest(400)
        method, target, version = parts
        headers, authorization = {}, None
        for line in lines[1:]:
            name, colon, value = line.partition(b":")
            if not colon:
                raise BadRequest(400)
            headers[name.strip().lower()] = value.strip().lower()
            if name.strip().lower() == b"authorization":
                authorization = value.strip().decode("latin-1")  # as sent: a token is case-sensitive
        # HTTP/1.0 clients get one answer per connection: simpler than echoing "Connection: keep-alive".
        keep_alive = version == b"HTTP/1.1" and b"close" not in headers.get(b"connection", b"")
        self.expects_continue = headers.get(b"expect") == b"100-continue"
        if b"chunked" in headers.get(b"transfer-encoding", b""):
            length = None
        else:
            try:
                length = int(headers.get(b"content-length", b"0"))
            except ValueError:
                raise BadRequest(400) from None
            if length < 0:
                raise BadRequest(400)
            if length > MAX_BODY:
                raise BadRequest(413)
        path, _, query = target.decode("latin-1").partition("?")
        return method.decode("latin-1"), path, keep_alive, body_start, length, authorization, query

    def _chunked_body(self, start):
        """(body, end) once the whole chunked body (and its trailers) is in the buffer, else None."""
        buffer, position, chunks, size = self.buffer, start, [], 0
        while True:
            line_end = buffer.find(b"\r\n", position)
            if line_end < 0:
                return None
            try:
                chunk = int(bytes(buffer[position:line_end]).split(b";", 1)[0].strip(), 16)
            except ValueError:
                raise BadRequest(400) from None
            size += chunk
            if chunk < 0 or size > MAX_BODY:
                raise BadRequest(413 if size > MAX_BODY else 400)
            position = line_end + 2
            if chunk == 0:
                break
            if len(buffer) < position + chunk + 2:
                return None
            chunks.append(bytes(buffer[position:position + chunk]))
            position += chunk + 2
        while True:  # trailers, up to an empty line
            line_end = buffer.find(b"\r\n", position)
            if line_end < 0:
                return None
            empty = line_end == position
            position = line_end + 2
            if empty:
                return b"".join(chunks), position


# ---------- HTTP/2 ----------

# Header checks are off: the simulator sends only its own three headers, and its clients (libcurl's
# nghttp2, h2 and httpx in the tests) send well-formed ones; the checks cost a sixth of the CPU per answer.
H2_CONFIG = h2.config.H2Configuration(client_side=False, header_encoding="utf-8",
                                      validate_outbound_headers=False, normalize_outbound_headers=False,
                                      validate_inbound_headers=False)
H2_MAX_CONCURRENT_STREAMS = 128  # what real servers commonly allow; clients open more connections past it
# The window for request bodies on the whole connection (each stream keeps the default 64 KiB): room for
# every stream's few-KiB body at once, so clients need not wait for WINDOW_UPDATE frames.
H2_CONNECTION_WINDOW = 1024 * 1024
H2_DEFAULT_WINDOW = 65535


class HTTP2Stream:
    """One request on an HTTP/2 connection, and its exchange (see "requests and exchanges")."""
    __slots__ = ("connection", "stream_id", "method", "path", "authorization", "body", "size", "timer", "unsent")

    def __init__(self, connection, stream_id, method, path, authorization=None):
        self.connection, self.stream_id, self.method, self.path = connection, stream_id, method, path
        self.authorization = authorization
        self.body = []      # the request's DATA; None once the request is complete or answered
        self.size = 0
        self.timer = None   # a delayed answer's handle
        self.unsent = b""   # answer bytes waiting for the client's flow-control window

    def send(self, code, body, keep_alive=True, headers=()):
        self.connection.answer(self, code, body, headers)

    def drop(self):
        self.connection.reset(self)

    def later(self, when, callback, *args):
        self.timer = self.connection.loop.call_at(when, self._fire, callback, args)

    def _fire(self, callback, args):
        self.timer = None
        callback(*args)


class HTTP2Connection(asyncio.Protocol):
    """One HTTP/2 client connection: its requests arrive as streams, are answered independently (in any
    order, each after its own latency) and the frames made within one turn of the event loop leave in
    one write."""
    protocol = "http2"

    def __init__(self, site):
        self.site = site
        self.loop = asyncio.get_running_loop()
        self.transport = None
        self.h2 = h2.connection.H2Connection(config=H2_CONFIG)
        self.streams = {}   # stream id -> HTTP2Stream, from its request's headers until its answer is out
        self.blocked = {}   # stream id -> HTTP2Stream whose answer waits for a WINDOW_UPDATE
        self.flush_scheduled = False

    @property
    def idle(self):
        return not self.streams

    def close_politely(self):
        """GOAWAY (no error), then close: the client opens no new stream here and knows none was lost."""
        self.h2.close_connection()
        self._close_now()

    # asyncio callbacks
    def connection_made(self, transport):
        self.transport = transport
        self.h2.local_settings = h2.settings.Settings(client=False, initial_values={
            h2.settings.SettingCodes.MAX_CONCURRENT_STREAMS: H2_MAX_CONCURRENT_STREAMS,
            h2.settings.SettingCodes.MAX_HEADER_LIST_SIZE: MAX_HEAD})
        self.h2.initiate_connection()
        self.h2.increment_flow_control_window(H2_CONNECTION_WINDOW - H2_DEFAULT_WINDOW)
        transport.write(self.h2.data_to_send())
        self.site.connection_made(self)

    def connection_lost(self, exc):
        self.transport = None
        for stream in self.streams.values():
            self._abandon(stream)
        self.streams.clear()
        self.blocked.clear()
        self.site.connection_lost(self)

    def data_received(self, data):
        try:
            events = self.h2.receive_data(data)
        except h2.exceptions.ProtocolError:  # h2 has queued a GOAWAY saying why
            self._close_now()
            return
        for event in events:
            handler = self._EVENT_HANDLERS.get(type(event))
            if handler is not None:
                handler(self, event)
        self._flush_soon()

    # events from h2
    def _request_received(self, event):
        headers = dict(event.headers)
        self.streams[event.stream_id] = HTTP2Stream(self, event.stream_id, headers.get(":method", ""),
                                                    headers.get(":path", ""),
                                                    headers.get("authorization"))

    def _data_received(self, event):
        self.h2.acknowledge_received_data(event.flow_controlled_length, event.stream_id)
        stream = self.streams.get(event.stream_id)
        if stream is None or stream.body is None:
            return
        stream.body.append(event.data)
        stream.size += len(event.data)
        if stream.size > MAX_BODY:  # answered at once; the rest of the body is acknowledged and dropped
            stream.body = None
            self.answer(stream, 413, _compact({"error": REASONS[413].decode()}).encode())

    def _stream_ended(self, event):
        stream = self.streams.get(event.stream_id)
        if stream is None or stream.body is None:
            return
        body, stream.body = b"".join(stream.body), None
        path, _, query = stream.path.partition("?")
        self.site.handle(stream, Request(stream.method, path, body, True, self.loop.time(),
                                         stream.authorization, query))

    def _stream_reset(self, event):
        """The client gave up on a stream (its timeout, say)."""
        stream = self.streams.pop(event.stream_id, None)
        if stream is not None:
            self.blocked.pop(event.stream_id, None)
            self._abandon(stream)

    def _window_updated(self, event):
        if event.stream_id == 0:
            for stream in list(self.blocked.values()):
                self._send_body(stream)
        else:
            stream = self.blocked.get(event.stream_id)
            if stream is not None:
                self._send_body(stream)

    def _connection_terminated(self, event):
        """The client's GOAWAY: it is leaving (h2 sends nothing more after one either)."""
        self._close_now()

    _EVENT_HANDLERS = {h2.events.RequestReceived: _request_received, h2.events.DataReceived: _data_received,
                       h2.events.StreamEnded: _stream_ended, h2.events.StreamReset: _stream_reset,
                       h2.events.WindowUpdated: _window_updated,
                       h2.events.ConnectionTerminated: _connection_terminated}

    # answering, for the streams
    def answer(self, stream, code, body, headers=()):
        if self.streams.get(stream.stream_id) is not stream:  # the client reset it meanwhile
            return
        self.h2.send_headers(stream.stream_id, ((":status", str(code)), ("content-type", "application/json"),
                                                ("content-length", str(len(body))))
                             + tuple((name.lower(), value) for name, value in headers), end_stream=not body)
        stream.unsent = body
        self._send_body(stream)
        self._flush_soon()

    def reset(self, stream):
        if self.streams.pop(stream.stream_id, None) is None:
            return
        self.blocked.pop(stream.stream_id, None)
        self.h2.reset_stream(stream.stream_id, ErrorCodes.INTERNAL_ERROR)
        self._flush_soon()

    def _send_body(self, stream):
        """Sends what the flow-control windows allow of the stream's answer; the rest waits in
        stream.unsent for a WINDOW_UPDATE. The stream is done once all of it is out."""
        connection, stream_id, unsent = self.h2, stream.stream_id, stream.unsent
        while unsent:
            size = min(connection.local_flow_control_window(stream_id), connection.max_outbound_frame_size)
            if size <= 0:
                stream.unsent = unsent
                self.blocked[stream_id] = stream
                return
            chunk, unsent = unsent[:size], unsent[size:]
            connection.send_data(stream_id, chunk, end_stream=not unsent)
        stream.unsent = b""
        self.blocked.pop(stream_id, None)
        del self.streams[stream_id]
        self._flush_soon()

    def _abandon(self, stream):
        if stream.timer is not None:
            stream.timer.cancel()
            stream.timer = None
            self.site.abandoned(stream)

    def _close_now(self):
        """Sends what h2 has queued (a GOAWAY) and closes; streams still waiting are given up: after a
        GOAWAY either way, h2 sends nothing more."""
        for stream in self.streams.values():
            self._abandon(stream)
        self.streams.clear()
        self.blocked.clear()
        self._flush()
        self.transport.close()

    def _flush_soon(self):
        if not self.flush_scheduled:
            self.flush_scheduled = True
            self.loop.call_soon(self._flush)

    def _flush(self):
        self.flush_scheduled = False
        if self.transport is not None:
            data = self.h2.data_to_send()
            if data:
                self.transport.write(data)


class NegotiatedConnection(asyncio.Protocol):
    """A TLS connection to an Apple site until its handshake is done: then ALPN's choice ("h2" or not)
    takes it over, as an HTTP2Connection or an HTTPConnection."""

    def __init__(self, site):
        self.site = site

    def connection_made(self, transport):
        ssl_object = transport.get_extra_info("ssl_object")
        if ssl_object.session_reused and self.site.simulator.settings.tls == "untrusted":
            # A man in the middle holds none of Apple's ticket keys: a client resuming a session made
            # before the switch must not get past him without seeing his certificate.
            transport.abort()
            return
        http2 = ssl_object.selected_alpn_protocol() == "h2"
        connection = (HTTP2Connection if http2 else HTTPConnection)(self.site)
        transport.set_protocol(connection)
        connection.connection_made(transport)


# ---------- the sites ----------

class AppleSite:
    """verifyReceipt on one endpoint (production or sandbox), with the faults that hit it; the same for
    HTTP/1.1 and HTTP/2 requests."""

    def __init__(self, simulator, environment):
        self.simulator = simulator
        self.environment = environment
        self.counted_closed = set()   # connections closed here whose transport has not reported it lost yet

    def connection_made(self, connection):
        self.simulator.connections.add(connection)
        self.simulator.stats.opened(connection.protocol)

    def connection_lost(self, connection):
        self.simulator.connections.discard(connection)
        if connection in self.counted_closed:
            self.counted_closed.discard(connection)
        else:
            self.simulator.stats.closed(connection.protocol)

    def closing(self, connection):
        """Counts a connection the simulator closes as closed at once: its TLS transport reports it lost only
        when the client answers the close_notify, which an idle client does when it next looks at the
        connection (or after asyncio's 30 s)."""
        self.counted_closed.add(connection)
        self.simulator.stats.closed(connection.protocol)

    def handle(self, exchange, request):
        if finish_api.is_finish(request.path):  # before the Server API's own /inApps/v1/transactions/ prefix
            sim = self.simulator
            status, body, headers = sim.finishes.answer(self.environment, request, sim.server_api.tokens)
            exchange.send(status, body, request.keep_alive, headers)
            return
        if server_api.is_server_api(request.path) or request.path.startswith(consumption.PATH_PREFIX):
            self._server_api(exchange, request)
            return
        if request.path == notifications.HISTORY_PATH:
            status, body = self.simulator.notifications.history(self.environment, request, self.simulator.server_api.tokens)
            exchange.send(status, body, request.keep_alive)
            return
        if request.path != "/verifyReceipt":
            exchange.send(404, b'{"error":"not found"}', request.keep_alive)
            return
        sim, environment = self.simulator, self.environment
        settings = sim.settings
        sim.stats.arrived(environment, "http2" if isinstance(exchange, HTTP2Stream) else "http1", request.arrived)
        fault = settings.take_fault(environment, request.arrived)
        if fault is DROP:
            status, body = None, None
        elif fault is not None:
            status, body = fault, settings.forced_answer(fault)
        elif request.method != "POST":
            status, body = 21000, status_only(21000)
        else:
            status, body = sim.verifier.verify(environment, request.body, settings.shared_secret)
        if settings.latency_ms and settings.hits(environment):
            exchange.later(request.arrived + settings.latency_ms / 1000,
                           self._finish, exchange, status, body, request.keep_alive)
        else:
            self._finish(exchange, status, body, request.keep_alive)

    def _server_api(self, exchange, request):
        sim, environment = self.simulator, self.environment
        if request.path.startswith(consumption.PATH_PREFIX):
            status, body, headers = sim.consumption.answer(environment, request, sim.server_api.tokens)
            latency_ms = sim.consumption.latency_ms or (sim.settings.hits(environment) and sim.settings.latency_ms)
        else:
            status, body, headers = sim.server_api.answer(environment, request)
            latency_ms = sim.settings.hits(environment) and sim.settings.latency_ms
        if latency_ms:
            sim.stats.inflight += 1  # as for verifyReceipt: `abandoned` takes it back if the client leaves
            exchange.later(request.arrived + latency_ms / 1000,
                           self._send_late, exchange, status, body, request.keep_alive, headers)
        else:
            exchange.send(status, body, request.keep_alive, headers)

    def _send_late(self, exchange, status, body, keep_alive, headers):
        self.simulator.stats.inflight -= 1
        exchange.send(status, body, keep_alive, headers)

    def _finish(self, exchange, status, body, keep_alive):
        stats = self.simulator.stats
        stats.inflight -= 1
        if body is None:
            stats.dropped(self.environment)
            exchange.drop()
        else:
            stats.answered(self.environment, status)
            exchange.send(200, body, keep_alive)

    def abandoned(self, exchange):
        """The client left before its delayed answer."""
        self.simulator.stats.inflight -= 1


class ControlSite:
    """Plain-HTTP control port: settings and counters."""

    def __init__(self, simulator):
        self.simulator = simulator

    def connection_made(self, connection):
        self.simulator.connections.add(connection)

    def connection_lost(self, connection):
        self.simulator.connections.discard(connection)

    def abandoned(self, exchange):
        pass

    def handle(self, exchange, request):
        code, answer = self._route(request)
        exchange.send(code, _compact(answer).encode(), request.keep_alive)

    def _route(self, request):
        sim, method, path = self.simulator, request.method, request.path
        if path == "/control":
            if method == "GET":
                return 200, {**sim.settings.as_dict(), **sim.server_api.fault_settings()}
            if method == "POST":
                try:
                    changes = json.loads(request.body or b"{}")
                    if not isinstance(changes, dict):
                        raise ValueError("the body must be a JSON object")
                    reset = changes.pop("reset", False)
                    if not isinstance(reset, bool):
                        raise ValueError(f"bad value for reset: {reset!r}")
                    if reset:
                        sim.reset()
                    handshake_before = (sim.settings.tls, sim.settings.http2)
                    api_changes = {key: sim.server_api.check_fault(key, changes.pop(key))
                                   for key in server_api.FAULT_KEYS if key in changes}
                    sim.settings.update(changes)
                    for key, value in api_changes.items():
                        setattr(sim.server_api, key, value)
                    if (sim.settings.tls, sim.settings.http2) != handshake_before:
                        sim.close_idle_apple_connections()
                except ValueError as error:
                    return 400, {"error": str(error)}
                return 200, {**sim.settings.as_dict(), **sim.server_api.fault_settings()}
        elif path == "/stats":
            if method == "GET":
                return 200, {**sim.stats.as_dict(), "server_api": sim.server_api.stats()}
        elif path in ("/server_api/transactions", "/server_api/orders"):
            if method == "POST":
                try:
                    added = json.loads(request.body or b"{}")
                    register = sim.server_api.register_transaction if path.endswith("transactions") \
                        else sim.server_api.register_order
                    return 200, register(added)
                except ValueError as error:
                    return 400, {"error": str(error)}
        elif path.startswith(finish_api.CONTROL_PREFIX):
            return sim.finishes.control(method, path, request.body)
        elif path.startswith(notifications.CONTROL_PREFIX):
            return sim.notifications.control(method, path, request.body)
        elif path.startswith(consumption.CONTROL_PREFIX):
            return sim.consumption.control(method, path, request.body)
        elif path.startswith(subscription_api.CONTROL_PREFIX):
            return sim.server_api.subscriptions.control(method, path, request.body)
        elif path == "/latest_receipt_info":
            if method == "POST":
                try:
                    added = json.loads(request.body or b"{}")
                    if not isinstance(added, dict) or not isinstance(added.get("receipt_data"), str):
                        raise ValueError("the body must be {\"receipt_data\": ..., \"purchase\": {...}}")
                    return 200, {"latest_receipt_info": sim.verifier.add_latest(added["receipt_data"],
                                                                                added.get("purchase"))}
                except ValueError as error:
                    return 400, {"error": str(error)}
        elif path == "/stats/reset":
            if method == "POST":
                sim.stats.reset()
                sim.server_api.reset_stats()
                return 200, sim.stats.as_dict()
        else:
            return 404, {"error": "not found"}
        return 405, {"error": "method not allowed"}


# ---------- the process ----------

class Simulator:
    def close_idle_apple_connections(self):
        """A certificate or protocol change reaches only new connections (both are settled at the
        handshake): close the idle keep-alive ones, so that clients connect again and meet the new
        certificate (as they would meet a man in the middle) or protocol."""
        for connection in list(self.connections):
            transport = connection.transport
            if isinstance(connection.site, AppleSite) and connection.idle and transport is not None \
                    and not transport.is_closing():
                connection.site.closing(connection)
                connection.close_politely()

    def __init__(self, args):
        self.args = args
        self.verifier = Verifier()
        self.stats = Stats()
        self.settings = self._initial_settings()
        self.server_api = self._new_server_api()
        self.notifications = notifications.Notifications(args.certs)
        self.finishes = finish_api.Finishes()
        self.consumption = consumption.Consumption()
        self.connections = set()
        # (tls, http2) -> the context of a new connection: its certificate and the ALPN protocols offered.
        self.contexts = {(tls, http2): self._tls_context("server" if tls == "trusted" else "untrusted", http2)
                         for tls in ("trusted", "untrusted") for http2 in (True, False)}
        self.listening_context = self.contexts[("trusted", True)]
        # Called for every ClientHello, with or without SNI, before ALPN is settled: gives the new
        # connection the certificate and protocols of the current settings.
        self.listening_context.sni_callback = self._choose_context

    def _initial_settings(self):
        a = self.args
        return Settings(latency_ms=a.latency_ms, shared_secret=a.shared_secret, untrusted=a.untrusted,
                        http2=not a.http1_only)

    def _new_server_api(self):
        a = self.args
        key = a.appstore_key
        if key is None and os.path.exists(os.path.join(a.certs, "appstore-key.p8")):
            key = os.path.join(a.certs, "appstore-key.p8")
        return server_api.ServerAPI(a.certs, server_api.TokenChecker(key, a.appstore_key_id, a.appstore_issuer_id,
                                                                     a.bundle_id))

    def reset(self):
        self.settings = self._initial_settings()
        self.stats.reset()
        self.verifier = Verifier()
        self.server_api = self._new_server_api()
        self.notifications.stop()
        self.notifications = notifications.Notifications(self.args.certs)
        self.finishes = finish_api.Finishes()
        self.consumption = consumption.Consumption()

    def _tls_context(self, name, http2):
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.minimum_version = ssl.TLSVersion.TLSv1_2
        context.load_cert_chain(os.path.join(self.args.certs, name + ".pem"),
                                os.path.join(self.args.certs, name + "-key.pem"))
        context.set_alpn_protocols(["h2", "http/1.1"] if http2 else ["http/1.1"])
        return context

    def _choose_context(self, ssl_object, server_name, context):
        chosen = self.contexts[(self.settings.tls, self.settings.http2)]
        if chosen is not context:
            ssl_object.context = chosen
        return None

    async def run(self):
        loop = asyncio.get_running_loop()
        a = self.args
        listeners = []
        for port, site, tls in ((a.production_port, AppleSite(self, "production"), True),
                                (a.sandbox_port, AppleSite(self, "sandbox"), True),
                                (a.control_port, ControlSite(self), False)):
            protocol = NegotiatedConnection if tls else HTTPConnection
            server = await loop.create_server(lambda site=site, protocol=protocol: protocol(site), a.host, port,
                                              ssl=self.listening_context if tls else None, backlog=4096,
                                              reuse_address=True)
            listeners.append(server)
        ports = [s.sockets[0].getsockname()[1] for s in listeners]
        stop = asyncio.Event()
        for signum in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(signum, stop.set)
        print("appstore-sim listening production=%s:%d sandbox=%s:%d control=%s:%d loop=%s"
              % (a.host, ports[0], a.host, ports[1], a.host, ports[2], type(loop).__module__.split(".")[0]),
              flush=True)
        await stop.wait()
        for server in listeners:
            server.close()
        for connection in list(self.connections):
            if connection.transport is not None:
                connection.transport.abort()
        for server in listeners:
            await server.wait_closed()


def _shrink_asyncio_tls_buffers():
    """asyncio's TLS layer zero-fills a 256 KiB read buffer for every connection (2,000 connections:
    500 MB and half a millisecond each). Requests here are a few KiB, and 16 KiB is one TLS record."""
    import asyncio.sslproto
    if getattr(asyncio.sslproto.SSLProtocol, "max_size", 0) > 16 * 1024:
        asyncio.sslproto.SSLProtocol.max_size = 16 * 1024


def _raise_open_file_limit():
    """Thousands of keep-alive connections need more descriptors than the usual soft limit of 1024."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard == resource.RLIM_INFINITY or soft < hard:
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
        except (ValueError, OSError):
            pass


def _parse_args(argv):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--certs", required=True, metavar="DIR",
                        help="made by scripts/make-test-certs: server.pem, server-key.pem, untrusted.pem, ...")
    parser.add_argument("--production-port", type=int, default=9543, metavar="P", help="0: any free port")
    parser.add_argument("--sandbox-port", type=int, default=9544, metavar="S", help="0: any free port")
    parser.add_argument("--control-port", type=int, default=9545, metavar="C", help="0: any free port")
    parser.add_argument("--host", default="127.0.0.1", help="address of all three ports (default 127.0.0.1)")
    parser.add_argument("--latency-ms", type=float, default=0, metavar="N")
    parser.add_argument("--untrusted", action="store_true", help="start with the self-signed certificate")
    parser.add_argument("--shared-secret", metavar="X")
    parser.add_argument("--appstore-key", metavar="P8",
                        help="the test In-App Purchase key (PEM) whose public half checks Server API tokens"
                             " (default: CERTS/appstore-key.p8 when it exists; none: every Server API call is 401)")
    parser.add_argument("--appstore-key-id", default="SIMKEY0001", help="the tokens' kid (default SIMKEY0001)")
    parser.add_argument("--appstore-issuer-id", default="57246542-96fe-1a63-e053-0824d011072a",
                        help="the tokens' iss")
    parser.add_argument("--bundle-id", default="com.example.game", help="the tokens' bid (default com.example.game)")
    parser.add_argument("--http1-only", action="store_true",
                        help="offer only HTTP/1.1 by ALPN (control key http2 switches it on and off)")
    parser.add_argument("--loop", choices=("auto", "uvloop", "asyncio"), default="auto",
                        help="event loop; auto: uvloop when importable")
    args = parser.parse_args(argv)
    if args.latency_ms < 0:
        parser.error("--latency-ms must not be negative")
    return args


def _event_loop_factory(choice):
    if choice != "asyncio":
        try:
            import uvloop
            return uvloop.new_event_loop
        except ImportError:
            if choice == "uvloop":
                raise
    _shrink_asyncio_tls_buffers()
    return asyncio.new_event_loop


def main(argv=None):
    args = _parse_args(argv)
    _raise_open_file_limit()
    receipts.use_pki(args.certs)  # receipts are signed by the PKI next to the TLS certificates
    try:
        receipts.decode(receipts.app_receipt([]))  # the receipt PKI is there and its chain checks
        simulator = Simulator(args)
    except (OSError, ssl.SSLError) as error:
        print(f"appstore-sim: cannot load certificates from {args.certs}: {error}", file=sys.stderr)
        return 1
    with asyncio.Runner(loop_factory=_event_loop_factory(args.loop)) as runner:
        try:
            runner.run(simulator.run())
        except OSError as error:
            print(f"appstore-sim: {error}", file=sys.stderr)
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
