#!/usr/bin/env python3
"""StoreKit 2 signed transactions for tests and people: a test PKI shaped like Apple's, and JWS signed with it.

Apple signs each StoreKit 2 transaction as a compact JWS: base64url(header).base64url(payload).base64url(signature),
header {"alg": "ES256", "x5c": [leaf, intermediate, root]} (standard base64 DER), signature raw r || s (64 bytes) by
the leaf's P-256 key. The test PKI copies the shape of Apple's: a P-384 root (Apple Root CA - G3), a P-384
intermediate carrying Apple's marker OID 1.2.840.113635.100.6.2.1 (Apple's WWDR CA) and a P-256 leaf carrying
1.2.840.113635.100.6.11.1. Next to it, the bad variants the service must refuse (see CHAINS). Nothing here is trusted
anywhere but in tests: the service trusts it only when IAP_APPLE_ROOT_CA_FILE names signing-root.pem.

Command line:
    signed_data.py pki DIR                      make the test PKI in DIR (scripts/make-test-certs does)
    signed_data.py transaction PRODUCT [...]    print a signed transaction (see --help)
    signed_data.py renewal-info ORIGINAL_ID PRODUCT [...]   print a subscription's signed renewal info
    signed_data.py decode JWS                   print a JWS's header and payload, unverified
"""
import argparse
import base64
import datetime
import json
import os
import sys
import time
import uuid

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.asymmetric.utils import decode_dss_signature
from cryptography.x509.oid import NameOID

import pki_files

__all__ = ["make_pki", "transaction", "renewal_info", "sign", "CHAINS", "ENVIRONMENTS", "TYPES"]

INTERMEDIATE_MARKER_OID = x509.ObjectIdentifier("1.2.840.113635.100.6.2.1")
LEAF_MARKER_OID = x509.ObjectIdentifier("1.2.840.113635.100.6.11.1")
ENVIRONMENTS = ("Production", "Sandbox", "Xcode", "LocalTesting")
TYPES = ("Consumable", "Non-Consumable", "Auto-Renewable Subscription", "Non-Renewing Subscription")

# Each chain a JWS can be signed with: the files of its (leaf, intermediate, root), by name in the PKI folder.
CHAINS = {
    # Apple's shape: what the service accepts when it trusts signing-root.pem.
    "good": ("signing-leaf", "signing-intermediate", "signing-root"),
    # The same shape under a root the service does not trust.
    "untrusted": ("signing-untrusted-leaf", "signing-untrusted-intermediate", "signing-untrusted-root"),
    # A leaf with its OID under an intermediate without the intermediate's OID.
    "intermediate-without-oid": ("signing-leaf-under-plain-intermediate", "signing-plain-intermediate",
                                 "signing-root"),
    # A leaf without its OID under the good intermediate.
    "leaf-without-oid": ("signing-plain-leaf", "signing-intermediate", "signing-root"),
    # A leaf whose validity ended on 2021-01-01: refused at any signedDate after that.
    "expired-leaf": ("signing-expired-leaf", "signing-intermediate", "signing-root"),
}
EXPIRED_LEAF_NOT_AFTER = datetime.datetime(2021, 1, 1, tzinfo=datetime.timezone.utc)
_VALIDITY = datetime.timedelta(days=3650)


def _name(common_name):
    return x509.Name([x509.NameAttribute(NameOID.ORGANIZATION_NAME, "iap-fcgi tests"),
                      x509.NameAttribute(NameOID.COMMON_NAME, common_name)])


def _certificate(subject, key, issuer_name, issuer_key, *, ca, marker_oid=None, not_before=None, not_after=None):
    """A certificate for `key`, signed with ECDSA-SHA384 (a P-384 issuer, as Apple's) or -SHA256."""
    now = datetime.datetime.now(datetime.timezone.utc)
    not_before = not_before or now - datetime.timedelta(days=1)
    builder = (x509.CertificateBuilder()
               .subject_name(_name(subject)).issuer_name(issuer_name)
               .public_key(key.public_key()).serial_number(x509.random_serial_number())
               .not_valid_before(not_before).not_valid_after(not_after or now + _VALIDITY)
               .add_extension(x509.BasicConstraints(ca=ca, path_length=0 if ca else None), critical=True)
               .add_extension(x509.KeyUsage(digital_signature=not ca, content_commitment=False,
                                            key_encipherment=False, data_encipherment=False, key_agreement=False,
                                            key_cert_sign=ca, crl_sign=ca, encipher_only=False,
                                            decipher_only=False), critical=True)
               .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()), critical=False)
               .add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(issuer_key.public_key()),
                              critical=False))
    if marker_oid is not None:
        # Apple's marker extensions hold an ASN.1 NULL and are not critical.
        builder = builder.add_extension(x509.UnrecognizedExtension(marker_oid, b"\x05\x00"), critical=False)
    digest = hashes.SHA384() if isinstance(issuer_key.curve, ec.SECP384R1) else hashes.SHA256()
    return builder.sign(issuer_key, digest)


