#!/usr/bin/env python3
"""Test receipts for the App Store simulator: make them (tests, people) and read them (the simulator).

An iOS 7+ app receipt is what Apple signs: base64 of a PKCS#7 SignedData (content type `data`, one signer,
RSA PKCS#1 v1.5 with SHA-256 or SHA-1, no signed attributes, the leaf, intermediate and root certificates
included) whose content is Apple's ASN.1 payload:
    Payload          ::= SET OF ReceiptAttribute
    ReceiptAttribute ::= SEQUENCE { type INTEGER, version INTEGER, value OCTET STRING }
with 0 environment ("Production" | "ProductionSandbox"), 1 app item id, 2 bundle id, 3 app version, 4 opaque
value, 5 SHA-1 hash, 12 creation date, 18 original purchase date, 19 original app version, and one 17 per
in-app purchase, itself a SET OF attributes: 1701 quantity, 1702 product id, 1703 transaction id, 1704 purchase
date, 1705 original transaction id, 1706 original purchase date, 1708 expires date, 1711 web order line item id,
1712 cancellation date. Strings are UTF8String, dates IA5String "2014-07-24T09:11:01Z" (an absent date is an
empty one, as Apple writes it), numbers INTEGER. It is signed by the test PKI of receipt_pki.py, which
scripts/make-test-certs writes next to the TLS certificates: the service trusts its root through
IAP_APPLE_RECEIPT_ROOT_FILE, so the bytes the simulator's verifyReceipt reads are the bytes the service checks
itself in `local` mode.

Switches of app_receipt() make the receipts each check must refuse, or accept: `digest` sha1 or sha256,
`encoding` der or ber (indefinite lengths and the content in pieces, as Xcode writes), `chain` (see
receipt_pki.CHAINS: a wrong root, a leaf or an intermediate without its OID, an expired leaf, Xcode's
self-signed certificate), `forged` (signed by a key that is not the leaf's), `creation_ms`; and truncated().

An iOS 6 transaction receipt is Apple's old plist {"signature", "purchase-info", "environment", "pod",
"signing-status"}: purchase-info is base64 of a plist of the purchase, signature base64 of a version byte 3,
the RSA-SHA256 signature of version byte and purchase-info (256 bytes), the leaf's length (4 bytes) and DER.

The PKI's folder: the one given to use_pki(), else $IAP_RUN/certs (the stack's), else the local run's
/tmp/iap-local/certs (pki_files.default_directory()).
Keys, certificates and verified chains are read or checked once per process.

Command line: receipts.py app|ios6|decode ... (see --help).
"""
import argparse
import base64
import binascii
import calendar
import functools
import hashlib
import itertools
import json
import os
import re
import secrets
import sys
import time
import uuid
import zlib
from datetime import datetime, timezone

from cryptography import x509
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import padding, rsa

import pki_files
import receipt_asn1 as asn1
import receipt_pki

__all__ = ["purchase", "app_receipt", "ios6_receipt", "tampered", "truncated", "wrap_lines", "plus_as_space",
           "decode", "use_pki", "pki_directory", "MalformedReceipt", "BadSignature", "ENVIRONMENTS", "DIGESTS",
           "ENCODINGS", "CHAINS"]

ENVIRONMENTS = ("Production", "Sandbox")
DIGESTS = ("sha256", "sha1")
ENCODINGS = ("der", "ber")
CHAINS = tuple(receipt_pki.CHAINS)
# The payload's environment (type 0) for each environment; the Xcode chain writes Xcode's own.
PAYLOAD_ENVIRONMENT = {"Production": "Production", "Sandbox": "ProductionSandbox"}
XCODE_ENVIRONMENT = "Xcode"

OID_DATA = "1.2.840.113549.1.7.1"
OID_SIGNED_DATA = "1.2.840.113549.1.7.2"
OID_RSA_ENCRYPTION = "1.2.840.113549.1.1.1"
_DIGEST_OIDS = {"sha256": "2.16.840.1.101.3.4.2.1", "sha1": "1.3.14.3.2.26"}
_HASHES = {"sha256": hashes.SHA256, "sha1": hashes.SHA1}
_DIGEST_BY_OID = {asn1.oid(dotted)[2:]: name for name, dotted in _DIGEST_OIDS.items()}
_IOS6_VERSION = b"\x03"


