#!/usr/bin/python3
"""Hostile HTTP against a running paraplan-server's HTTP/JSON and /metrics ports.

usage: bench/http_attacks.py --api HOST:PORT --metrics HOST:PORT [--slow N] [--rounds R]
                             [--other-source 127.0.0.2]

1. Hostile requests (R rounds of a fixed list): a head past every limit (a 1 MiB header, 10,000
   header lines, an endless request line), bodies that lie about their length (negative,
   2^63, larger than sent, chunked), a NUL in the path, HTTP/0.9, pipelined requests, a body of
   JSON nested 100,000 deep, 8 MiB of JSON, invalid UTF-8, a JSON number 1e999, NaN, an
   unknown field, the wrong method, an ingest of an iteration time of 1e300 s. Each answer
   must be a 4xx or a 503 (or the connection closed; 501 for the chunked body, which the
   server does not take; the ingest's 200 must reject the measurement): never a 5xx that
   says the server failed, never silence past the server's own timeouts.
2. Slowloris: N connections (default 300) to the /metrics port from this host, each sending
   a few bytes of a request head and then nothing; while they are open, GET /metrics from
   --other-source (another loopback address, so a per-client cap does not apply) must answer
   200 in under 1 s, and so must the API port's GET /v1/version.
Prints one line per check and `http_attacks: N checks, M failed`; exit 1 when any failed.
"""
import argparse
import socket
import sys
import time


def exchange(addr, data, source=None, timeout=8.0, until=b'\r\n'):
    """Sends `data` on a fresh connection, reads until `until` is seen (or the connection
    ends) and returns (status or None, seconds, what was read)."""
    host, port = addr.rsplit(':', 1)
    began = time.monotonic()
    s = socket.socket()
    s.settimeout(timeout)
    try:
        if source:
            s.bind((source, 0))
        s.connect((host, int(port)))
        try:
            s.sendall(data)
        except OSError:
            pass  # the server may close while a huge head is still being sent
        reply = b''
        while until not in reply:
            chunk = s.recv(4096)
            if not chunk:
                break
            reply += chunk
    except OSError:
        return None, time.monotonic() - began, b''
    finally:
        s.close()
    line = reply.split(b'\r\n', 1)[0].split()
    status = int(line[1]) if len(line) >= 2 and line[1].isdigit() else None
    return status, time.monotonic() - began, reply


def post(path, body, extra=b''):
    return (b'POST ' + path + b' HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n' + extra
            + b'Content-Length: ' + str(len(body)).encode() + b'\r\n\r\n' + body)


