"""What reaches iap-fcgi's FastCGI socket without nginx's checks: parameters
nginx never sends, and clients that are not nginx."""
import pytest

from fastcgi_client import (Connection, request_once, start_service, start_up_refusal, stop_service,
                            wait_until_answering)
from ports import ReservedPort
from support import new_user_id

ORDER = b'{"user_id": "%s", "product_id": "zydj.product.pay_6"}'


@pytest.fixture
def fastcgi_socket(run_dir):
    """The stack's iap-fcgi socket, spoken to directly."""
    return str(run_dir / "iap-fcgi.sock")


def assert_answers_error(answer, http_status, code):
    assert answer is not None, "iap-fcgi closed the connection without an answer"
    assert answer.status == http_status, answer
    assert answer.json()["error"]["code"] == code, answer


def assert_still_serving(fastcgi_socket, api):
    answer = request_once(fastcgi_socket, "GET", "/v1/version")
    assert answer is not None and answer.status == 200, answer
    assert api.get("/v1/health").status_code == 200


@pytest.mark.parametrize("content_length", ["-1", "-2147483648", "12abc", "+5", " 5", "0x10", "5.0"])
def test_a_content_length_that_is_not_a_non_negative_decimal_is_a_400(fastcgi_socket, api, content_length):
    body = ORDER % new_user_id().encode()
    answer = request_once(fastcgi_socket, "POST", "/v1/orders", body=body, content_length=content_length)
    assert_answers_error(answer, 400, "invalid_field")
    assert "CONTENT_LENGTH" in answer.json()["error"]["message"]
    assert_still_serving(fastcgi_socket, api)


@pytest.mark.parametrize("content_length", ["2097153", "99999999999999999999999999"])
def test_a_content_length_past_the_limit_is_a_413(fastcgi_socket, api, content_length):
    answer = request_once(fastcgi_socket, "POST", "/v1/orders", body=b"{}", content_length=content_length)
    assert_answers_error(answer, 413, "body_too_large")
    assert_still_serving(fastcgi_socket, api)


def test_a_kept_connection_answers_after_a_refused_content_length(fastcgi_socket):
    connection = Connection(fastcgi_socket)
    try:
        assert_answers_error(connection.request("POST", "/v1/orders", body=b"{}", content_length="-7"),
                             400, "invalid_field")
        # The refused request's body was not read, so the connection must not be reused for the next one.
        assert connection.closed_by_peer(wait_seconds=5)
    finally:
        connection.close()
    order = request_once(fastcgi_socket, "POST", "/v1/orders", body=ORDER % new_user_id().encode())
    assert order is not None and order.status == 201, order


def test_a_non_loopback_tcp_address_without_allowed_addresses_stops_at_start_up(tmp_path):
    with ReservedPort("0.0.0.0") as port:
        status, log = start_up_refusal(tmp_path / "iap-fcgi.log", IAP_LISTEN=f"0.0.0.0:{port}")
    assert status == 2, log
    assert "IAP_FCGI_ALLOWED_ADDRESSES" in log and "FCGI_WEB_SERVER_ADDRS" in log, log
    assert "serving on" not in log, log


@pytest.mark.parametrize("variable", ["IAP_FCGI_ALLOWED_ADDRESSES", "FCGI_WEB_SERVER_ADDRS"])
def test_only_the_allowed_addresses_are_served_on_tcp(tmp_path, variable):
    reserved = ReservedPort("0.0.0.0")   # kept bound until iap-fcgi stops
    port = reserved.number
    log_path = tmp_path / "iap-fcgi.log"
    service = start_service(log_path, IAP_LISTEN=f"0.0.0.0:{port}", **{variable: "127.0.0.2, 10.9.8.7"})
    try:
        wait_until_answering(("127.0.0.1", port), service, log_path, source="127.0.0.2")

        refused = Connection(("127.0.0.1", port), source="127.0.0.1")
        try:
            refused.send("GET", "/v1/version")
            assert refused.receive() is None, "a client outside the allowed addresses got an answer"
        except (BrokenPipeError, ConnectionResetError):
            pass   # closed before the request was even written: refused all the same
        finally:
            refused.close()
        assert service.poll() is None, log_path.read_text()
    finally:
        stop_service(service)
        reserved.close()


def test_a_loopback_tcp_address_needs_no_allowed_addresses(tmp_path):
    reserved = ReservedPort("127.0.0.1")   # kept bound until iap-fcgi stops
    port = reserved.number
    log_path = tmp_path / "iap-fcgi.log"
    service = start_service(log_path, IAP_LISTEN=f"127.0.0.1:{port}")
    try:
        wait_until_answering(("127.0.0.1", port), service, log_path)
    finally:
        status = stop_service(service)
        reserved.close()
        assert status == 0, log_path.read_text()