class MalformedReceipt(ValueError):
    """Not base64, or not a receipt at all: Apple answers 21002."""


class BadSignature(ValueError):
    """A receipt that does not authenticate (Apple answers 21003); `check` names what failed: signature, chain,
    leaf_oid, intermediate_oid or validity."""

    def __init__(self, check, detail):
        super().__init__(f"{check}: {detail}")
        self.check = check


# ---------- the PKI's folder ----------

_chosen_pki = None


def use_pki(directory):
    """Sign and check with the receipt PKI in `directory` from now on (the simulator: its --certs); None: back
    to the default."""
    global _chosen_pki
    _chosen_pki = None if directory is None else str(directory)


def pki_directory():
    if _chosen_pki is not None:
        return _chosen_pki
    return pki_files.default_directory()


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
             purchase_ms=None, cancellation_ms=None, expires_ms=None):
    """One transaction, for app_receipt() or ios6_receipt().

    transaction_id: a fresh unique one when None. original_transaction_id: the transaction id when None.
    purchase_ms: now when None. cancellation_ms: set it to make a refunded transaction. expires_ms: set it to
    make a period of an auto-renewable subscription (its expires date, 1708; verifyReceipt's expires_date).
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
            "cancellation_ms": int(cancellation_ms) if cancellation_ms is not None else None,
            **({"expires_ms": int(expires_ms)} if expires_ms is not None else {})}


def app_receipt(purchases, bundle_id="com.example.game", environment="Production", application_version="1.0",
                *, digest="sha256", encoding="der", chain="good", forged=False, creation_ms=None):
    """An iOS 7+ app receipt (base64) holding every purchase given, in order (none is fine).

    digest: "sha256" or "sha1". encoding: "der" (Apple's) or "ber" (Xcode's). chain: a name of CHAINS ("xcode"
    also writes the environment Xcode). forged: signed by a key that is not the leaf's. creation_ms: the
    receipt's creation date (field 12), now when None.
    """
    _check_environment(environment)
    if digest not in DIGESTS or encoding not in ENCODINGS or chain not in CHAINS:
        raise ValueError(f"digest in {DIGESTS}, encoding in {ENCODINGS}, chain in {CHAINS}")
    production = environment == "Production"
    now = _now_ms() if creation_ms is None else int(creation_ms)
    checked = [_checked_purchase(p) for p in purchases]
    fields = {"environment": XCODE_ENVIRONMENT if chain == "xcode" else PAYLOAD_ENVIRONMENT[environment],
              "app_item_id": _stable_number(bundle_id) if production else 0,
              "bundle_id": bundle_id, "application_version": application_version,
              "original_application_version": "1.0", "receipt_creation_ms": now,
              "original_purchase_ms": min([p["purchase_ms"] for p in checked] + [now])}
    while True:  # practically never more than once: 4,000 base64 characters lacking '+' or '/'
        content = _payload(fields, checked, opaque=os.urandom(16))
        b64 = base64.b64encode(_signed_data(content, digest, encoding, chain, forged)).decode("ascii")
        if "+" in b64 and "/" in b64:
            return b64


def ios6_receipt(purchase, bundle_id="com.example.game", environment="Production", bvrs="1.0"):
    """An iOS 6 transaction receipt (base64) for one purchase."""
    _check_environment(environment)
    p = _checked_purchase(purchase)
    info = {"bid": bundle_id, "bvrs": bvrs, "item-id": str(_stable_number(p["product_id"])),
            "product-id": p["product_id"], "transaction-id": p["transaction_id"],
            "original-transaction-id": p["original_transaction_id"], "quantity": str(p["quantity"]),
            "purchase-date-ms": str(p["purchase_ms"]), "original-purchase-date-ms": str(p["purchase_ms"]),
            "unique-identifier": secrets.token_hex(20),
            "unique-vendor-identifier": str(uuid.uuid4()).upper()}
    if p.get("cancellation_ms") is not None:
        info["cancellation-date-ms"] = str(p["cancellation_ms"])
    _, ders, key = receipt_pki.load_chain(pki_directory(), "good")
    info_bytes = _plist(info)
    signature = key.sign(_IOS6_VERSION + info_bytes, padding.PKCS1v15(), hashes.SHA256())
    blob = _IOS6_VERSION + signature + len(ders[0]).to_bytes(4, "big") + ders[0]
    outer = {"signature": base64.b64encode(blob).decode(), "purchase-info": base64.b64encode(info_bytes).decode(),
             "environment": environment, "pod": "100", "signing-status": "0"}
    if environment == "Production":
        del outer["environment"]  # Apple writes it only for the sandbox
    # Base64 of ASCII text: like Apple's, it holds no '+' or '/'.
    return base64.b64encode(_plist(outer)).decode("ascii")


def tampered(b64):
    """The same receipt with one signed byte changed, its structure and payload still readable: the
    signature fails (21003). In an app receipt, a byte of the opaque value (field 4); in an iOS 6 one, of the
    purchase-info."""
    raw = bytearray(_b64decode(b64))
    if raw[:1] == b"{":
        outer = _parse_plist(bytes(raw))
        info = bytearray(_b64decode(outer.get("purchase-info", "")))
        if not info:
            raise MalformedReceipt("no purchase-info")
        info[-3] ^= 0x01  # inside the last value, before its quote and the closing lines
        return base64.b64encode(_plist(outer, {"purchase-info": base64.b64encode(bytes(info)).decode()})).decode()
    content = _content_element(_read_signed_data(bytes(raw))["content"])
    opaque = next(value for kind, value in _attributes(content) if kind == 4)
    raw[opaque.body_start] ^= 0x01
    return base64.b64encode(bytes(raw)).decode("ascii")


def truncated(b64, keep=0.5):
    """The receipt's first `keep` of its bytes, as a client that cut it off sends (21002)."""
    raw = _b64decode(b64)
    return base64.b64encode(raw[:int(len(raw) * keep)]).decode("ascii")


