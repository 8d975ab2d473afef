#!/usr/bin/env python3
"""Make the app receipts AppReceiptTests reads: PKCS#7 SignedData shaped like Apple's, signed by a test
PKI shaped like Apple's (an RSA root; an intermediate carrying 1.2.840.113635.100.6.2.1; a leaf carrying
1.2.840.113635.100.6.11.1), each fixture breaking at most one check.

    python3 make_fixtures.py        # rewrites every *.der and *.pem here (new keys each run)

The structure is written here byte by byte (DER, or BER with indefinite lengths and a constructed OCTET
STRING, as Xcode writes); keys, certificates and RSA signatures come from `cryptography`.
"""
import datetime, hashlib, os
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import padding, rsa
from cryptography.x509.oid import NameOID

HERE = os.path.dirname(os.path.abspath(__file__))
LEAF_MARKER = x509.ObjectIdentifier("1.2.840.113635.100.6.11.1")
INTERMEDIATE_MARKER = x509.ObjectIdentifier("1.2.840.113635.100.6.2.1")
UTC = datetime.timezone.utc

def day(y, m, d):
    return datetime.datetime(y, m, d, tzinfo=UTC)

def ms(when):
    return int(when.timestamp() * 1000)

# ---------- DER and BER ----------
def length(n):
    if n < 0x80:
        return bytes([n])
    b = n.to_bytes((n.bit_length() + 7) // 8, "big")
    return bytes([0x80 | len(b)]) + b

def tlv(tag, body, ber=False):
    """DER, or with ber=True a constructed value of indefinite length ending in end-of-contents."""
    if ber:
        return bytes([tag]) + b"\x80" + body + b"\x00\x00"
    return bytes([tag]) + length(len(body)) + body

def integer(v):
    return tlv(0x02, v.to_bytes((v.bit_length() + 8) // 8, "big", signed=True))

def oid(dotted):
    parts = [int(p) for p in dotted.split(".")]
    body = bytes([parts[0] * 40 + parts[1]])
    for p in parts[2:]:
        chunk = [p & 0x7F]
        p >>= 7
        while p:
            chunk.insert(0, 0x80 | (p & 0x7F))
            p >>= 7
        body += bytes(chunk)
    return tlv(0x06, body)

NULL = b"\x05\x00"
UTF8, IA5 = 0x0C, 0x16

# ---------- payload ----------
def attr(typ, value):
    return tlv(0x30, integer(typ) + integer(1) + tlv(0x04, value))

def attr_set(attrs):
    return tlv(0x31, b"".join(sorted(attrs)))

def text(s, tag=UTF8):
    return tlv(tag, s.encode())

def date(when):
    return tlv(IA5, b"" if when is None else when.strftime("%Y-%m-%dT%H:%M:%SZ").encode())

def purchase(n, product="com.example.game.coins100", cancelled=None, when=None, transaction_id=None):
    when = when or day(2025, 1, 1)
    transaction_id = transaction_id or f"10000001{n:08d}"
    fields = [attr(1701, integer(1)), attr(1702, text(product)), attr(1703, text(transaction_id)),
              attr(1705, text(transaction_id)), attr(1704, date(when)), attr(1706, date(when)),
              attr(1708, date(None)), attr(1711, integer(0)), attr(1712, date(cancelled)),
              attr(1719, integer(0)), attr(9999, text("an unknown field, skipped"))]
    return attr(17, attr_set(fields))

def payload(environment="Production", created=day(2025, 1, 2), purchases=1, extra=()):
    attrs = [attr(0, text(environment)), attr(1, integer(1234567890)), attr(2, text("com.example.game")),
             attr(3, text("42")), attr(4, os.urandom(8)), attr(5, os.urandom(20)), attr(12, date(created)),
             attr(19, text("1.0")), attr(18, date(day(2024, 12, 1))), attr(1000, text("unknown, skipped"))]
    attrs += [purchase(n) for n in range(purchases)]
    attrs += list(extra)
    return attr_set(attrs)

# ---------- PKI ----------
def key():
    return rsa.generate_private_key(public_exponent=65537, key_size=2048)

def name(cn):
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, cn), x509.NameAttribute(NameOID.ORGANIZATION_NAME, "Test Apple")])

