#!/usr/bin/env python3
"""Test receipts for the App Store simulator: make them (tests, people) and read them (the simulator).

A receipt is base64 of the simulator's own signed container, standing in for Apple's PKCS#7:

    magic b"IAPSIMR1" | payload length (4 bytes, big endian) | payload (UTF-8 JSON)
    | filler (random bytes, where Apple's certificates would be) | HMAC-SHA256 of everything before (32 bytes)

The filler makes receipts about as long as real ones (two kilobytes of base64) and full of '+' and '/',
which the service must carry unchanged; every generated receipt holds at least one of each, so
plus_as_space() always changes something. The service never looks inside a receipt: it only hashes
and forwards it, so nothing outside Tests/ depends on this format.

Command line: receipts.py app|ios6|decode ... (see --help).
"""
import argparse
import base64
import binascii
import hashlib
import hmac
import itertools
import json
import os
import secrets
import struct
import sys
import time
import uuid
import zlib

__all__ = ["purchase", "app_receipt", "ios6_receipt", "tampered", "wrap_lines", "plus_as_space", "decode",
           "MalformedReceipt", "BadSignature"]

MAGIC = b"IAPSIMR1"
_LENGTH = struct.Struct(">I")
_MAC_SIZE = 32
_FILLER_SIZE = 1200
# A fixed, public test key: these receipts prove nothing outside the simulator.
_MAC_KEY = hmac.new(b"iap-fcgi App Store simulator test receipts", digestmod=hashlib.sha256)
ENVIRONMENTS = ("Production", "Sandbox")


class MalformedReceipt(ValueError):
    """Not base64, or not a receipt at all: Apple answers 21002."""


class BadSignature(ValueError):
    """A receipt whose signature does not match its content: Apple answers 21003."""


# Transaction ids look like Apple's: "1000000" and nine digits. Each process counts up from a random
# start (os.urandom, re-drawn in a forked child), so ids are unique within a process and two processes
# collide only when their ranges overlap: about (processes² × ids per process) / 10⁹, negligible here.
_ID_SPACE = 10 ** 9