def wrap_lines(b64, width=76):
    """Base64 broken into lines of `width` characters, as NSDataBase64EncodingEndLineWithLineFeed does."""
    return "\n".join(b64[i:i + width] for i in range(0, len(b64), width))


def plus_as_space(b64):
    """What a client that form-encodes without escaping sends: every '+' read back as a space."""
    if "+" not in b64:
        raise ValueError("no '+' in this base64: replacing them would change nothing")
    return b64.replace("+", " ")


def decode(b64):
    """The payload (a dict) of a receipt, checked as Apple does; raises MalformedReceipt (21002) or
    BadSignature (21003).

    App receipt: {"kind": "app", "environment": "Production" | "Sandbox", "bundle_id", "application_version",
    "original_application_version", "app_item_id", "download_id", "version_external_identifier",
    "receipt_creation_ms", "original_purchase_ms", "in_app": [purchases as purchase() makes them]}.
    iOS 6: {"kind": "ios6", "environment", "bid", "bvrs", "item_id", "unique_identifier",
    "unique_vendor_identifier", "purchase"}. Line breaks in the base64 are allowed, any other character
    outside the alphabet (a space) is not.
    """
    raw = _b64decode(b64)
    if raw[:1] == b"{":
        return _decode_ios6(raw)
    try:
        signed = _read_signed_data(raw)
        payload = _read_payload(_content_element(signed["content"]))
    except (asn1.ASN1Error, KeyError, ValueError, UnicodeDecodeError) as error:
        raise MalformedReceipt(f"not an app receipt: {error}") from None
    public_key = _verified_leaf_key(signed["certificates"], signed["signer"], payload["receipt_creation_ms"])
    try:
        public_key.verify(signed["signature"], signed["content"], padding.PKCS1v15(), _HASHES[signed["digest"]]())
    except InvalidSignature:
        raise BadSignature("signature", "does not match the content under the leaf's key") from None
    if payload["environment"] not in PAYLOAD_ENVIRONMENT.values():
        raise MalformedReceipt(f"environment {payload['environment']!r}")  # Xcode's, were it signed by Apple
    payload["environment"] = "Production" if payload["environment"] == "Production" else "Sandbox"
    production = payload["environment"] == "Production"
    bundle_id, version = payload["bundle_id"], payload["application_version"]
    # Not in the payload: the answer's download_id and version_external_identifier, as app_item_id derived.
    payload["download_id"] = _stable_number(bundle_id + "/download", 14) if production else 0
    payload["version_external_identifier"] = _stable_number(bundle_id + "/" + version) if production else 0
    return payload


