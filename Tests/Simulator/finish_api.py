"""Finish Transaction on the simulator (imported by appstore_sim.py):

  POST /inApps/v1/transactions/{transactionId}/finish   on the production and sandbox ports

The bearer JWT is checked as for the other Server API endpoints (server_api.TokenChecker): 401 with an
empty body otherwise. A transaction id of letters and digits (at most 64) is finished: 200 with an empty
JSON object (Apple documents no response body); anything else is 404 {"errorCode": 4040010}, and a method
other than POST 405. Every call is recorded, whatever its answer.

Control port:
  POST /finish/control  {"fault": null|404|429|500, "fail_next": N, "retry_after_ms": M}: the status
                        forced on finish calls whose token is good (a 429 carries Retry-After = now + M ms as a
                        UNIX time in ms, Apple's form; default 1000); fail_next N > 0: only the next N calls,
                        then the fault clears; 0: until cleared. Keys left out keep their value.
  GET  /finish/calls    every call, oldest first: [{"transaction_id", "environment", "status", "at_ms"}]
A simulator reset (POST /control {"reset": true}) forgets the calls and clears the fault.
"""
import json
import re
import threading
import time

PATH = re.compile(r"^/inApps/v1/transactions/([^/]*)/finish$")
TRANSACTION_ID = re.compile(r"^[A-Za-z0-9]{1,64}$")
CONTROL_PREFIX = "/finish/"
FAULTS = (None, 404, 429, 500)
NOT_FOUND = json.dumps({"errorCode": 4040010, "errorMessage": "Transaction id not found."}).encode()


def is_finish(path):
    return PATH.match(path) is not None


class Finishes:
    """The calls received and the fault to answer with."""

    def __init__(self):
        self.lock = threading.Lock()
        self.calls = []
        self.fault, self.fail_next, self.retry_after_ms = None, 0, 1000

    def answer(self, environment, request, tokens):
        """(HTTP status, body, extra headers) for a finish call; `tokens` is the Server API's TokenChecker."""
        transaction_id = PATH.match(request.path).group(1)
        status, body, headers = self._answer(request, transaction_id, tokens)
        with self.lock:
            self.calls.append({"transaction_id": transaction_id, "environment": environment, "status": status,
                               "at_ms": int(time.time() * 1000)})
        return status, body, headers

    def _answer(self, request, transaction_id, tokens):
        if request.method != "POST":
            return 405, b'{"errorMessage":"method not allowed"}', ()
        if tokens.problem(request.authorization) is not None:
            return 401, b"", ()
        fault = self._take_fault()
        if fault == 429:
            retry_after = int(time.time() * 1000) + self.retry_after_ms
            return 429, b'{"errorCode":4290000,"errorMessage":"Rate limit exceeded."}', \
                (("Retry-After", str(retry_after)),)
        if fault == 404 or not TRANSACTION_ID.match(transaction_id):
            return 404, NOT_FOUND, ()
        if fault is not None:
            return fault, json.dumps({"errorCode": fault * 10000, "errorMessage": "simulated fault"}).encode(), ()
        return 200, b"{}", ()

    def _take_fault(self):
        with self.lock:
            fault = self.fault
            if fault is not None and self.fail_next > 0:
                self.fail_next -= 1
                if self.fail_next == 0:
                    self.fault = None
            return fault

    def control(self, method, path, body):
        """(HTTP status, JSON-able answer) for the control port's /finish/ paths."""
        if path == CONTROL_PREFIX + "calls" and method == "GET":
            with self.lock:
                return 200, list(self.calls)
        if path == CONTROL_PREFIX + "control" and method == "POST":
            try:
                changes = json.loads(body or b"{}")
                if not isinstance(changes, dict):
                    raise ValueError("the body must be a JSON object")
                checked = {key: self._check(key, value) for key, value in changes.items()}
            except ValueError as error:
                return 400, {"error": str(error)}
            with self.lock:
                for key, value in checked.items():
                    setattr(self, key, value)
                return 200, {"fault": self.fault, "fail_next": self.fail_next, "retry_after_ms": self.retry_after_ms}
        return 404, {"error": "not found"}

    @staticmethod
    def _check(key, value):
        is_int = isinstance(value, int) and not isinstance(value, bool)
        if key == "fault" and value in FAULTS and not isinstance(value, bool):
            return value
        if key in ("fail_next", "retry_after_ms") and is_int and value >= 0:
            return value
        raise ValueError(f"bad value for {key}: {value!r}")