def certificate(subject, subject_key, issuer, issuer_key, ca, marker=None, not_before=day(2015, 1, 1),
                not_after=day(2035, 1, 1)):
    builder = (x509.CertificateBuilder().subject_name(subject).issuer_name(issuer)
               .public_key(subject_key.public_key()).serial_number(x509.random_serial_number())
               .not_valid_before(not_before).not_valid_after(not_after)
               .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True)
               .add_extension(x509.KeyUsage(digital_signature=not ca, content_commitment=False, key_encipherment=False,
                                            data_encipherment=False, key_agreement=False, key_cert_sign=ca,
                                            crl_sign=ca, encipher_only=False, decipher_only=False), critical=True)
               .add_extension(x509.SubjectKeyIdentifier.from_public_key(subject_key.public_key()), critical=False))
    if marker:
        builder = builder.add_extension(x509.UnrecognizedExtension(marker, b"\x05\x00"), critical=False)
    return builder.sign(issuer_key, hashes.SHA256())

class PKI:
    def __init__(self, root_name="Test Apple Root CA"):
        self.root_key, self.intermediate_key, self.leaf_key = key(), key(), key()
        self.root = certificate(name(root_name), self.root_key, name(root_name), self.root_key, True)
        self.intermediate = self.make_intermediate()
        self.leaf = self.make_leaf()

    def make_intermediate(self, marker=INTERMEDIATE_MARKER):
        return certificate(name("Test Apple WWDR"), self.intermediate_key, self.root.subject, self.root_key, True,
                           marker, day(2015, 1, 1), day(2035, 1, 1))

    def make_leaf(self, marker=LEAF_MARKER, not_before=day(2024, 1, 1), not_after=day(2030, 1, 1)):
        return certificate(name("Test Receipt Signing"), self.leaf_key, self.intermediate.subject,
                           self.intermediate_key, False, marker, not_before, not_after)

def der(cert):
    return cert.public_bytes(serialization.Encoding.DER)

# ---------- PKCS#7 ----------
DIGESTS = {"sha1": ("1.3.14.3.2.26", hashes.SHA1()), "sha256": ("2.16.840.1.101.3.4.2.1", hashes.SHA256())}

def signed_data(content, leaf, leaf_key, chain, digest="sha256", ber=False, signed_attributes=False, corrupt=False):
    digest_oid, algorithm = DIGESTS[digest]
    digest_algorithm = tlv(0x30, oid(digest_oid) + NULL)
    if ber:  # Xcode's way: the content as a constructed OCTET STRING of chunks
        chunks = b"".join(tlv(0x04, content[i:i + 100]) for i in range(0, len(content), 100))
        encapsulated = tlv(0x30, oid("1.2.840.113549.1.7.1") + tlv(0xA0, tlv(0x24, chunks, ber), ber), ber)
    else:
        encapsulated = tlv(0x30, oid("1.2.840.113549.1.7.1") + tlv(0xA0, tlv(0x04, content)))
    to_sign, attributes = content, b""
    if signed_attributes:
        h = hashes.Hash(algorithm); h.update(content)
        attrs = [tlv(0x30, oid("1.2.840.113549.1.9.3") + tlv(0x31, oid("1.2.840.113549.1.7.1"))),
                 tlv(0x30, oid("1.2.840.113549.1.9.4") + tlv(0x31, tlv(0x04, h.finalize())))]
        body = b"".join(sorted(attrs))
        to_sign, attributes = tlv(0x31, body), tlv(0xA0, body)
    signature = leaf_key.sign(to_sign, padding.PKCS1v15(), algorithm)
    if corrupt:
        signature = signature[:-1] + bytes([signature[-1] ^ 1])
    issuer_and_serial = tlv(0x30, leaf.issuer.public_bytes() + integer(leaf.serial_number))
    signer = tlv(0x30, integer(1) + issuer_and_serial + digest_algorithm + attributes
                 + tlv(0x30, oid("1.2.840.113549.1.1.1") + NULL) + tlv(0x04, signature), ber)
    body = (integer(1) + tlv(0x31, digest_algorithm, ber) + encapsulated
            + tlv(0xA0, b"".join(der(c) for c in chain), ber) + tlv(0x31, signer, ber))
    return tlv(0x30, oid("1.2.840.113549.1.7.2") + tlv(0xA0, tlv(0x30, body, ber), ber), ber)