def _root(subject, key):
    """A self-signed P-384 root, as Apple Root CA - G3."""
    name = _name(subject)
    now = datetime.datetime.now(datetime.timezone.utc)
    builder = (x509.CertificateBuilder()
               .subject_name(name).issuer_name(name)
               .public_key(key.public_key()).serial_number(x509.random_serial_number())
               .not_valid_before(now - datetime.timedelta(days=1)).not_valid_after(now + _VALIDITY)
               .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
               .add_extension(x509.KeyUsage(digital_signature=False, content_commitment=False,
                                            key_encipherment=False, data_encipherment=False, key_agreement=False,
                                            key_cert_sign=True, crl_sign=True, encipher_only=False,
                                            decipher_only=False), critical=True)
               .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()), critical=False))
    return builder.sign(key, hashes.SHA384())


def make_pki(directory):
    """Writes NAME.pem and NAME-key.pem for every certificate CHAINS names (keys 0600)."""
    made = {}

    def keep(name, certificate, key):
        made[name] = (certificate, key)

    def p384():
        return ec.generate_private_key(ec.SECP384R1())

    def p256():
        return ec.generate_private_key(ec.SECP256R1())

    for prefix, label in (("signing", "Test Root CA - G3"), ("signing-untrusted", "Untrusted Root CA")):
        root_key = p384()
        root = _root(f"iap-fcgi {label}", root_key)
        keep(f"{prefix}-root", root, root_key)
        intermediate_key = p384()
        intermediate = _certificate(f"iap-fcgi {label} Intermediate", intermediate_key, root.subject, root_key,
                                    ca=True, marker_oid=INTERMEDIATE_MARKER_OID)
        keep(f"{prefix}-intermediate", intermediate, intermediate_key)
        leaf_key = p256()
        keep(f"{prefix}-leaf", _certificate(f"iap-fcgi {label} StoreKit Signing", leaf_key, intermediate.subject,
                                            intermediate_key, ca=False, marker_oid=LEAF_MARKER_OID), leaf_key)

    root, root_key = made["signing-root"]
    intermediate, intermediate_key = made["signing-intermediate"]
    plain_intermediate_key = p384()
    plain_intermediate = _certificate("iap-fcgi Intermediate without OID", plain_intermediate_key, root.subject,
                                      root_key, ca=True)
    keep("signing-plain-intermediate", plain_intermediate, plain_intermediate_key)
    key = p256()
    keep("signing-leaf-under-plain-intermediate",
         _certificate("iap-fcgi Leaf under an intermediate without OID", key, plain_intermediate.subject,
                      plain_intermediate_key, ca=False, marker_oid=LEAF_MARKER_OID), key)
    key = p256()
    keep("signing-plain-leaf", _certificate("iap-fcgi Leaf without OID", key, intermediate.subject,
                                            intermediate_key, ca=False), key)
    key = p256()
    keep("signing-expired-leaf",
         _certificate("iap-fcgi Expired Leaf", key, intermediate.subject, intermediate_key, ca=False,
                      marker_oid=LEAF_MARKER_OID,
                      not_before=EXPIRED_LEAF_NOT_AFTER - datetime.timedelta(days=365),
                      not_after=EXPIRED_LEAF_NOT_AFTER), key)

    return pki_files.write(directory, made)


