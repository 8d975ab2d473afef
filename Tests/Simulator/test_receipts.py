"""receipts.py makes real PKCS#7 app receipts and reads them as Apple does: OpenSSL agrees that they are
SignedData and checks their signature, each bad variant fails the one check it is made for, and the reader
takes Apple's own receipts (Tests/AppReceiptTests/Fixtures/real) at their creation date."""
import base64
import contextlib
import hashlib
import subprocess
import sys
from datetime import datetime, timezone
from pathlib import Path

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import serialization

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import receipt_asn1  # noqa: E402
import receipt_pki  # noqa: E402
import receipts  # noqa: E402

REPO = HERE.parent.parent
MAKE_CERTS = REPO / "scripts" / "make-test-certs"
REAL = REPO / "Tests" / "AppReceiptTests" / "Fixtures" / "real"
APPLE_ROOT_SHA256 = "b0b1730ecbc7ff4505142c49f1295e6eda6bcaed7e2c68c5be91b5a11001f024"
IN_2020 = int(datetime(2020, 6, 1, tzinfo=timezone.utc).timestamp()) * 1000


@pytest.fixture(scope="module")
def certs(tmp_path_factory):
    directory = tmp_path_factory.mktemp("certs")
    subprocess.run([str(MAKE_CERTS), str(directory)], check=True)
    receipts.use_pki(directory)
    yield directory
    receipts.use_pki(None)


def der_file(tmp_path, b64, name="receipt.der"):
    path = tmp_path / name
    path.write_bytes(base64.b64decode(b64))
    return path


def openssl(*arguments):
    return subprocess.run(["openssl", *map(str, arguments)], capture_output=True, text=True)


def cms_verify(certs, path, *extra):
    return openssl("cms", "-verify", "-inform", "DER", "-in", path, "-CAfile", certs / "receipt-root.pem",
                   "-purpose", "any", "-binary", "-out", path.with_suffix(".content"), *extra)


@pytest.mark.parametrize("digest", receipts.DIGESTS)
@pytest.mark.parametrize("encoding", receipts.ENCODINGS)
def test_openssl_verifies_the_pkcs7_and_reads_the_same_content(certs, tmp_path, digest, encoding):
    bought = [receipts.purchase("p1"), receipts.purchase("p2", quantity=3, cancellation_ms=receipts._now_ms())]
    b64 = receipts.app_receipt(bought, environment="Sandbox", application_version="7", digest=digest,
                               encoding=encoding)
    path = der_file(tmp_path, b64)
    verified = cms_verify(certs, path)
    assert verified.returncode == 0, verified.stderr
    assert "Verification successful" in verified.stderr
    signed = receipts._read_signed_data(path.read_bytes())
    assert path.with_suffix(".content").read_bytes() == signed["content"], "OpenSSL's content is the payload"
    smime = openssl("smime", "-verify", "-noverify", "-inform", "DER", "-in", path, "-out", "/dev/null")
    assert smime.returncode == 0, smime.stderr

    parsed = openssl("asn1parse", "-inform", "DER", "-in", path).stdout
    assert ("l=inf" in parsed) == (encoding == "ber")
    assert f":{digest}" in parsed and ":rsaEncryption" in parsed and ":pkcs7-data" in parsed
    subjects = openssl("pkcs7", "-inform", "DER", "-in", path, "-print_certs", "-noout").stdout
    assert subjects.count("subject=") == 3, "leaf, intermediate and root, as Apple's receipts carry"

    payload = receipts.decode(b64)
    assert payload["in_app"] == bought
    assert (payload["environment"], payload["application_version"]) == ("Sandbox", "7")


