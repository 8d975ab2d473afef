"""Writes a test PKI's certificates and keys to a folder, as the stack and the simulator read them:
NAME.pem (the certificate) and NAME-key.pem (its PKCS#8 key, mode 0600). Shared by signed_data.py (the
StoreKit 2 signing PKI) and receipt_pki.py (the app receipt PKI)."""
import os

from cryptography.hazmat.primitives import serialization


def write(directory, made):
    """`made`: name -> (certificate, private key). Returns the names, sorted."""
    os.makedirs(directory, exist_ok=True)
    for name, (certificate, key) in made.items():
        with open(os.path.join(directory, name + ".pem"), "wb") as out:
            out.write(certificate.public_bytes(serialization.Encoding.PEM))
        key_path = os.path.join(directory, name + "-key.pem")
        with open(os.open(key_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), "wb") as out:
            out.write(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                        serialization.NoEncryption()))
    return sorted(made)
