"""TLS to MariaDB (IAP_DB_TLS=verify, IAP_DB_CA_FILE): iapctl and iap-fcgi reach a
server that only takes TLS sessions when they trust its CA, and refuse it when
they do not. The server is a second, small mariadbd of this test's own, on its
own port and data directory, with a certificate from a test CA made here."""
import os
import shutil
import subprocess
import time
from pathlib import Path

import pytest

from ports import ReservedPort
from support import wait_until

IAPCTL = Path(__file__).resolve().parents[2] / ".build" / "release" / "iapctl"
IAP_FCGI = IAPCTL.parent / "iap-fcgi"
SQL_DIR = Path(__file__).resolve().parents[2] / "sql"
PASSWORD = "tls-test-password"


def openssl(*arguments, cwd):
    subprocess.run(["openssl", *arguments], cwd=cwd, check=True, capture_output=True, timeout=60)


def make_ca(directory, name):
    openssl("req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-days", "30",
            "-subj", f"/CN={name}", "-keyout", f"{name}-key.pem", "-out", f"{name}.pem", cwd=directory)


def make_server_certificate(directory, ca, address="127.0.0.1"):
    """server.pem for `address` (subjectAltName and common name), issued by `ca`."""
    openssl("req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-subj", f"/CN={address}",
            "-keyout", "server-key.pem", "-out", "server.csr", cwd=directory)
    (directory / "server.ext").write_text(f"subjectAltName=IP:{address}\nextendedKeyUsage=serverAuth\n")
    openssl("x509", "-req", "-in", "server.csr", "-CA", f"{ca}.pem", "-CAkey", f"{ca}-key.pem", "-CAcreateserial",
            "-days", "30", "-extfile", "server.ext", "-out", "server.pem", cwd=directory)


class TLSMariaDB:
    """A mariadbd that takes TLS sessions only (the user `iap` REQUIRE SSL)."""

    def __init__(self, directory):
        self.directory = directory
        self.reserved_port = ReservedPort("127.0.0.1")   # kept bound until the server stops: no one takes it
        self.port = self.reserved_port.number
        self.socket = directory / "mysqld.sock"
        self.process = None

    def start(self):
        data = self.directory / "data"
        subprocess.run(["mariadb-install-db", "--no-defaults", "--user=root", f"--datadir={data}", "--skip-test-db",
                        "--auth-root-authentication-method=socket"], check=True, capture_output=True, timeout=120)
        log = open(self.directory / "mariadb.log", "w")
        self.process = subprocess.Popen(
            ["mariadbd", "--no-defaults", "--user=root", f"--datadir={data}", f"--socket={self.socket}",
             f"--port={self.port}", "--bind-address=127.0.0.1", "--skip-log-bin", "--skip-name-resolve",
             "--innodb-buffer-pool-size=16M", "--character-set-server=utf8mb4",
             f"--ssl-ca={self.directory / 'test-ca.pem'}", f"--ssl-cert={self.directory / 'server.pem'}",
             f"--ssl-key={self.directory / 'server-key.pem'}"],
            stdout=log, stderr=subprocess.STDOUT)
        wait_until(lambda: self.process.poll() is None and self.root_sql("SELECT 1", check=False).returncode == 0,
                   60, "the TLS mariadbd up")
        self.root_sql(f"""CREATE DATABASE iap CHARACTER SET utf8mb4 COLLATE utf8mb4_bin;
            CREATE USER 'iap'@'127.0.0.1' IDENTIFIED BY '{PASSWORD}' REQUIRE SSL;
            GRANT ALL PRIVILEGES ON iap.* TO 'iap'@'127.0.0.1';""")

    def root_sql(self, sql, check=True):
        return subprocess.run(["mariadb", "--no-defaults", f"--socket={self.socket}", "--user=root", "--batch",
                               "--skip-column-names", "-e", sql], capture_output=True, text=True, timeout=30,
                              check=check)

    def tls_sessions_of_iap(self):
        """Sessions of `iap` (every one TLS: the user requires it)."""
        rows = self.root_sql("SELECT COUNT(*) FROM information_schema.processlist WHERE user = 'iap'").stdout
        return int(rows.strip())

    def stop(self):
        if self.process and self.process.poll() is None:
            self.process.terminate()
            self.process.wait(timeout=60)
        self.reserved_port.close()


@pytest.fixture(scope="module")
def tls_mariadb(run_dir):
    directory = run_dir / "tls-mariadb"
    shutil.rmtree(directory, ignore_errors=True)
    directory.mkdir()
    make_ca(directory, "test-ca")
    make_ca(directory, "other-ca")
    make_server_certificate(directory, "test-ca")
    server = TLSMariaDB(directory)
    server.start()
    yield server
    server.stop()
    shutil.rmtree(directory, ignore_errors=True)


def database_env(server, **tls):
    # Not the stack's metrics listener either: the stack's iap-fcgi holds that port.
    env = {name: value for name, value in os.environ.items()
           if not name.startswith("IAP_DB_") and name != "IAP_METRICS_LISTEN"}
    env.update(IAP_DB_HOST="127.0.0.1", IAP_DB_PORT=str(server.port), IAP_DB_USER="iap", IAP_DB_PASSWORD=PASSWORD,
               IAP_DB_NAME="iap", **tls)
    return env


def iapctl(env, *arguments):
    return subprocess.run([str(IAPCTL), *arguments], env=env, capture_output=True, text=True, timeout=60)


