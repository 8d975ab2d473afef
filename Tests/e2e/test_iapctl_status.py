"""`iapctl status`: the operator's one screen, read against the stack's database and certificates."""
import datetime
import os
import re
import shutil
import subprocess
import time
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from support import new_transaction_id, new_user_id

REPO = Path(__file__).resolve().parents[2]
IAPCTL = REPO / ".build" / "release" / "iapctl"
CERTS = Path(os.environ.get("IAP_RUN", "/tmp/iap")) / "certs"


def status(*arguments, **env):
    """Runs `iapctl status` with the stack's environment (and the test roots); returns (exit code, rows)."""
    result = subprocess.run([str(IAPCTL), "status", *arguments], cwd=REPO, capture_output=True, text=True,
                            timeout=60, env={**os.environ, "IAP_APPLE_ROOT_CA_FILE": str(CERTS / "signing-root.pem"),
                                             **env})
    rows = {}
    name = None
    for line in result.stdout.splitlines():
        key, value = line[:19].strip(), line[19:]
        name = key or name      # a row without a name continues the one above
        rows.setdefault(name, []).append(value)
    return result.returncode, rows, result.stdout + result.stderr


def one(rows, name):
    assert name in rows, f"no {name!r} row in {sorted(rows)}"
    return rows[name][0]


def service_version():
    source = (REPO / "Sources" / "IAPCore" / "Operations" / "ServiceVersion.swift").read_text()
    return re.search(r'current = "([^"]+)"', source).group(1)


def test_status_shows_what_the_database_holds(db):
    db.set_setting("review_version", "1.4.2")
    db.set_setting("sandbox_users", "tester-a,tester-b,tester-c")
    user = new_user_id()
    event = db.execute(
        "INSERT INTO events (type, transaction_id, original_transaction_id, order_id, user_id, product_id, quantity,"
        " environment, occurred_at, created_at, status, attempts, last_error) VALUES ('delivered', %s, %s,"
        " '00000000-0000-4000-8000-000000000000', %s, 'zydj.product.pay_6', 1, 'Production', UTC_TIMESTAMP(3),"
        " UTC_TIMESTAMP(3), 'failed', 40, 'HTTP 500')", new_transaction_id(), new_transaction_id(), user)
    assert event == 1
    try:
        code, rows, output = status()
        counts = {row["status"]: row["n"] for row in db.query("SELECT status, COUNT(*) AS n FROM events GROUP BY status")}
        waiting = db.scalar("SELECT COUNT(*) FROM receipts WHERE verified_at IS NULL AND retry_final_state IS NULL"
                            " AND kind = 'receipt'")
        gave_up = db.scalar("SELECT COUNT(*) FROM receipts WHERE retry_final_state = 'gave_up'")
    finally:
        db.execute("DELETE FROM events WHERE user_id = %s", user)
    assert code == 0, output
    assert one(rows, "version") == f"iap-fcgi {service_version()}"
    assert one(rows, "database").startswith("reachable: iap on MariaDB 10."), output
    files = len(list((REPO / "sql").glob("*.sql")))
    applied = db.scalar("SELECT COUNT(*) FROM schema_migrations")
    assert applied == files
    assert one(rows, "migrations") == f"{files} applied, {files} in sql/: up to date"
    assert one(rows, "review_version") == "1.4.2"
    assert one(rows, "sandbox users") == "3"
    assert one(rows, "retry-pending").startswith(f"{waiting} receipts waiting")
    assert one(rows, "retry-pending").endswith(f"; {gave_up} given up")
    assert counts.get("failed", 0) >= 1
    assert one(rows, "failed events") == (
        f"{counts.get('failed', 0)} failed, {counts.get('pending', 0)} pending, {counts.get('sent', 0)} sent")
    has_notifications = db.scalar("SELECT COUNT(*) FROM information_schema.tables WHERE table_schema = DATABASE()"
                                  " AND table_name = 'notifications'")
    if has_notifications:
        last = db.one("SELECT notification_type, received_at FROM notifications ORDER BY received_at DESC LIMIT 1")
        assert one(rows, "last notification") == "none received" if last is None else (
            one(rows, "last notification").startswith(str(last["received_at"])[:19]))
    else:
        assert one(rows, "last notification") == "no notifications table"
    certificate = x509.load_pem_x509_certificate((CERTS / "signing-root.pem").read_bytes())
    days = int((certificate.not_valid_after_utc.timestamp() - time.time()) // 86400)
    expiry = certificate.not_valid_after_utc.strftime("%Y-%m-%dT%H:%M:%SZ")
    root = one(rows, "root certificates")
    assert "CN=iap-fcgi Test Root CA - G3" in root and f"expires {expiry} ({days} days;" in root, root


def test_status_names_pending_and_unknown_migrations(tmp_path):
    files = sorted((REPO / "sql").glob("*.sql"))
    ahead = tmp_path / "ahead"
    ahead.mkdir()
    for file in files:
        shutil.copy(file, ahead)
    (ahead / "999_future.sql").write_text("SELECT 1;\n")
    code, rows, output = status("--sql-dir", str(ahead))
    assert code == 0, output
    assert one(rows, "migrations") == (
        f"{len(files)} applied, {len(files) + 1} in sql/; pending: 999_future.sql (run iapctl migrate)")

    behind = tmp_path / "behind"
    behind.mkdir()
    for file in files[:-1]:
        shutil.copy(file, behind)
    code, rows, output = status("--sql-dir", str(behind))
    assert one(rows, "migrations") == (
        f"{len(files)} applied, {len(files) - 1} in sql/; applied but not in sql/: {files[-1].name}")


def test_status_without_the_database_says_so_and_fails():
    code, rows, output = status(IAP_DB_PORT="1", IAP_DB_HOST="127.0.0.1")
    assert code == 1, output
    assert one(rows, "version") == f"iap-fcgi {service_version()}"
    assert one(rows, "database").startswith("UNREACHABLE: cannot connect to MariaDB"), output
    assert "iap-local" not in output, "the database password is never printed"
    assert "migrations" not in rows
    assert "CN=iap-fcgi Test Root CA - G3" in one(rows, "root certificates"), "certificates need no database"


def root_expiring_in(days, path):
    """A self-signed P-256 root valid until `days` from now, written to `path` as PEM."""
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, f"Root expiring in {days} days")])
    now = datetime.datetime.now(datetime.timezone.utc)
    certificate = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
                   .serial_number(x509.random_serial_number()).not_valid_before(now - datetime.timedelta(days=1))
                   .not_valid_after(now + datetime.timedelta(days=days))
                   .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
                   .sign(key, hashes.SHA256()))
    path.write_bytes(certificate.public_bytes(serialization.Encoding.PEM))
    return path


def test_status_flags_roots_that_expire_within_30_days(tmp_path):
    for days, flag in [(10, "EXPIRES SOON "), (45, "")]:
        code, rows, output = status(IAP_APPLE_ROOT_CA_FILE=str(root_expiring_in(days, tmp_path / f"{days}.pem")))
        assert code == 0, output
        root = one(rows, "root certificates")
        assert root.startswith(f"{flag}CN=Root expiring in {days} days: expires "), root
        assert f"({days - 1} days;" in root or f"({days} days;" in root, root
    # The test PKI's leaf that expired in 2021, given as a root.
    code, rows, output = status(IAP_APPLE_ROOT_CA_FILE=str(CERTS / "signing-expired-leaf.pem"))
    assert code == 0, output
    assert one(rows, "root certificates").startswith("EXPIRED "), output