def _new_id_counter():
    return itertools.count(secrets.randbelow(_ID_SPACE) ^ (time.time_ns() // 1000 % _ID_SPACE))


_id_counter = _new_id_counter()


def _reseed_after_fork():
    global _id_counter
    _id_counter = _new_id_counter()


os.register_at_fork(after_in_child=_reseed_after_fork)


def _new_transaction_id():
    return "1000000%09d" % (next(_id_counter) % _ID_SPACE)


def _now_ms():
    """Now, to the second, in milliseconds: Apple's purchase times have no sub-second part."""
    return int(time.time()) * 1000


def _stable_number(text, digits=9):
    """A fixed number of `digits` digits for a name (an app's or a product's Apple id)."""
    return 10 ** (digits - 1) + zlib.crc32(text.encode()) % (9 * 10 ** (digits - 1))


def purchase(product_id, transaction_id=None, original_transaction_id=None, quantity=1,
             purchase_ms=None, cancellation_ms=None):
    """One transaction, for app_receipt() or ios6_receipt().

    transaction_id: a fresh unique one when None. original_transaction_id: the transaction id when None.
    purchase_ms: now when None. cancellation_ms: set it to make a refunded transaction.
    """
    if not isinstance(product_id, str) or not product_id:
        raise ValueError("product_id must be a non-empty string")
    if isinstance(quantity, bool) or not isinstance(quantity, int) or quantity < 1:
        raise ValueError("quantity must be a positive integer")
    transaction_id = str(transaction_id) if transaction_id is not None else _new_transaction_id()
    return {"product_id": product_id,
            "transaction_id": transaction_id,
            "original_transaction_id": str(original_transaction_id or transaction_id),
            "quantity": quantity,
            "purchase_ms": int(purchase_ms) if purchase_ms is not None else _now_ms(),
            "cancellation_ms": int(cancellation_ms) if cancellation_ms is not None else None}


def app_receipt(purchases, bundle_id="com.example.game", environment="Production", application_version="1.0"):
    """An iOS 7+ app receipt (base64) holding every purchase given, in order (none is fine)."""
    _check_environment(environment)
    production = environment == "Production"
    now = _now_ms()
    # Apple's sandbox receipts carry zeros where production ones carry the app's store ids.
    payload = {"kind": "app", "environment": environment, "bundle_id": bundle_id,
               "application_version": application_version, "original_application_version": "1.0",
               "app_item_id": _stable_number(bundle_id) if production else 0,
               "download_id": _stable_number(bundle_id + "/download", 14) if production else 0,
               "version_external_identifier": _stable_number(bundle_id + "/" + application_version)
               if production else 0,
               "receipt_creation_ms": now,
               "original_purchase_ms": min([p["purchase_ms"] for p in purchases] + [now]),
               "in_app": [_checked_purchase(p) for p in purchases]}
    return _seal(payload)


def ios6_receipt(purchase, bundle_id="com.example.game", environment="Production", bvrs="1.0"):
    """An iOS 6 transaction receipt (base64) for one purchase."""
    _check_environment(environment)
    payload = {"kind": "ios6", "environment": environment, "bid": bundle_id, "bvrs": bvrs,
               "item_id": str(_stable_number(_checked_purchase(purchase)["product_id"])),
               "unique_identifier": secrets.token_hex(20),
               "unique_vendor_identifier": str(uuid.uuid4()).upper(),
               "purchase": purchase}
    return _seal(payload)


def tampered(b64):
    """The same receipt with one payload byte changed: still valid base64, but the signature fails (21003)."""
    raw = bytearray(_b64decode(b64))
    if len(raw) < len(MAGIC) + _LENGTH.size + 1 + _MAC_SIZE:
        raise MalformedReceipt("too short to be a receipt")
    raw[len(MAGIC) + _LENGTH.size] ^= 0x01  # the payload's first byte
    return base64.b64encode(bytes(raw)).decode("ascii")


def wrap_lines(b64, width=76):
    """Base64 broken into lines of `width` characters, as NSDataBase64EncodingEndLineWithLineFeed does."""
    return "\n".join(b64[i:i + width] for i in range(0, len(b64), width))


def plus_as_space(b64):
    """What a client that form-encodes without escaping sends: every '+' read back as a space."""
    if "+" not in b64:
        raise ValueError("no '+' in this base64: replacing them would change nothing")
    return b64.replace("+", " ")


def decode(b64):
    """The payload (a dict) of a receipt; raises MalformedReceipt (21002) or BadSignature (21003).

    Line breaks in the base64 are allowed, any other character outside the alphabet (a space) is not.
    """
    raw = _b64decode(b64)
    header = len(MAGIC) + _LENGTH.size
    if len(raw) < header + _MAC_SIZE or not raw.startswith(MAGIC):
        raise MalformedReceipt("not a simulator receipt")
    (length,) = _LENGTH.unpack_from(raw, len(MAGIC))
    if header + length > len(raw) - _MAC_SIZE:
        raise MalformedReceipt("payload length past the end")
    mac = _MAC_KEY.copy()
    mac.update(memoryview(raw)[:-_MAC_SIZE])
    if not hmac.compare_digest(mac.digest(), raw[-_MAC_SIZE:]):
        raise BadSignature("signature does not match")
    try:
        payload = json.loads(raw[header:header + length])
    except ValueError as error:
        raise MalformedReceipt("payload is not JSON") from error
    if not isinstance(payload, dict) or payload.get("kind") not in ("app", "ios6"):
        raise MalformedReceipt("unknown payload")
    return payload


def _b64decode(b64):
    if isinstance(b64, str):
        try:
            b64 = b64.encode("ascii")
        except UnicodeEncodeError as error:
            raise MalformedReceipt("not base64") from error
    try:  # strict: any character outside the alphabet, or misplaced padding, is an error
        return binascii.a2b_base64(b64.replace(b"\n", b"").replace(b"\r", b""), strict_mode=True)
    except binascii.Error as error:
        raise MalformedReceipt("not base64") from error


def _check_environment(environment):
    if environment not in ENVIRONMENTS:
        raise ValueError(f"environment must be one of {ENVIRONMENTS}, not {environment!r}")


def _checked_purchase(p):
    if not isinstance(p, dict) or not {"product_id", "transaction_id", "purchase_ms"} <= p.keys():
        raise ValueError("a purchase is a dict made by receipts.purchase()")
    return p


def _seal(payload):
    body = json.dumps(payload, separators=(",", ":")).encode()
    head = MAGIC + _LENGTH.pack(len(body)) + body
    while True:  # practically never more than once: 1,600 random base64 characters lacking '+' or '/'
        signed = head + os.urandom(_FILLER_SIZE)
        mac = _MAC_KEY.copy()
        mac.update(signed)
        b64 = base64.b64encode(signed + mac.digest()).decode("ascii")
        if "+" in b64 and "/" in b64:
            return b64


# ---------- command line ----------

def _main(argv=None):
    parser = argparse.ArgumentParser(
        description="Make or read App Store simulator receipts. Prints the base64 receipt, or with --json "
                    '{"receipt_data": ..., "purchases": [...]}.',
        epilog="examples: receipts.py app zydj.product.pay_6 --json; "
               "receipts.py app p1 p2 --refunded p3 --environment Sandbox --wrap; "
               "receipts.py ios6 p1 | receipts.py decode -")
    commands = parser.add_subparsers(dest="command", required=True)

    def output_options(command):
        command.add_argument("--bundle-id", default="com.example.game")
        command.add_argument("--environment", choices=ENVIRONMENTS, default="Production")
        command.add_argument("--wrap", action="store_true", help="line feed every 76 characters")
        command.add_argument("--plus-as-space", action="store_true", help="every '+' as a space (Apple: 21002)")
        command.add_argument("--tampered", action="store_true", help="break the signature (Apple: 21003)")
        command.add_argument("--json", action="store_true", help="print the receipt and its purchases as JSON")

    app = commands.add_parser("app", help="an iOS 7+ app receipt")
    app.add_argument("products", nargs="*", metavar="PRODUCT", help="one purchase of each (none: empty in_app)")
    app.add_argument("--refunded", action="append", default=[], metavar="PRODUCT",
                     help="also a refunded purchase of PRODUCT (repeatable)")
    app.add_argument("--application-version", default="1.0")
    output_options(app)

    ios6 = commands.add_parser("ios6", help="an iOS 6 transaction receipt")
    ios6.add_argument("product", metavar="PRODUCT")
    ios6.add_argument("--transaction-id")
    ios6.add_argument("--quantity", type=int, default=1)
    ios6.add_argument("--bvrs", default="1.0")
    output_options(ios6)

    read = commands.add_parser("decode", help="print a receipt's payload; exit 1 when it is not valid")
    read.add_argument("receipt", metavar="BASE64", help="the receipt, or - to read it from standard input")

    args = parser.parse_args(argv)
    if args.command == "decode":
        text = sys.stdin.read().strip() if args.receipt == "-" else args.receipt
        try:
            print(json.dumps(decode(text), indent=2))
        except (MalformedReceipt, BadSignature) as error:
            print(f"invalid receipt: {error}", file=sys.stderr)
            return 1
        return 0

    if args.command == "app":
        now = _now_ms()
        purchases = [purchase(p) for p in args.products]
        purchases += [purchase(p, cancellation_ms=now) for p in args.refunded]
        b64 = app_receipt(purchases, bundle_id=args.bundle_id, environment=args.environment,
                          application_version=args.application_version)
    else:
        purchases = [purchase(args.product, transaction_id=args.transaction_id, quantity=args.quantity)]
        b64 = ios6_receipt(purchases[0], bundle_id=args.bundle_id, environment=args.environment, bvrs=args.bvrs)
    if args.tampered:
        b64 = tampered(b64)
    if args.plus_as_space:
        b64 = plus_as_space(b64)
    if args.wrap:
        b64 = wrap_lines(b64)
    print(json.dumps({"receipt_data": b64, "purchases": purchases}, indent=2) if args.json else b64)
    return 0


if __name__ == "__main__":
    sys.exit(_main())
