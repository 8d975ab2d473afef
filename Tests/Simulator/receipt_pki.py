#!/usr/bin/env python3
"""The app-receipt signing PKI of the tests, shaped like Apple's, and the bad variants the service must refuse.

Apple signs app receipts (PKCS#7) with RSA: Apple Inc. Root CA, the Apple Worldwide Developer Relations CA
(carrying the marker OID 1.2.840.113635.100.6.2.1) and "Mac App Store and iTunes Store Receipt Signing"
(carrying 1.2.840.113635.100.6.11.1). The test PKI copies that shape with RSA-2048 keys. Nothing here is
trusted anywhere but in tests: the service trusts it only when IAP_APPLE_RECEIPT_ROOT_FILE names
receipt-root.pem.

Command line (scripts/make-test-certs runs it):
    receipt_pki.py DIR      write NAME.pem and NAME-key.pem for every certificate of CHAINS into DIR
"""
import datetime
import functools
import os
import sys

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from cryptography.x509.oid import NameOID

import pki_files

__all__ = ["make_pki", "load_chain", "load_root", "CHAINS", "INTERMEDIATE_MARKER_OID", "LEAF_MARKER_OID",
           "EXPIRED_LEAF_NOT_BEFORE", "EXPIRED_LEAF_NOT_AFTER"]

INTERMEDIATE_MARKER_OID = x509.ObjectIdentifier("1.2.840.113635.100.6.2.1")
LEAF_MARKER_OID = x509.ObjectIdentifier("1.2.840.113635.100.6.11.1")
ROOT = "receipt-root"

# The certificates a receipt of each chain carries, leaf first, by name in the PKI folder.
CHAINS = {
    # Apple's shape: leaf, intermediate and root, as Apple's receipts carry them.
    "good": ("receipt-leaf", "receipt-intermediate", "receipt-root"),
    # The same shape under a root the service does not trust.
    "untrusted": ("receipt-untrusted-leaf", "receipt-untrusted-intermediate", "receipt-untrusted-root"),
    # A leaf without its marker OID under the good intermediate.
    "leaf-without-oid": ("receipt-plain-leaf", "receipt-intermediate", "receipt-root"),
    # A leaf with its OID under an intermediate without the intermediate's OID.
    "intermediate-without-oid": ("receipt-leaf-under-plain-intermediate", "receipt-plain-intermediate",
                                 "receipt-root"),
    # A leaf valid from 2020-01-01 to 2021-01-01 only: good for a receipt made in 2020, not for one made later.
    "expired-leaf": ("receipt-expired-leaf", "receipt-intermediate", "receipt-root"),
    # Xcode's StoreKit testing: one self-signed certificate, no chain to any Apple root.
    "xcode": ("receipt-xcode",),
}
EXPIRED_LEAF_NOT_BEFORE = datetime.datetime(2020, 1, 1, tzinfo=datetime.timezone.utc)
EXPIRED_LEAF_NOT_AFTER = datetime.datetime(2021, 1, 1, tzinfo=datetime.timezone.utc)
# The CAs exist since before the expired leaf, as Apple's root (2006) predates every receipt.
_CA_NOT_BEFORE = datetime.datetime(2015, 1, 1, tzinfo=datetime.timezone.utc)
_VALIDITY = datetime.timedelta(days=3650)
# The subject of the certificate Xcode signs StoreKit testing receipts with (seen in a real one).
_XCODE_NAME = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "StoreKit"),
                         x509.NameAttribute(NameOID.ORGANIZATION_NAME, "StoreKit"),
                         x509.NameAttribute(NameOID.ORGANIZATIONAL_UNIT_NAME, "StoreKit"),
                         x509.NameAttribute(NameOID.COUNTRY_NAME, "US"),
                         x509.NameAttribute(NameOID.EMAIL_ADDRESS, "StoreKit")])


def _name(common_name, organization="iap-fcgi tests"):
    return x509.Name([x509.NameAttribute(NameOID.ORGANIZATION_NAME, organization),
                      x509.NameAttribute(NameOID.COMMON_NAME, common_name)])


def _new_key():
    return rsa.generate_private_key(public_exponent=65537, key_size=2048)


