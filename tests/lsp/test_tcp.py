"""``mcl lsp --tcp HOST:PORT`` listens on a port and answers the protocol there."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time

from tests.lsp.conftest import ROOT


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _message(payload: dict) -> bytes:
    body = json.dumps(payload).encode()
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


def _read(sock: socket.socket) -> dict:
    data = b""
    while b"\r\n\r\n" not in data:
        data += sock.recv(4096)
    head, _, body = data.partition(b"\r\n\r\n")
    length = int(next(h for h in head.split(b"\r\n")
                      if h.lower().startswith(b"content-length")).split(b":")[1])
    while len(body) < length:
        body += sock.recv(4096)
    return json.loads(body[:length])


def test_the_server_answers_on_a_tcp_port():
    port = _free_port()
    server = subprocess.Popen([sys.executable, "-m", "mcl.cli", "lsp", "--tcp",
                               f"127.0.0.1:{port}"], cwd=ROOT)
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                sock = socket.create_connection(("127.0.0.1", port), timeout=60)
                break
            except OSError:
                assert server.poll() is None, "the server exited"
                assert time.monotonic() < deadline, "the server did not listen"
                time.sleep(0.1)
        with sock:
            sock.sendall(_message({"jsonrpc": "2.0", "id": 1, "method": "initialize",
                                   "params": {"processId": None, "rootUri": None,
                                              "capabilities": {}}}))
            reply = _read(sock)
            assert reply["id"] == 1
            caps = reply["result"]["capabilities"]
            assert caps["hoverProvider"] and caps["definitionProvider"]
            assert reply["result"]["serverInfo"]["name"] == "mcl"
            sock.sendall(_message({"jsonrpc": "2.0", "id": 2, "method": "shutdown"}))
            assert _read(sock)["id"] == 2
    finally:
        server.kill()
        server.wait()