# ---------- PKCS#7 SignedData ----------

def _algorithm(dotted):
    return asn1.tlv(asn1.SEQUENCE, asn1.oid(dotted) + b"\x05\x00")


@functools.lru_cache(maxsize=None)
def _forging_key():
    return rsa.generate_private_key(public_exponent=65537, key_size=2048)


def _signed_data(content, digest, encoding, chain, forged):
    certificates, ders, key = receipt_pki.load_chain(pki_directory(), chain)
    leaf = certificates[0]
    signature = (_forging_key() if forged else key).sign(content, padding.PKCS1v15(), _HASHES[digest]())
    signer_info = asn1.Constructed(
        asn1.SEQUENCE, asn1.integer(1),
        asn1.tlv(asn1.SEQUENCE, leaf.issuer.public_bytes() + asn1.integer(leaf.serial_number)),
        _algorithm(_DIGEST_OIDS[digest]), _algorithm(OID_RSA_ENCRYPTION), asn1.tlv(asn1.OCTET_STRING, signature))
    signed_data = asn1.Constructed(
        asn1.SEQUENCE, asn1.integer(1),
        asn1.Constructed(asn1.SET, _algorithm(_DIGEST_OIDS[digest])),
        asn1.Constructed(asn1.SEQUENCE, asn1.oid(OID_DATA), asn1.Constructed(0xA0, asn1.Chunked(content))),
        asn1.Constructed(0xA0, *ders),
        asn1.Constructed(asn1.SET, signer_info))
    content_info = asn1.Constructed(asn1.SEQUENCE, asn1.oid(OID_SIGNED_DATA), asn1.Constructed(0xA0, signed_data))
    return asn1.encode(content_info, ber=encoding == "ber")


def _read_signed_data(raw):
    """{"content", "certificates" (DER), "signer" (issuer DER, serial), "digest", "signature"} of a SignedData
    in DER or BER; raises asn1.ASN1Error or ValueError when it is not one as receipts are."""
    content_type, explicit = asn1.read(raw).expect(asn1.SEQUENCE, 2)[:2]
    if content_type.encoded != asn1.oid(OID_SIGNED_DATA):
        raise ValueError("not SignedData")
    fields = explicit.expect(0xA0, 1)[0].expect(asn1.SEQUENCE, 4)
    encapsulated = fields[2].expect(asn1.SEQUENCE, 2)
    if encapsulated[0].encoded != asn1.oid(OID_DATA):
        raise ValueError("content type is not data")
    content = encapsulated[1].expect(0xA0, 1)[0].octets()
    certificates = [c.encoded for c in fields[3].children or ()] if fields[3].tag == 0xA0 else []
    signers = fields[-1].expect(asn1.SET)
    if len(signers) != 1:
        raise ValueError(f"{len(signers)} signers")
    version, issuer_and_serial, digest_algorithm, *rest = signers[0].expect(asn1.SEQUENCE, 5)
    if any(element.tag == 0xA0 for element in rest):
        raise ValueError("signed attributes: Apple's receipts have none")
    issuer, serial = issuer_and_serial.expect(asn1.SEQUENCE, 2)
    digest = _DIGEST_BY_OID[digest_algorithm.expect(asn1.SEQUENCE, 1)[0].body]
    return {"content": content, "certificates": certificates, "signer": (issuer.encoded, serial.integer()),
            "digest": digest, "signature": rest[-1].octets()}