def test_payload_fields_are_apples_types(certs):
    bought = receipts.purchase("com.example.game.gold", purchase_ms=1406193061000)
    content = receipts._read_signed_data(base64.b64decode(
        receipts.app_receipt([bought], creation_ms=1406193065000)))["content"]
    fields = {kind: value for kind, value in receipts._attributes(receipt_asn1.read(content))}
    assert receipt_asn1.read(fields[0].body).body == b"Production"
    assert receipt_asn1.read(fields[2].body).body == b"com.example.game"
    assert receipt_asn1.read(fields[12].body).body == b"2014-07-24T09:11:05Z"
    in_app = {kind: receipt_asn1.read(value.body) for kind, value in
              receipts._attributes(receipt_asn1.read(fields[17].body))}
    assert in_app[1702].tag == receipt_asn1.UTF8_STRING and in_app[1702].body == b"com.example.game.gold"
    assert in_app[1703].body == bought["transaction_id"].encode()
    assert in_app[1704].tag == receipt_asn1.IA5_STRING and in_app[1704].body == b"2014-07-24T09:11:01Z"
    assert in_app[1701].integer() == 1
    assert in_app[1712].tag == receipt_asn1.IA5_STRING and in_app[1712].body == b"", "no refund: an empty date"


@pytest.mark.parametrize("chain, check", [("untrusted", "chain"), ("leaf-without-oid", "leaf_oid"),
                                          ("intermediate-without-oid", "intermediate_oid"),
                                          ("expired-leaf", "validity"), ("xcode", "chain")])
def test_each_bad_chain_fails_its_own_check(certs, chain, check):
    with pytest.raises(receipts.BadSignature) as failure:
        receipts.decode(receipts.app_receipt([receipts.purchase("p")], chain=chain))
    assert failure.value.check == check


def test_the_marker_oids_sit_where_apple_puts_them(certs):
    def markers(name):
        certificate = x509.load_pem_x509_certificate((certs / f"{name}.pem").read_bytes())
        return {e.oid for e in certificate.extensions} & {receipt_pki.LEAF_MARKER_OID,
                                                          receipt_pki.INTERMEDIATE_MARKER_OID}
    assert markers("receipt-leaf") == {receipt_pki.LEAF_MARKER_OID}
    assert markers("receipt-intermediate") == {receipt_pki.INTERMEDIATE_MARKER_OID}
    assert markers("receipt-plain-leaf") == set() and markers("receipt-plain-intermediate") == set()
    assert markers("receipt-leaf-under-plain-intermediate") == {receipt_pki.LEAF_MARKER_OID}
    xcode = x509.load_pem_x509_certificate((certs / "receipt-xcode.pem").read_bytes())
    assert xcode.issuer == xcode.subject and markers("receipt-xcode") == set()


