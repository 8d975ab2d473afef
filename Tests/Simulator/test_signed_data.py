"""Self-tests of the StoreKit 2 test PKI and signer (signed_data.py), checked with openssl and cryptography."""
import base64
import json
import subprocess
import sys
from pathlib import Path

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.asymmetric.utils import encode_dss_signature
from cryptography.exceptions import InvalidSignature

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import signed_data  # noqa: E402

REPO = HERE.parent.parent
MAKE_CERTS = REPO / "scripts" / "make-test-certs"
TOKEN = "6f9619ff-8b86-4d01-b42d-00c04fc964ff"


@pytest.fixture(scope="module")
def certs(tmp_path_factory):
    directory = tmp_path_factory.mktemp("certs")
    subprocess.run([str(MAKE_CERTS), str(directory)], check=True)
    return directory


def _part(text):
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def _openssl_verify(certs, leaf, intermediate, root="signing-root"):
    return subprocess.run(["openssl", "verify", "-CAfile", str(certs / f"{root}.pem"), "-untrusted",
                           str(certs / f"{intermediate}.pem"), str(certs / f"{leaf}.pem")],
                          capture_output=True, text=True)


def _extension_oids(certs, name):
    certificate = x509.load_pem_x509_certificate((certs / f"{name}.pem").read_bytes())
    return {extension.oid.dotted_string for extension in certificate.extensions}


def test_the_pki_has_apples_shape(certs):
    root = x509.load_pem_x509_certificate((certs / "signing-root.pem").read_bytes())
    leaf = x509.load_pem_x509_certificate((certs / "signing-leaf.pem").read_bytes())
    assert isinstance(root.public_key().curve, ec.SECP384R1)
    assert isinstance(leaf.public_key().curve, ec.SECP256R1)
    assert "1.2.840.113635.100.6.2.1" in _extension_oids(certs, "signing-intermediate")
    assert "1.2.840.113635.100.6.11.1" in _extension_oids(certs, "signing-leaf")
    assert _openssl_verify(certs, "signing-leaf", "signing-intermediate").returncode == 0


def test_the_bad_variants_are_bad_in_one_way_each(certs):
    assert "1.2.840.113635.100.6.2.1" not in _extension_oids(certs, "signing-plain-intermediate")
    assert _openssl_verify(certs, "signing-leaf-under-plain-intermediate", "signing-plain-intermediate").returncode == 0
    assert "1.2.840.113635.100.6.11.1" not in _extension_oids(certs, "signing-plain-leaf")
    assert _openssl_verify(certs, "signing-plain-leaf", "signing-intermediate").returncode == 0
    expired = _openssl_verify(certs, "signing-expired-leaf", "signing-intermediate")
    assert expired.returncode != 0 and "expired" in expired.stdout + expired.stderr
    assert _openssl_verify(certs, "signing-untrusted-leaf", "signing-untrusted-intermediate",
                           root="signing-untrusted-root").returncode == 0
    assert _openssl_verify(certs, "signing-untrusted-leaf", "signing-untrusted-intermediate").returncode != 0


def test_the_cli_prints_a_jws_the_leaf_signed(certs):
    out = subprocess.run([sys.executable, str(HERE / "signed_data.py"), "transaction", "gems.100", "--certs", str(certs),
                          "--app-account-token", TOKEN, "--environment", "Sandbox"],
                         capture_output=True, text=True, check=True).stdout.strip()
    header, payload, signature = out.split(".")
    header, payload, signature = json.loads(_part(header)), json.loads(_part(payload)), _part(signature)
    assert header["alg"] == "ES256" and len(header["x5c"]) == 3
    assert (payload["productId"], payload["appAccountToken"], payload["environment"]) == ("gems.100", TOKEN, "Sandbox")
    assert isinstance(payload["signedDate"], int) and isinstance(payload["purchaseDate"], int)
    assert len(signature) == 64
    leaf = x509.load_der_x509_certificate(base64.b64decode(header["x5c"][0]))
    der = encode_dss_signature(int.from_bytes(signature[:32], "big"), int.from_bytes(signature[32:], "big"))
    leaf.public_key().verify(der, out.rsplit(".", 1)[0].encode(), ec.ECDSA(hashes.SHA256()))
    with pytest.raises(InvalidSignature):
        leaf.public_key().verify(der, out.rsplit(".", 1)[0].encode() + b"x", ec.ECDSA(hashes.SHA256()))


def test_forged_and_revoked_transactions(certs):
    forged = signed_data.sign(signed_data.transaction("gems.100"), str(certs),
                              signing_key=ec.generate_private_key(ec.SECP256R1()))
    header, _, signature = forged.split(".")
    leaf = x509.load_der_x509_certificate(base64.b64decode(json.loads(_part(header))["x5c"][0]))
    raw = _part(signature)
    with pytest.raises(InvalidSignature):
        leaf.public_key().verify(encode_dss_signature(int.from_bytes(raw[:32], "big"), int.from_bytes(raw[32:], "big")),
                                 forged.rsplit(".", 1)[0].encode(), ec.ECDSA(hashes.SHA256()))
    revoked = signed_data.transaction("gems.100", revocation_ms=1_700_000_000_000)
    assert revoked["revocationDate"] == 1_700_000_000_000 and revoked["revocationType"] == "REFUND_FULL"
    with pytest.raises(ValueError):
        signed_data.transaction("gems.100", environment="Staging")
