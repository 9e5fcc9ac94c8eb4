#!/usr/bin/env python3
"""Hostile and honest HTTP clients of `evring metrics --listen`, for ops_cli_test.sh.
Only 127.0.0.1; every mode bounds its own time.

  http_clients.py slowloris PORT CLIENTS INTERVAL SECONDS
      CLIENTS connections (opened one after the other, until one cannot be)
      each send one byte of a request head every INTERVAL s, reconnecting at
      once when the server closes one; meanwhile a scraper fetches /metrics
      every 0.25 s over a fresh connection. Prints "scrapes N failed F
      slowest S reconnects R connected C" (S in seconds).
  http_clients.py trickle PORT INTERVAL LIMIT
      One connection sending a byte every INTERVAL s (never idle): prints the
      seconds until the server closed it, or "open" after LIMIT s.
  http_clients.py flood PORT COUNT
      Opens COUNT connections as fast as it can, closing each at once.
      Prints "connected N".
  http_clients.py hold PORT COUNT
      Opens COUNT connections, prints "held N", keeps them until stdin ends.
"""
import errno
import selectors
import socket
import sys
import threading
import time

HEAD = b"GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\nUser-Agent: slow\r\n" + b"X-Pad: a\r\n" * 1000


def connect(port, blocking=True):
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.settimeout(3)
    s.connect(("127.0.0.1", port))
    s.setblocking(blocking)
    return s


def scrape(port, timeout):
    """Seconds a fresh-connection GET /metrics took, or None on failure."""
    start = time.monotonic()
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=timeout) as s:
            s.settimeout(max(0.1, timeout - (time.monotonic() - start)))
            s.sendall(b"GET /metrics HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n")
            data = b""
            while True:
                chunk = s.recv(65536)
                if not chunk:
                    break
                data += chunk
    except OSError:
        return None
    if not data.startswith(b"HTTP/1.") or b" 200 " not in data.split(b"\r\n", 1)[0]:
        return None
    return time.monotonic() - start


def slowloris(port, clients, interval, seconds):
    sel = selectors.DefaultSelector()
    conns = {}  # socket -> [bytes sent, next send time]
    reconnects = 0

    def open_one():
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        s.setblocking(False)
        if s.connect_ex(("127.0.0.1", port)) not in (0, errno.EINPROGRESS):
            s.close()
            return False
        conns[s] = [0, time.monotonic()]
        sel.register(s, selectors.EVENT_READ)
        return True

    # The scraper runs on its own thread, so the slow clients' loop never delays it.
    results = []
    stop = threading.Event()

    def scraper():
        time.sleep(0.5)
        while not stop.is_set():
            results.append(scrape(port, 5.0))
            stop.wait(0.25)

    # One after the other, each connection established before the next (so
    # the listen backlog never overflows): a server that stops accepting at
    # its limit leaves the next connect waiting, which ends this phase.
    for _ in range(clients):
        try:
            s = connect(port)
        except OSError:
            break
        s.setblocking(False)
        conns[s] = [0, time.monotonic()]
        sel.register(s, selectors.EVENT_READ)
    connected = len(conns)
    thread = threading.Thread(target=scraper)
    thread.start()
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        now = time.monotonic()
        for s, state in list(conns.items()):
            if now >= state[1]:
                try:
                    s.send(HEAD[state[0] % len(HEAD):state[0] % len(HEAD) + 1])
                    state[0] += 1
                except OSError:
                    pass  # not connected yet, or closed by the server: the read below sees it
                state[1] = now + interval
        for key, _ in sel.select(timeout=0.02):
            s = key.fileobj
            try:
                closed = s.recv(4096) == b""
            except BlockingIOError:
                continue
            except OSError:
                closed = True
            if closed:
                sel.unregister(s)
                del conns[s]
                s.close()
                if open_one():
                    reconnects += 1
    stop.set()
    thread.join()
    for s in conns:
        s.close()
    times = [t for t in results if t is not None]
    slowest = max(times) if times else 0.0
    print(f"scrapes {len(results)} failed {len(results) - len(times)} slowest {slowest:.3f} reconnects {reconnects} "
          f"connected {connected}")


def trickle(port, interval, limit):
    s = connect(port)
    s.settimeout(interval)
    start = time.monotonic()
    sent = 0
    while time.monotonic() - start < limit:
        try:
            s.send(HEAD[sent:sent + 1])
            sent += 1
            if s.recv(4096) == b"":
                print(f"{time.monotonic() - start:.2f}")
                return
        except socket.timeout:
            continue
        except OSError:
            print(f"{time.monotonic() - start:.2f}")
            return
    print("open")


def flood(port, count):
    connected = 0
    for _ in range(count):
        try:
            connect(port).close()
            connected += 1
        except OSError:
            pass
    print(f"connected {connected}")


def hold(port, count):
    held = []
    for _ in range(count):
        try:
            held.append(connect(port))
        except OSError:
            break
    print(f"held {len(held)}", flush=True)
    sys.stdin.read()


def main():
    mode, port = sys.argv[1], int(sys.argv[2])
    args = sys.argv[3:]
    if mode == "slowloris":
        slowloris(port, int(args[0]), float(args[1]), float(args[2]))
    elif mode == "trickle":
        trickle(port, float(args[0]), float(args[1]))
    elif mode == "flood":
        flood(port, int(args[0]))
    elif mode == "hold":
        hold(port, int(args[0]))
    else:
        sys.exit(f"unknown mode {mode}")


if __name__ == "__main__":
    main()