@functools.lru_cache(maxsize=256)
def _chain(certificate_ders, signer, directory):
    """(the leaf's public key, the validity windows of leaf, intermediate and root) for receipts carrying
    these certificates, or the BadSignature of the first check that fails. Cached: a chain is checked once."""
    try:
        certificates = [x509.load_der_x509_certificate(der) for der in certificate_ders]
    except ValueError:
        return BadSignature("chain", "a certificate does not parse")
    issuer_der, serial = signer
    leaf = next((c for c in certificates
                 if c.issuer.public_bytes() == issuer_der and c.serial_number == serial), None)
    if leaf is None:
        return BadSignature("chain", "no certificate is the signer's")
    intermediate = next((c for c in certificates if c.subject == leaf.issuer and c is not leaf), None)
    root = receipt_pki.load_root(directory)
    try:
        if intermediate is None or intermediate.issuer != root.subject:
            raise ValueError("the leaf does not lead to the root through an intermediate")
        _check_issued_by(intermediate, root)
        _check_issued_by(leaf, intermediate)
    except (ValueError, TypeError, InvalidSignature) as error:
        return BadSignature("chain", str(error) or "a certificate's signature does not check")
    for certificate, marker, check in ((leaf, receipt_pki.LEAF_MARKER_OID, "leaf_oid"),
                                       (intermediate, receipt_pki.INTERMEDIATE_MARKER_OID, "intermediate_oid")):
        if not any(extension.oid == marker for extension in certificate.extensions):
            return BadSignature(check, f"{certificate.subject.rfc4514_string()} lacks {marker.dotted_string}")
    windows = [(c.not_valid_before_utc.timestamp() * 1000, c.not_valid_after_utc.timestamp() * 1000,
                c.subject.rfc4514_string()) for c in (leaf, intermediate, root)]
    return leaf.public_key(), windows


def _check_issued_by(certificate, issuer):
    """Raises unless `issuer` signed `certificate` (RSA, with the certificate's own hash: Apple's certificates
    before 2016 are SHA-1, which cryptography's verify_directly_issued_by refuses)."""
    if certificate.issuer != issuer.subject:
        raise ValueError(f"{certificate.subject.rfc4514_string()} is not issued by {issuer.subject.rfc4514_string()}")
    issuer.public_key().verify(certificate.signature, certificate.tbs_certificate_bytes, padding.PKCS1v15(),
                               certificate.signature_hash_algorithm)


def _verified_leaf_key(certificate_ders, signer, creation_ms):
    checked = _chain(tuple(certificate_ders), signer, pki_directory())
    if isinstance(checked, BadSignature):
        raise checked
    public_key, windows = checked
    for not_before, not_after, subject in windows:
        if not not_before <= creation_ms <= not_after:
            raise BadSignature("validity", f"{subject} is not valid at the receipt's creation date")
    return public_key


# ---------- the ASN.1 payload ----------

def _attribute(kind, value):
    return asn1.tlv(asn1.SEQUENCE, asn1.integer(kind) + asn1.integer(1) + asn1.tlv(asn1.OCTET_STRING, value))


def _attribute_set(attributes):
    return asn1.tlv(asn1.SET, b"".join(sorted(attributes)))  # DER: a SET OF sorted by encoding


def _utf8(text):
    return asn1.tlv(asn1.UTF8_STRING, text.encode())