def hostile():
    estimate = b'/v1/estimate'
    yield 'header of 1 MiB', b'GET /v1/version HTTP/1.1\r\nHost: x\r\nX-A: ' + b'a' * (1 << 20) + b'\r\n\r\n'
    yield '10,000 header lines', b'GET /v1/version HTTP/1.1\r\n' + b'X-A: 1\r\n' * 10000 + b'\r\n'
    yield 'request line of 1 MiB', b'GET /' + b'a' * (1 << 20) + b' HTTP/1.1\r\n\r\n'
    yield 'negative Content-Length', b'POST /v1/estimate HTTP/1.1\r\nHost: x\r\nContent-Length: -5\r\n\r\n{}'
    yield 'Content-Length 2^63', b'POST /v1/estimate HTTP/1.1\r\nHost: x\r\nContent-Length: 9223372036854775808\r\n\r\n'
    yield 'two Content-Lengths', b'POST /v1/estimate HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\n{}'
    yield 'chunked body', b'POST /v1/estimate HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n'
    yield 'NUL in the path', b'GET /v1/ver\x00sion HTTP/1.1\r\nHost: x\r\n\r\n'
    yield 'HTTP/0.9', b'GET /v1/version\r\n\r\n'
    yield 'no version', b'GET\r\n\r\n'
    yield 'pipelined requests', b'GET /v1/version HTTP/1.1\r\nHost: x\r\n\r\n' * 50
    yield 'JSON nested 100,000 deep', post(estimate, b'[' * 100000)
    yield 'JSON object nested 100,000 deep', post(estimate, b'{"a":' * 100000)
    yield '8 MiB of JSON', post(estimate, b'{"model": "' + b'x' * (8 << 20) + b'"}')
    yield 'invalid UTF-8', post(estimate, b'{"model": "caf\xe9", "profile": "\xff\xfe"}')
    yield 'number 1e999', post(estimate, b'{"model":"gpt3-175b","profile":"dgx-a100-80gb",'
                                         b'"config":{"tensor_parallel":1e999}}')
    yield 'NaN as a number', post(estimate, b'{"model":"gpt3-175b","profile":"dgx-a100-80gb",'
                                            b'"config":{"tensor_parallel":8},"num_gpus":NaN}')
    yield 'unknown field', post(estimate, b'{"model":"gpt3-175b","profile":"dgx-a100-80gb","hidden_sizee":1}')
    yield 'wrong method', b'DELETE /v1/estimate HTTP/1.1\r\nHost: x\r\n\r\n'
    yield 'unknown path', b'GET /../../etc/passwd HTTP/1.1\r\nHost: x\r\n\r\n'
    yield 'ingest of 1e300 s (answered per measurement)', post(b'/v1/measurements:ingest', b'{"measurements":[{"id":"h1","profile":'
                                     b'"dgx-a100-80gb","model":"gpt3-175b","iteration_time_s":1e300,'
                                     b'"config":{"tensor_parallel":8}}]}')


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--api', required=True)
    ap.add_argument('--metrics', required=True)
    ap.add_argument('--slow', type=int, default=300)
    ap.add_argument('--rounds', type=int, default=3)
    ap.add_argument('--other-source', default='127.0.0.2')
    a = ap.parse_args()
    checks = failed = 0

    def check(name, ok, detail):
        nonlocal checks, failed
        checks += 1
        failed += 0 if ok else 1
        print(f'{"ok" if ok else "FAILED"}: {name}: {detail}')

    for r in range(a.rounds):
        for name, data in hostile():
            per_item = name.startswith('ingest')
            status, seconds, reply = exchange(a.api, data, until=b'}]' if per_item else b'\r\n')
            # A refusal (4xx), overload (503), an unsupported transfer coding (501) or a
            # closed connection; a 200 only where the request was valid (pipelined GETs) or
            # the answer refuses item by item (a batch of measurements).
            ok = (status is None or 400 <= status < 500 or status == 503
                  or (status == 501 and b'chunked' in data)
                  or (status == 200 and name == 'pipelined requests')
                  or (status == 200 and per_item and b'STATUS_REJECTED' in reply)) and seconds < 8
            if r == 0 or not ok:
                check(f'api {name}', ok, f'{status or "closed"} in {seconds:.2f} s')

    host, port = a.metrics.rsplit(':', 1)
    slow = []
    for _ in range(a.slow):
        s = socket.socket()
        try:
            s.connect((host, int(port)))
            s.sendall(b'GET /metr')
            slow.append(s)
        except OSError:
            s.close()
            break
    get = b'GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n'
    status, seconds, _ = exchange(a.metrics, get, source=a.other_source, timeout=5)
    check(f'/metrics beside {len(slow)} slow connections, from {a.other_source}', status == 200 and seconds < 1,
          f'{status} in {seconds:.3f} s')
    status, seconds, _ = exchange(a.api, b'GET /v1/version HTTP/1.1\r\nHost: x\r\n\r\n', source=a.other_source)
    check('the API port meanwhile', status == 200 and seconds < 1, f'{status} in {seconds:.3f} s')
    for s in slow:
        s.close()
    print(f'http_attacks: {checks} checks, {failed} failed')
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main())