def _b64url(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def _load_chain(directory, chain):
    names = CHAINS[chain]
    certificates = []
    try:
        for name in names:
            with open(os.path.join(directory, name + ".pem"), "rb") as source:
                certificates.append(x509.load_pem_x509_certificate(source.read()))
        with open(os.path.join(directory, names[0] + "-key.pem"), "rb") as source:
            leaf_key = serialization.load_pem_private_key(source.read(), password=None)
    except FileNotFoundError:
        raise pki_files.MissingPKI(directory, "StoreKit 2 signing PKI") from None
    return certificates, leaf_key


def sign(payload, directory, chain="good", signing_key=None):
    """A compact JWS of `payload` (a dict) signed by the chain's leaf (or by `signing_key`, to forge one)."""
    certificates, leaf_key = _load_chain(directory, chain)
    header = {"alg": "ES256", "x5c": [base64.b64encode(c.public_bytes(serialization.Encoding.DER)).decode()
                                      for c in certificates]}
    signing_input = (_b64url(json.dumps(header, separators=(",", ":")).encode()) + "."
                     + _b64url(json.dumps(payload, separators=(",", ":")).encode()))
    der = (signing_key or leaf_key).sign(signing_input.encode(), ec.ECDSA(hashes.SHA256()))
    r, s = decode_dss_signature(der)
    return signing_input + "." + _b64url(r.to_bytes(32, "big") + s.to_bytes(32, "big"))


def transaction(product_id, *, transaction_id=None, original_transaction_id=None, bundle_id="com.example.game",
                environment="Production", app_account_token=None, quantity=1, type="Consumable",
                purchase_ms=None, signed_ms=None, revocation_ms=None, price=990, currency="USD", expires_ms=None):
    """A transaction payload as Apple writes it (numbers, not strings; dates in ms since 1970). With
    `expires_ms`, a period of an auto-renewable subscription: expiresDate, webOrderLineItemId and
    subscriptionGroupIdentifier as Apple adds them."""
    if environment not in ENVIRONMENTS:
        raise ValueError(f"environment must be one of {', '.join(ENVIRONMENTS)}")
    now = int(time.time()) * 1000
    transaction_id = str(transaction_id or 2000000000000000 + uuid.uuid4().int % 10 ** 15)
    payload = {"transactionId": transaction_id,
               "originalTransactionId": str(original_transaction_id or transaction_id),
               "bundleId": bundle_id, "productId": product_id,
               "purchaseDate": purchase_ms or now, "originalPurchaseDate": purchase_ms or now,
               "quantity": quantity, "type": type, "inAppOwnershipType": "PURCHASED",
               "signedDate": signed_ms or now, "environment": environment,
               "transactionReason": "PURCHASE", "storefront": "USA", "storefrontId": "143441",
               "price": price, "currency": currency}
    if app_account_token:
        payload["appAccountToken"] = str(uuid.UUID(app_account_token))
    if expires_ms:
        payload.update(expiresDate=expires_ms, webOrderLineItemId=str(3000000000000000 + uuid.uuid4().int % 10 ** 15),
                       subscriptionGroupIdentifier="21000001")
        if payload["transactionId"] != payload["originalTransactionId"]:
            payload["transactionReason"] = "RENEWAL"
    if revocation_ms:
        payload.update(revocationDate=revocation_ms, revocationReason=0, revocationType="REFUND_FULL",
                       revocationPercentage=100000)
    return payload


def renewal_info(original_transaction_id, product_id, *, auto_renew_product_id=None, auto_renew=True,
                 expiration_intent=None, grace_period_expires_ms=None, billing_retry=False, renewal_ms=None,
                 signed_ms=None, environment="Production"):
    """A subscription's renewal info as Apple writes it (JWSRenewalInfoDecodedPayload): what renews next and
    why it may not. expiration_intent: 1 cancelled, 2 billing error, 3 no consent to a price increase,
    4 product not for sale, 5 other."""
    if environment not in ENVIRONMENTS:
        raise ValueError(f"environment must be one of {', '.join(ENVIRONMENTS)}")
    now = int(time.time()) * 1000
    payload = {"originalTransactionId": str(original_transaction_id), "productId": product_id,
               "autoRenewProductId": auto_renew_product_id or product_id, "autoRenewStatus": 1 if auto_renew else 0,
               "isInBillingRetryPeriod": bool(billing_retry), "signedDate": signed_ms or now,
               "environment": environment, "recentSubscriptionStartDate": now, "currency": "USD",
               "renewalPrice": 4990}
    if renewal_ms:
        payload["renewalDate"] = renewal_ms
    if expiration_intent is not None:
        payload["expirationIntent"] = expiration_intent
    if grace_period_expires_ms:
        payload["gracePeriodExpiresDate"] = grace_period_expires_ms
    return payload


def _decode_part(part):
    return json.loads(base64.urlsafe_b64decode(part + "=" * (-len(part) % 4)))


def main(argv=None):
    parser = argparse.ArgumentParser(description="StoreKit 2 signed transactions with the test PKI.")
    commands = parser.add_subparsers(dest="command", required=True)
    default_certs = pki_files.default_directory()

    pki = commands.add_parser("pki", help="make the test PKI (NAME.pem, NAME-key.pem) in DIR")
    pki.add_argument("directory", metavar="DIR")

    signed = commands.add_parser("transaction", help="print a signed transaction (JWS)")
    signed.add_argument("product", metavar="PRODUCT")
    signed.add_argument("--certs", default=default_certs, metavar="DIR",
                        help=f"the test PKI (default: $IAP_RUN/certs, else the local run's; here {default_certs})")
    signed.add_argument("--chain", choices=sorted(CHAINS), default="good")
    signed.add_argument("--forged", action="store_true", help="signed by a fresh key, not the leaf's")
    signed.add_argument("--transaction-id")
    signed.add_argument("--original-transaction-id")
    signed.add_argument("--bundle-id", default="com.example.game")
    signed.add_argument("--environment", choices=ENVIRONMENTS, default="Production")
    signed.add_argument("--app-account-token", metavar="UUID", help="the order id the app passed to StoreKit")
    signed.add_argument("--quantity", type=int, default=1)
    signed.add_argument("--type", choices=TYPES, default="Consumable")
    signed.add_argument("--signed-date", type=int, metavar="MS", help="ms since 1970 (default: now)")
    signed.add_argument("--revoked", action="store_true", help="a refunded transaction (revocationDate now)")
    signed.add_argument("--expires", type=int, metavar="MS", help="a subscription period ending then (ms since 1970)")
    signed.add_argument("--json", action="store_true", help="print the payload too, as JSON {jws, payload}")

    renewal = commands.add_parser("renewal-info", help="print a subscription's signed renewal info (JWS)")
    renewal.add_argument("original_transaction_id", metavar="ORIGINAL_ID")
    renewal.add_argument("product", metavar="PRODUCT", help="the product of the current period")
    renewal.add_argument("--certs", default=default_certs, metavar="DIR", help="the test PKI (as for transaction)")
    renewal.add_argument("--chain", choices=sorted(CHAINS), default="good")
    renewal.add_argument("--auto-renew-product-id", metavar="PRODUCT", help="the next period's (default: PRODUCT)")
    renewal.add_argument("--auto-renew-off", action="store_true", help="the player turned renewal off")
    renewal.add_argument("--expiration-intent", type=int, choices=range(1, 6))
    renewal.add_argument("--grace-period-expires", type=int, metavar="MS", help="in a billing grace period until then")
    renewal.add_argument("--billing-retry", action="store_true", help="Apple is retrying the renewal's payment")
    renewal.add_argument("--environment", choices=ENVIRONMENTS, default="Production")
    renewal.add_argument("--signed-date", type=int, metavar="MS", help="ms since 1970 (default: now)")
    renewal.add_argument("--json", action="store_true", help="print the payload too, as JSON {jws, payload}")

    decode = commands.add_parser("decode", help="print a JWS's header and payload (nothing is verified)")
    decode.add_argument("jws", metavar="JWS", help="the JWS, or - to read it from standard input")

    args = parser.parse_args(argv)
    if args.command == "pki":
        make_pki(args.directory)
    elif args.command == "transaction":
        payload = transaction(args.product, transaction_id=args.transaction_id,
                              original_transaction_id=args.original_transaction_id, bundle_id=args.bundle_id,
                              environment=args.environment, app_account_token=args.app_account_token,
                              quantity=args.quantity, type=args.type, signed_ms=args.signed_date,
                              revocation_ms=int(time.time()) * 1000 if args.revoked else None,
                              expires_ms=args.expires)
        key = ec.generate_private_key(ec.SECP256R1()) if args.forged else None
        jws = sign(payload, args.certs, chain=args.chain, signing_key=key)
        print(json.dumps({"jws": jws, "payload": payload}) if args.json else jws)
    elif args.command == "renewal-info":
        payload = renewal_info(args.original_transaction_id, args.product,
                               auto_renew_product_id=args.auto_renew_product_id, auto_renew=not args.auto_renew_off,
                               expiration_intent=args.expiration_intent,
                               grace_period_expires_ms=args.grace_period_expires, billing_retry=args.billing_retry,
                               environment=args.environment, signed_ms=args.signed_date)
        jws = sign(payload, args.certs, chain=args.chain)
        print(json.dumps({"jws": jws, "payload": payload}) if args.json else jws)
    else:
        text = sys.stdin.read().strip() if args.jws == "-" else args.jws
        parts = text.split(".")
        if len(parts) != 3:
            print("signed_data.py: not a compact JWS (three parts)", file=sys.stderr)
            return 1
        header = _decode_part(parts[0])
        header["x5c"] = [x509.load_der_x509_certificate(base64.b64decode(c)).subject.rfc4514_string()
                         for c in header.get("x5c", [])]
        print(json.dumps({"header": header, "payload": _decode_part(parts[1])}, indent=2))
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except pki_files.MissingPKI as missing:
        sys.exit(f"signed_data.py: {missing}")