def test_an_expired_leaf_is_good_for_a_receipt_made_while_it_was_valid(certs, tmp_path):
    bought = receipts.purchase("p", purchase_ms=IN_2020 - 60_000)
    b64 = receipts.app_receipt([bought], chain="expired-leaf", creation_ms=IN_2020)
    assert receipts.decode(b64)["in_app"] == [bought]
    path = der_file(tmp_path, b64)
    assert cms_verify(certs, path, "-attime", IN_2020 // 1000).returncode == 0
    assert cms_verify(certs, path).returncode != 0, "OpenSSL checks against now: the leaf has expired"


def test_wrong_root_and_forged_signature_fail_openssl_too(certs, tmp_path):
    for name, b64 in (("untrusted", receipts.app_receipt([], chain="untrusted")),
                      ("forged", receipts.app_receipt([], forged=True)),
                      ("tampered", receipts.tampered(receipts.app_receipt([receipts.purchase("p")])))):
        result = cms_verify(certs, der_file(tmp_path, b64, name + ".der"))
        assert result.returncode != 0, f"{name}: {result.stderr}"
    with pytest.raises(receipts.BadSignature) as failure:
        receipts.decode(receipts.app_receipt([], forged=True))
    assert failure.value.check == "signature"


def test_truncated_and_spaced_receipts_are_malformed(certs):
    b64 = receipts.app_receipt([receipts.purchase("p")], encoding="ber")
    for keep in (0.1, 0.5, 0.99):
        with pytest.raises(receipts.MalformedReceipt):
            receipts.decode(receipts.truncated(b64, keep))
    with pytest.raises(receipts.MalformedReceipt):
        receipts.decode(receipts.plus_as_space(b64))


def test_two_hundred_purchases_and_none(certs):
    bought = [receipts.purchase(f"p{i % 7}") for i in range(200)]
    assert receipts.decode(receipts.app_receipt(bought))["in_app"] == bought
    assert receipts.decode(receipts.app_receipt([]))["in_app"] == []


def test_ios6_receipts_are_apples_signed_plist(certs):
    bought = receipts.purchase("p", quantity=2)
    b64 = receipts.ios6_receipt(bought, environment="Sandbox", bvrs="1.2")
    assert base64.b64decode(b64).startswith(b"{") and b'"purchase-info" = "' in base64.b64decode(b64)
    payload = receipts.decode(b64)
    assert (payload["kind"], payload["environment"], payload["bvrs"], payload["purchase"]) == (
        "ios6", "Sandbox", "1.2", bought)
    with pytest.raises(receipts.BadSignature):
        receipts.decode(receipts.tampered(b64))


def test_command_line_makes_each_variant(certs):
    def run(*arguments):
        return subprocess.run([sys.executable, str(HERE / "receipts.py"), "--certs", str(certs), *arguments],
                              capture_output=True, text=True)
    made = run("app", "p1", "--digest", "sha1", "--encoding", "ber", "--chain", "expired-leaf",
               "--created", "2020-06-01")
    assert made.returncode == 0, made.stderr
    assert run("decode", made.stdout.strip()).returncode == 0
    refused = run("app", "p1", "--chain", "leaf-without-oid")
    assert run("decode", refused.stdout.strip()).returncode == 1


# ---------- Apple's own receipts ----------

def real(name):
    return (REAL / f"{name}.b64").read_text().strip()


@contextlib.contextmanager
def pki(directory):
    before = receipts.pki_directory()
    receipts.use_pki(directory)
    try:
        yield
    finally:
        receipts.use_pki(before)


@pytest.fixture(scope="module")
def apple_root(tmp_path_factory):
    """Apple Inc. Root CA, taken from a real receipt (Apple puts it in every one) and pinned by its SHA-256,
    as receipt-root.pem of a folder of its own: the reader then checks real receipts as Apple's."""
    der = receipts._read_signed_data(base64.b64decode(real("tpinappreceipt-production")))["certificates"][-1]
    assert hashlib.sha256(der).hexdigest() == APPLE_ROOT_SHA256
    directory = tmp_path_factory.mktemp("apple-root")
    pem = x509.load_der_x509_certificate(der).public_bytes(serialization.Encoding.PEM)
    (directory / "receipt-root.pem").write_bytes(pem)
    return directory


@pytest.mark.parametrize("name, environment, bundle_id, count, digest", [
    ("tpinappreceipt-production", "Production", "org.getpure.pure-iphone", 4, "sha256"),
    ("tpinappreceipt-sandbox-g5", "Sandbox", "dev.bonzer.weeka.app", 2, "sha256"),
    ("kvitto-sandbox", "Sandbox", "com.cocoanetics.EmmiView", 6, "sha1")])
def test_real_receipts_check_at_their_creation_date(apple_root, name, environment, bundle_id, count, digest):
    with pki(apple_root):
        payload = receipts.decode(real(name))
    assert (payload["environment"], payload["bundle_id"], len(payload["in_app"])) == (
        environment, bundle_id, count)
    assert receipts._read_signed_data(base64.b64decode(real(name)))["digest"] == digest
    assert all(p["transaction_id"] and p["purchase_ms"] <= payload["receipt_creation_ms"] for p in payload["in_app"])


def test_a_real_xcode_receipt_is_ber_and_fails_the_chain(apple_root):
    raw = base64.b64decode(real("tpinappreceipt-xcode-with-purchases"))
    assert raw[1] == 0x80, "Xcode writes BER with indefinite lengths"
    with pki(apple_root), pytest.raises(receipts.BadSignature) as failure:
        receipts.decode(real("tpinappreceipt-xcode-with-purchases"))
    assert failure.value.check == "chain"