def _date(ms):
    """Apple's date, to the second; an empty string when absent."""
    text = "" if ms is None else datetime.fromtimestamp(ms // 1000, timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    return asn1.tlv(asn1.IA5_STRING, text.encode())


def _payload(fields, purchases, opaque):
    attributes = [_attribute(0, _utf8(fields["environment"])), _attribute(1, asn1.integer(fields["app_item_id"])),
                  _attribute(2, _utf8(fields["bundle_id"])), _attribute(3, _utf8(fields["application_version"])),
                  _attribute(4, opaque),
                  _attribute(5, hashlib.sha1(opaque + fields["bundle_id"].encode()).digest()),
                  _attribute(12, _date(fields["receipt_creation_ms"])),
                  _attribute(18, _date(fields["original_purchase_ms"])),
                  _attribute(19, _utf8(fields["original_application_version"]))]
    purchase_attributes = []
    for p in purchases:
        purchase_attributes.append(_attribute(17, _attribute_set([
            _attribute(1701, asn1.integer(p["quantity"])), _attribute(1702, _utf8(p["product_id"])),
            _attribute(1703, _utf8(p["transaction_id"])), _attribute(1704, _date(p["purchase_ms"])),
            _attribute(1705, _utf8(p["original_transaction_id"])), _attribute(1706, _date(p["purchase_ms"])),
            _attribute(1708, _date(p.get("expires_ms"))), _attribute(1711, asn1.integer(0)),
            _attribute(1712, _date(p.get("cancellation_ms")))])))
    # The receipt's own fields sorted as DER sorts a SET OF; the purchases after them in the order given, as
    # verifyReceipt lists them (readers take a SET's elements in any order).
    return asn1.tlv(asn1.SET, b"".join(sorted(attributes)) + b"".join(purchase_attributes))


def _content_element(content):
    return asn1.read(content)


def _attributes(element):
    """(type, value element) of each attribute of a payload SET."""
    for attribute in element.expect(asn1.SET):
        kind, _, value = attribute.expect(asn1.SEQUENCE, 3)
        if value.tag != asn1.OCTET_STRING:
            raise ValueError(f"attribute {kind.integer()}: the value is not an OCTET STRING")
        yield kind.integer(), value


def _value(element):
    """The Python value of an attribute's inside: an int, a str, or a date in ms (None when empty)."""
    inner = asn1.read(element.body)
    if inner.tag == asn1.INTEGER:
        return inner.integer()
    text = inner.body.decode("utf-8")
    return _parse_date(text) if inner.tag == asn1.IA5_STRING else text


_RFC3339 = re.compile(r"(\d{4})-(\d\d)-(\d\d)T(\d\d):(\d\d):(\d\d)(?:\.\d+)?Z")


def _parse_date(text):
    if not text:
        return None
    match = _RFC3339.fullmatch(text)
    if match is None:
        raise ValueError(f"not a date: {text!r}")
    return calendar.timegm(tuple(int(part) for part in match.groups())) * 1000


_RECEIPT_TYPES = {0: "environment", 1: "app_item_id", 2: "bundle_id", 3: "application_version",
                  12: "receipt_creation_ms", 18: "original_purchase_ms", 19: "original_application_version"}
_PURCHASE_TYPES = {1701: "quantity", 1702: "product_id", 1703: "transaction_id", 1704: "purchase_ms",
                   1705: "original_transaction_id", 1708: "expires_ms", 1712: "cancellation_ms"}


def _read_payload(element):
    payload = {"kind": "app", "app_item_id": 0, "original_application_version": None, "original_purchase_ms": None}
    in_app = []
    for kind, value in _attributes(element):
        if kind in _RECEIPT_TYPES:
            payload[_RECEIPT_TYPES[kind]] = _value(value)
        elif kind == 17:
            p = {"cancellation_ms": None}
            for inner_kind, inner_value in _attributes(asn1.read(value.body)):
                if inner_kind in _PURCHASE_TYPES:
                    p[_PURCHASE_TYPES[inner_kind]] = _value(inner_value)
            in_app.append({key: p.get(key) for key in ("product_id", "transaction_id", "original_transaction_id",
                                                   "quantity", "purchase_ms", "cancellation_ms")})
            if p.get("expires_ms") is not None:
                in_app[-1]["expires_ms"] = p["expires_ms"]
    for required in ("environment", "bundle_id", "application_version", "receipt_creation_ms"):
        if payload.get(required) is None:
            raise ValueError(f"no {required}")
    payload["in_app"] = in_app
    return payload


# ---------- iOS 6 ----------

def _plist(values, changes=None):
    """Apple's old-style plist of string values: { "key" = "value"; ... }."""
    values = {**values, **(changes or {})}
    for key, value in values.items():
        if '"' in key + value or "\n" in key + value:
            raise ValueError(f"a plist value with a quote or a line feed: {key!r}")
    return ("{\n" + "".join(f'\t"{key}" = "{value}";\n' for key, value in values.items()) + "}").encode()


_PLIST_ENTRY = re.compile(rb'"([^"\n]+)"\s*=\s*"([^"\n]*)";')


def _parse_plist(raw):
    return {key.decode(): value.decode() for key, value in _PLIST_ENTRY.findall(raw)}


def _decode_ios6(raw):
    try:
        outer = _parse_plist(raw)
        info_bytes = _b64decode(outer["purchase-info"])
        blob = _b64decode(outer["signature"])
        info = _parse_plist(info_bytes)
        version, signature = blob[:1], blob[1:257]
        length = int.from_bytes(blob[257:261], "big")
        leaf_der = blob[261:261 + length]
        purchase_ms = int(info["purchase-date-ms"])
        p = {"product_id": info["product-id"], "transaction_id": info["transaction-id"],
             "original_transaction_id": info["original-transaction-id"], "quantity": int(info["quantity"]),
             "purchase_ms": purchase_ms,
             "cancellation_ms": int(info["cancellation-date-ms"]) if "cancellation-date-ms" in info else None}
    except (KeyError, ValueError, MalformedReceipt) as error:
        raise MalformedReceipt(f"not an iOS 6 receipt: {error}") from None
    if version != _IOS6_VERSION or len(leaf_der) != length:
        raise MalformedReceipt("not an iOS 6 receipt: bad signature blob")
    _, ders, _ = receipt_pki.load_chain(pki_directory(), "good")
    leaf = x509.load_der_x509_certificate(leaf_der)
    public_key = _verified_leaf_key((leaf_der, ders[1]), (leaf.issuer.public_bytes(), leaf.serial_number),
                                    purchase_ms)
    try:
        public_key.verify(signature, version + info_bytes, padding.PKCS1v15(), hashes.SHA256())
    except InvalidSignature:
        raise BadSignature("signature", "does not match the purchase-info") from None
    return {"kind": "ios6", "environment": "Sandbox" if outer.get("environment") == "Sandbox" else "Production",
            "bid": info["bid"], "bvrs": info["bvrs"], "item_id": info["item-id"],
            "unique_identifier": info["unique-identifier"],
            "unique_vendor_identifier": info["unique-vendor-identifier"], "purchase": p}

# ---------- helpers ----------

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



# ---------- command line ----------

def _main(argv=None):
    parser = argparse.ArgumentParser(
        description="Make or read App Store simulator receipts. Prints the base64 receipt, or with --json "
                    '{"receipt_data": ..., "purchases": [...]}.',
        epilog="examples: receipts.py app zydj.product.pay_6 --json; "
               "receipts.py app p1 p2 --refunded p3 --environment Sandbox --wrap; "
               "receipts.py app p1 --digest sha1 --encoding ber --chain expired-leaf --created 2020-06-01; "
               "receipts.py ios6 p1 | receipts.py decode -")
    parser.add_argument("--certs", metavar="DIR", help="the receipt PKI (default: $IAP_RUN/certs, else the local "
                                                       f"run's {pki_files.default_directory()})")
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
    app.add_argument("--digest", choices=DIGESTS, default="sha256")
    app.add_argument("--encoding", choices=ENCODINGS, default="der", help="ber: indefinite lengths, as Xcode")
    app.add_argument("--chain", choices=CHAINS, default="good", help="the certificates that sign it")
    app.add_argument("--forged", action="store_true", help="signed by a key that is not the leaf's (21003)")
    app.add_argument("--created", metavar="YYYY-MM-DD", help="the receipt's creation date (default: now)")
    app.add_argument("--truncated", action="store_true", help="cut off after half its bytes (21002)")
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
    if args.certs:
        use_pki(args.certs)
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
        created = None
        if args.created:
            created = calendar.timegm(datetime.strptime(args.created, "%Y-%m-%d").timetuple()) * 1000
        b64 = app_receipt(purchases, bundle_id=args.bundle_id, environment=args.environment,
                          application_version=args.application_version, digest=args.digest,
                          encoding=args.encoding, chain=args.chain, forged=args.forged, creation_ms=created)
        if args.truncated:
            b64 = truncated(b64)
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
    try:
        sys.exit(_main())
    except pki_files.MissingPKI as missing:
        sys.exit(f"receipts.py: {missing}")
