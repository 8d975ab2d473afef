"""TCP ports for servers a test starts itself (a second mariadbd, an iap-fcgi on IAP_LISTEN=host:port).

A port found free by binding and closing a probe can be taken by any other process before the server
binds it. A reserved port stays bound instead, by a socket that never listens, with SO_REUSEADDR, for as
long as the server uses it. Linux lets a socket bind beside it only when it has SO_REUSEADDR too, and
listen only while no other socket on the port listens (socket(7)); the kernel hands the port to no one
(bind to port 0 and a connect's source port skip a port that is bound). libfcgi and mariadbd set
SO_REUSEADDR on their listening sockets, so they bind and listen on it as on a free port.
"""
import socket


class ReservedPort:
    """A port of `host` kept bound for the block (`with ReservedPort() as port:`) or until close()."""

    def __init__(self, host="127.0.0.1"):
        self._socket = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._socket.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._socket.bind((host, 0))
        self.number = self._socket.getsockname()[1]

    def close(self):
        self._socket.close()

    def __enter__(self):
        return self.number

    def __exit__(self, *_):
        self.close()
