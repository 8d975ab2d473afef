"""iap-fcgi carries the Swift runtime and Foundation in its own binary (Package.swift,
`iapFCGILinkerSettings`): an idle process maps none of their shared libraries, whose code
pages were 13 MiB of its idle RSS. What the runtime and Foundation do for it (a StoreKit 2
JWS goes through swift-crypto and swift-certificates, which use Foundation) still works."""
import importlib
import os
import re
from pathlib import Path

from support import PAY_6, assert_verify_answer, new_user_id

CERTS = Path(os.environ.get("IAP_RUN", "/tmp/iap")) / "certs"
# The toolchain's shared libraries that a dynamically linked Swift program loads.
SHARED_SWIFT_LIBRARY = re.compile(r"/lib(swift\w*|_swift\w*|_?Foundation\w*|dispatch|BlocksRuntime)\.so")


def mapped_files(pid):
    """The files the process maps, from /proc/PID/maps."""
    files = set()
    for line in Path(f"/proc/{pid}/maps").read_text().splitlines():
        fields = line.split(maxsplit=5)
        if len(fields) == 6 and fields[5].startswith("/"):
            files.add(fields[5])
    return files


def test_the_service_maps_no_shared_swift_runtime_or_foundation_and_still_verifies_a_jws(api, db, iap_fcgi_pid):
    signer = importlib.import_module("signed_data")
    payload = signer.transaction(PAY_6)
    response = api.post_json("/v1/transactions/verify",
                             {"signed_transaction": signer.sign(payload, str(CERTS)), "user_id": new_user_id()})
    assert_verify_answer(response, "delivered")
    assert db.transaction(payload["transactionId"]) is not None

    files = mapped_files(iap_fcgi_pid())
    assert any(file.endswith("/iap-fcgi") for file in files), f"not the service's process: {sorted(files)}"
    shared = sorted(file for file in files if SHARED_SWIFT_LIBRARY.search(file))
    assert shared == [], f"iap-fcgi loaded the toolchain's shared libraries: {shared}"
