"""Writes a test PKI's certificates and keys to a folder, as the stack and the simulator read them:
NAME.pem (the certificate) and NAME-key.pem (its PKCS#8 key, mode 0600). Shared by signed_data.py (the
StoreKit 2 signing PKI) and receipt_pki.py (the app receipt PKI); and where the helpers look for them."""
import os

# The run directory of the local run (scripts/start; scripts/stack's default IAP_RUN).
LOCAL_RUN = "/tmp/iap-local"


class MissingPKI(FileNotFoundError):
    """A test PKI's file is not in the folder; the message says how to make it or where to look instead."""

    def __init__(self, directory, what):
        super().__init__(f"no {what} in {directory}: start the local run (scripts/start), pass --certs with the "
                         f"stack's certs folder, or export its IAP_RUN")


def default_directory():
    """The certs folder of the stack in IAP_RUN, else the local run's, so that the helpers work in a new shell
    beside scripts/start and beside any other stack once its `scripts/stack env` is exported."""
    return os.path.join(os.environ.get("IAP_RUN") or LOCAL_RUN, "certs")

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