def write(name, data):
    with open(os.path.join(HERE, name), "wb") as f:
        f.write(data)

def main():
    pki, other = PKI(), PKI("Another Root CA")
    write("root.pem", pki.root.public_bytes(serialization.Encoding.PEM))
    chain = [pki.leaf, pki.intermediate, pki.root]
    normal = payload()
    sign = lambda content, **kw: signed_data(content, pki.leaf, pki.leaf_key, chain, **kw)
    write("production-sha256.der", sign(normal))
    write("production-sha1.der", sign(normal, digest="sha1"))
    write("production-ber.der", sign(normal, ber=True))
    write("signed-attributes.der", sign(normal, signed_attributes=True))
    write("bad-signature.der", sign(normal, corrupt=True))
    write("truncated.der", sign(normal)[:700])
    write("sandbox.der", sign(payload(environment="ProductionSandbox")))
    write("xcode-environment.der", sign(payload(environment="Xcode")))
    write("empty-in-app.der", sign(payload(purchases=0)))
    write("two-hundred-purchases.der", sign(payload(purchases=200)))
    write("refunded.der", sign(payload(purchases=0, extra=[purchase(7, cancelled=day(2025, 1, 5))])))
    # A receipt whose own chain ends at another root: its leaf and intermediate sign as well as Apple's.
    write("wrong-root.der", signed_data(normal, other.leaf, other.leaf_key, [other.leaf, other.intermediate, other.root]))
    leaf = pki.make_leaf(marker=None)
    write("leaf-without-marker.der", signed_data(normal, leaf, pki.leaf_key, [leaf, pki.intermediate, pki.root]))
    intermediate = pki.make_intermediate(marker=None)
    leaf = certificate(pki.leaf.subject, pki.leaf_key, intermediate.subject, pki.intermediate_key, False, LEAF_MARKER,
                       day(2024, 1, 1), day(2030, 1, 1))
    write("intermediate-without-marker.der", signed_data(normal, leaf, pki.leaf_key, [leaf, intermediate, pki.root]))
    # A leaf of 2019-2021: expired now, valid when the first receipt was made (signed with SHA-1, as Apple did then).
    old = pki.make_leaf(not_before=day(2019, 1, 1), not_after=day(2021, 1, 1))
    old_chain = [old, pki.intermediate, pki.root]
    write("leaf-expired-now.der", signed_data(payload(created=day(2020, 6, 1)), old, pki.leaf_key, old_chain, digest="sha1"))
    write("leaf-expired-at-creation.der", signed_data(payload(created=day(2021, 6, 1)), old, pki.leaf_key, old_chain, digest="sha1"))
    # Xcode's StoreKit testing: one self-signed certificate, environment Xcode, BER.
    xcode_key = key()
    xcode = certificate(name("StoreKit Testing in Xcode"), xcode_key, name("StoreKit Testing in Xcode"), xcode_key, True)
    write("xcode-self-signed.der", signed_data(payload(environment="Xcode"), xcode, xcode_key, [xcode], ber=True))

if __name__ == "__main__":
    main()