def test_iapctl_connects_over_verified_tls_and_refuses_an_unknown_ca(tls_mariadb):
    directory = tls_mariadb.directory
    trusted = database_env(tls_mariadb, IAP_DB_TLS="verify", IAP_DB_CA_FILE=str(directory / "test-ca.pem"))
    migrated = iapctl(trusted, "migrate", "--sql-dir", str(SQL_DIR))
    assert migrated.returncode == 0, f"iapctl over TLS with the server's CA: {migrated.stdout}{migrated.stderr}"
    assert tls_mariadb.root_sql("SELECT COUNT(*) FROM iap.schema_migrations").stdout.strip() != "0"

    wrong_ca = database_env(tls_mariadb, IAP_DB_TLS="verify", IAP_DB_CA_FILE=str(directory / "other-ca.pem"))
    refused = iapctl(wrong_ca, "migrate", "--sql-dir", str(SQL_DIR))
    assert refused.returncode != 0, f"iapctl trusted a server certificate its CA did not sign: {refused.stdout}"
    assert "cannot connect to MariaDB" in refused.stderr, refused.stderr

    plain = iapctl(database_env(tls_mariadb, IAP_DB_TLS="off"), "migrate", "--sql-dir", str(SQL_DIR))
    assert plain.returncode != 0, "the server took a session without TLS: the test proves nothing"

    bad = iapctl(database_env(tls_mariadb, IAP_DB_TLS="yes"), "migrate", "--sql-dir", str(SQL_DIR))
    assert bad.returncode != 0 and "IAP_DB_TLS" in bad.stderr, bad.stderr


def test_without_a_ca_file_the_system_cas_decide(tls_mariadb):
    """No IAP_DB_CA_FILE: OpenSSL's default CAs, which SSL_CERT_FILE points at here."""
    directory = tls_mariadb.directory
    for ca, trusted in (("test-ca", True), ("other-ca", False)):
        env = database_env(tls_mariadb, IAP_DB_TLS="verify", SSL_CERT_FILE=str(directory / f"{ca}.pem"))
        result = iapctl(env, "migrate", "--sql-dir", str(SQL_DIR))
        assert (result.returncode == 0) == trusted, (ca, result.stdout, result.stderr)


def test_a_certificate_for_another_address_is_refused(tls_mariadb):
    """The right CA is not enough: the certificate must name the address connected to."""
    directory = tls_mariadb.directory
    env = database_env(tls_mariadb, IAP_DB_TLS="verify", IAP_DB_CA_FILE=str(directory / "test-ca.pem"))
    try:
        make_server_certificate(directory, "test-ca", address="127.0.0.2")
        tls_mariadb.root_sql("FLUSH SSL")
        refused = iapctl(env, "migrate", "--sql-dir", str(SQL_DIR))
        assert refused.returncode != 0, "iapctl took a certificate issued for 127.0.0.2 from 127.0.0.1"
        assert "cannot connect to MariaDB" in refused.stderr, refused.stderr
    finally:
        make_server_certificate(directory, "test-ca")
        tls_mariadb.root_sql("FLUSH SSL")
    assert iapctl(env, "migrate", "--sql-dir", str(SQL_DIR)).returncode == 0


def run_service(tls_mariadb, run_dir, name, **tls):
    """iap-fcgi on a socket of its own against the TLS server, for 4 s: its log and the
    TLS sessions of `iap` the server saw meanwhile."""
    listen = run_dir / f"{name}.sock"
    listen.unlink(missing_ok=True)
    log_path = tls_mariadb.directory / f"{name}.log"
    env = database_env(tls_mariadb, IAP_LISTEN=str(listen), **tls)
    with open(log_path, "w") as log:
        service = subprocess.Popen([str(IAP_FCGI)], env=env, stdout=log, stderr=subprocess.STDOUT)
    sessions = 0
    try:
        deadline = time.monotonic() + 4
        while time.monotonic() < deadline and service.poll() is None:
            sessions = max(sessions, tls_mariadb.tls_sessions_of_iap())
            time.sleep(0.2)
    finally:
        if service.poll() is None:
            service.terminate()
            service.wait(timeout=30)
        listen.unlink(missing_ok=True)
    return sessions, service.returncode, log_path.read_text()


def test_service_connects_over_verified_tls_and_refuses_an_unknown_ca(tls_mariadb, run_dir):
    directory = tls_mariadb.directory
    migrated = iapctl(database_env(tls_mariadb, IAP_DB_TLS="verify", IAP_DB_CA_FILE=str(directory / "test-ca.pem")),
                      "migrate", "--sql-dir", str(SQL_DIR))
    assert migrated.returncode == 0, migrated.stderr

    sessions, _, log = run_service(tls_mariadb, run_dir, "tls-trusted", IAP_DB_TLS="verify",
                                   IAP_DB_CA_FILE=str(directory / "test-ca.pem"))
    assert sessions > 0 and "settings refresh failed" not in log, f"no TLS session ({sessions}): {log[-2000:]}"

    sessions, _, log = run_service(tls_mariadb, run_dir, "tls-wrong-ca", IAP_DB_TLS="verify",
                                   IAP_DB_CA_FILE=str(directory / "other-ca.pem"))
    assert sessions == 0, f"iap-fcgi held {sessions} sessions with a server its CA did not sign"
    assert "settings refresh failed" in log, log[-2000:]

    sessions, status, log = run_service(tls_mariadb, run_dir, "tls-bad-value", IAP_DB_TLS="required-ish")
    assert status not in (None, 0) and "IAP_DB_TLS" in log, (status, log[-2000:])
