#!/usr/bin/env python3
"""Hostile-client probe: runs the attacks of the original probe against a running
bot-server and prints one line per attack with what happened and how long it took.

    bot-server --header-timeout-ms 2000 --body-timeout-ms 2000 &
    python3 tests/probe/hostile.py --grpc 127.0.0.1:50051 --http 127.0.0.1:8080 [--pid PID]

Python standard library only. A benchmark run by hand, not a test: the tests in tests/tests/
prove each behaviour; this reports the figures that `docs/HOSTING.md` and `docs/PERFORMANCE.md` quote.
"""

import argparse
import json
import os
import socket
import time

H2_PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"


def addr(text):
    host, port = text.rsplit(":", 1)
    return host, int(port)


def wait_closed(sock, limit):
    """Seconds until the peer closes the socket, or None if still open after `limit`."""
    start = time.monotonic()
    sock.settimeout(0.05)
    while time.monotonic() - start < limit:
        try:
            if not sock.recv(4096):
                return time.monotonic() - start
        except socket.timeout:
            continue
        except OSError:
            return time.monotonic() - start
    return None


def http_request(target, raw, limit=10.0):
    """Sends raw bytes, returns (status line, body, seconds)."""
    start = time.monotonic()
    with socket.create_connection(target, timeout=limit) as s:
        s.sendall(raw)
        data = b""
        try:
            while True:
                chunk = s.recv(65536)
                if not chunk:
                    break
                data += chunk
        except socket.timeout:
            pass
    took = time.monotonic() - start
    head, _, body = data.partition(b"\r\n\r\n")
    status = head.split(b"\r\n", 1)[0].decode(errors="replace")
    return status, body, took


def cpu_seconds(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def report(name, outcome, seconds=None):
    took = "" if seconds is None else f"{seconds * 1000:8.0f} ms"
    print(f"{name:<46} {took:>11}  {outcome}")


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--grpc", type=addr, default=("127.0.0.1", 50051))
    p.add_argument("--http", type=addr, default=("127.0.0.1", 8080))
    p.add_argument("--pid", type=int, help="the server's pid, to measure its CPU during a flood")
    p.add_argument("--limit", type=float, default=60.0, help="longest wait per attack (s)")
    p.add_argument("--flood", type=int, default=160, help="connections in the flood")
    a = p.parse_args()

    for port_name, target in (("gRPC", a.grpc), ("HTTP", a.http)):
        s = socket.create_connection(target)
        t = wait_closed(s, a.limit)
        report(f"silent connection ({port_name})", "closed" if t is not None else "STILL OPEN", t)
        s.close()

    s = socket.create_connection(a.http)
    start = time.monotonic()
    closed = None
    for b in b"POST /v1/LegalMoves HTTP/1.1\r\nHost: localhost\r\nX-Pad: " + b"a" * 4096:
        try:
            s.sendall(bytes([b]))
        except OSError:
            closed = time.monotonic() - start
            break
        if time.monotonic() - start > a.limit:
            break
        time.sleep(0.05)
    report("headers at 20 bytes/s (HTTP/1)", "closed" if closed else "STILL OPEN", closed)
    s.close()

    status, body, t = http_request(
        a.http,
        b"POST /v1/LegalMoves HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"
        b"Content-Length: 1000\r\n\r\n{\"position\"",
        a.limit,
    )
    report("half body (1000 promised, 11 sent)", f"{status} {body[:80]!r}", t)

    s = socket.create_connection(a.grpc)
    s.sendall(H2_PREFACE)
    t = wait_closed(s, a.limit)
    report("bare HTTP/2 preface (gRPC)", "closed" if t is not None else "STILL OPEN", t)
    s.close()

    status, body, t = http_request(
        a.http,
        b"POST /v1/BestMove HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"
        b"Content-Length: 100000000\r\n\r\n",
    )
    report("Content-Length 100 MB, no body", f"{status} {body[:80]!r}", t)

    for method in (b"DELETE", b"PUT"):
        status, body, t = http_request(
            a.http, method + b" /v1/BestMove HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n"
        )
        report(f"{method.decode()} /v1/BestMove", f"{status} {body[:80]!r}", t)

    bad = json.dumps({"position": {"fen": "9/9/9/9/9/9/9/9/9 w 0 12,12", "moves": ["x" * 50000]}})
    status, body, t = http_request(
        a.http,
        b"POST /v1/ApplyMoves HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"
        + f"Content-Length: {len(bad)}\r\nConnection: close\r\n\r\n".encode()
        + bad.encode(),
    )
    report("50 KB unparsable move", f"{status}, answer {len(body)} bytes", t)

    status, body, t = http_request(
        a.http,
        b"POST /v1/ServerInfo HTTP/1.1\r\nHost: localhost\r\nOrigin: http://evil.example\r\n"
        b"Content-Type: text/plain\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}",
    )
    report("cross-origin text/plain POST", f"{status} {body[:80]!r}", t)

    status, body, t = http_request(
        a.http,
        b"GET /v1/ServerInfo HTTP/1.1\r\nHost: rebind.evil.example\r\nConnection: close\r\n\r\n",
    )
    report("foreign Host (DNS rebinding)", f"{status} {body[:80]!r}", t)

    flood = []
    for _ in range(a.flood):
        try:
            flood.append(socket.create_connection(a.grpc))
        except OSError:
            break
    time.sleep(0.3)
    cpu = None
    if a.pid:
        before = cpu_seconds(a.pid)
        time.sleep(2)
        cpu = cpu_seconds(a.pid) - before
    status, body, t = http_request(
        a.http, b"GET /v1/ServerInfo HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n"
    )
    extra = "" if cpu is None else f", server CPU {cpu:.2f} s in 2 s"
    report(f"{len(flood)} silent connections, then a call", f"{status}{extra}", t)
    for s in flood:
        s.close()


if __name__ == "__main__":
    main()
