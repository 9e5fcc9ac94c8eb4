#!/usr/bin/env python3
"""A plain NATS client for the tests of relay --assemble.

    nats_stream_dump.py dump PORT STREAM BODIES META
        Every message of the stream: the bodies, one per line, into BODIES;
        each message's sequence, subject, Nats-Msg-Id and the stream's
        description as a JSON line into META.
    nats_stream_dump.py create PORT STREAM CONFIG_JSON
        Creates the stream with this configuration (name added).

Speaks the NATS text protocol itself over 127.0.0.1 (no client library is
installed in the test image): the stream's info from $JS.API.STREAM.INFO,
then each message from $JS.API.STREAM.MSG.GET, whose reply carries the
message's headers and body in base64."""
import base64
import json
import socket
import sys


class Client:
    def __init__(self, port):
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=20)
        self.buf = b""
        self.line()  # INFO
        self.sock.sendall(b'CONNECT {"verbose":false,"pedantic":false,"headers":true,"protocol":1}\r\n'
                          b"SUB _INBOX.dump 1\r\nPING\r\n")
        while self.line() != b"PONG":
            pass

    def line(self):
        while b"\r\n" not in self.buf:
            more = self.sock.recv(1 << 20)
            if not more:
                sys.exit("the server closed the connection")
            self.buf += more
        line, self.buf = self.buf.split(b"\r\n", 1)
        return line

    def exactly(self, n):
        while len(self.buf) < n + 2:
            more = self.sock.recv(1 << 20)
            if not more:
                sys.exit("the server closed the connection")
            self.buf += more
        data, self.buf = self.buf[:n], self.buf[n + 2:]
        return data

    def request(self, subject, body):
        data = json.dumps(body).encode() if body is not None else b""
        self.sock.sendall(b"PUB %s _INBOX.dump %d\r\n%s\r\n" % (subject.encode(), len(data), data))
        while True:
            line = self.line()
            if line == b"PING":
                self.sock.sendall(b"PONG\r\n")
                continue
            parts = line.split()
            if parts[0] == b"MSG":
                return json.loads(self.exactly(int(parts[-1])))
            if parts[0] == b"HMSG":  # headers, then the body: the total size is last
                raw = self.exactly(int(parts[-1]))
                return json.loads(raw[int(parts[-2]):])
            if parts[0] == b"-ERR":
                sys.exit(line.decode())


def msg_id(headers):
    for line in headers.split(b"\r\n")[1:]:
        key, _, value = line.partition(b":")
        if key.strip().lower() == b"nats-msg-id":
            return value.strip().decode()
    return None


def dump(client, stream, bodies, meta):
    info = client.request(f"$JS.API.STREAM.INFO.{stream}", None)
    if "error" in info:
        sys.exit(info["error"]["description"])
    state = info["state"]
    with open(bodies, "wb") as out, open(meta, "w") as lines:
        for seq in range(state["first_seq"], state["last_seq"] + 1) if state["messages"] else []:
            reply = client.request(f"$JS.API.STREAM.MSG.GET.{stream}", {"seq": seq})
            if "error" in reply:
                sys.exit(f"message {seq}: {reply['error']['description']}")
            m = reply["message"]
            out.write(base64.b64decode(m.get("data", "")) + b"\n")
            headers = base64.b64decode(m.get("hdrs", "")) if m.get("hdrs") else b""
            lines.write(json.dumps({"seq": m["seq"], "subject": m["subject"], "msg_id": msg_id(headers),
                                    "description": info["config"].get("description")}) + "\n")


def create(client, stream, config):
    reply = client.request(f"$JS.API.STREAM.CREATE.{stream}", dict(json.loads(config), name=stream))
    if "error" in reply:
        sys.exit(reply["error"]["description"])


def main():
    what, port, stream = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    client = Client(port)
    if what == "dump":
        dump(client, stream, sys.argv[4], sys.argv[5])
    else:
        create(client, stream, sys.argv[4])


main()