def _certificate(subject_name, key, issuer_name, issuer_key, *, ca, marker_oid=None, not_before=None,
                 not_after=None):
    """A certificate for `key` signed by `issuer_key` with SHA-256 RSA (self-signed when they are the same)."""
    now = datetime.datetime.now(datetime.timezone.utc)
    not_before = not_before or now - datetime.timedelta(days=1)
    builder = (x509.CertificateBuilder()
               .subject_name(subject_name).issuer_name(issuer_name)
               .public_key(key.public_key()).serial_number(x509.random_serial_number())
               .not_valid_before(not_before).not_valid_after(not_after or now + _VALIDITY)
               .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True)
               .add_extension(x509.KeyUsage(digital_signature=not ca, content_commitment=False,
                                            key_encipherment=False, data_encipherment=False, key_agreement=False,
                                            key_cert_sign=ca, crl_sign=ca, encipher_only=False,
                                            decipher_only=False), critical=True)
               .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()), critical=False))
    if issuer_key is not key:
        builder = builder.add_extension(
            x509.AuthorityKeyIdentifier.from_issuer_public_key(issuer_key.public_key()), critical=False)
    if marker_oid is not None:
        # Apple's marker extensions hold an ASN.1 NULL and are not critical.
        builder = builder.add_extension(x509.UnrecognizedExtension(marker_oid, b"\x05\x00"), critical=False)
    return builder.sign(issuer_key, hashes.SHA256())


def make_pki(directory):
    """Writes NAME.pem and NAME-key.pem for every certificate CHAINS names (keys 0600); returns the names."""
    made = {}

    def issue(name, subject, issuer, *, ca, marker_oid=None, not_before=None, not_after=None):
        key = _new_key()
        issuer_certificate, issuer_key = made[issuer] if issuer else (None, key)
        subject_name = subject if isinstance(subject, x509.Name) else _name(subject)
        certificate = _certificate(subject_name, key, issuer_certificate.subject if issuer else subject_name,
                                   issuer_key, ca=ca, marker_oid=marker_oid, not_before=not_before,
                                   not_after=not_after)
        made[name] = (certificate, key)

    for prefix, label in (("receipt", "Receipt Root CA"), ("receipt-untrusted", "Untrusted Receipt Root CA")):
        issue(f"{prefix}-root", f"iap-fcgi {label}", None, ca=True, not_before=_CA_NOT_BEFORE)
        issue(f"{prefix}-intermediate", f"iap-fcgi {label} WWDR", f"{prefix}-root", ca=True,
              marker_oid=INTERMEDIATE_MARKER_OID, not_before=_CA_NOT_BEFORE)
        issue(f"{prefix}-leaf", f"iap-fcgi {label} Receipt Signing", f"{prefix}-intermediate", ca=False,
              marker_oid=LEAF_MARKER_OID)
    issue("receipt-plain-leaf", "iap-fcgi Receipt Signing without OID", "receipt-intermediate", ca=False)
    issue("receipt-plain-intermediate", "iap-fcgi WWDR without OID", ROOT, ca=True, not_before=_CA_NOT_BEFORE)
    issue("receipt-leaf-under-plain-intermediate", "iap-fcgi Receipt Signing under a WWDR without OID",
          "receipt-plain-intermediate", ca=False, marker_oid=LEAF_MARKER_OID)
    issue("receipt-expired-leaf", "iap-fcgi Receipt Signing 2020", "receipt-intermediate", ca=False,
          marker_oid=LEAF_MARKER_OID, not_before=EXPIRED_LEAF_NOT_BEFORE, not_after=EXPIRED_LEAF_NOT_AFTER)
    issue("receipt-xcode", _XCODE_NAME, None, ca=False, not_before=_CA_NOT_BEFORE)

    return pki_files.write(directory, made)


def _missing(directory):
    raise pki_files.MissingPKI(directory, "receipt signing PKI")


@functools.lru_cache(maxsize=None)
def _certificate_file(directory, name):
    try:
        with open(os.path.join(directory, name + ".pem"), "rb") as source:
            certificate = x509.load_pem_x509_certificate(source.read())
    except FileNotFoundError:
        _missing(directory)
    return certificate, certificate.public_bytes(serialization.Encoding.DER)


@functools.lru_cache(maxsize=None)
def _key_file(directory, name):
    try:
        with open(os.path.join(directory, name + "-key.pem"), "rb") as source:
            return serialization.load_pem_private_key(source.read(), password=None)
    except FileNotFoundError:
        _missing(directory)


def load_chain(directory, chain):
    """(certificates, their DER, the leaf's private key) of a chain of CHAINS, read once per process."""
    names = CHAINS[chain]
    loaded = [_certificate_file(directory, name) for name in names]
    return [c for c, _ in loaded], [d for _, d in loaded], _key_file(directory, names[0])


def load_root(directory):
    """The root the receipts of the "good" chain lead to (what the service and the simulator trust)."""
    return _certificate_file(directory, ROOT)[0]


if __name__ == "__main__":
    if len(sys.argv) != 2:
        print("usage: receipt_pki.py DIR", file=sys.stderr)
        sys.exit(2)
    make_pki(sys.argv[1])
