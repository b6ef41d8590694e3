"""A webhook receiver for the tests (and for trying webhooks by hand): a real
HTTP server on a free loopback port.

It checks every request with the `verify` function of README.md (extracted
from the block after `<!-- webhook-verify -->`, not copied), logs one JSON
line per request to --log, and answers according to --mode:
  ok          200 to everything
  fail-first  500 to the first attempt of each event id, 200 after
  hang        never answers (the request is logged first)
  hang-first  never answers the very first request, 200 to the others
  hold-first  holds the very first request until the file --release exists,
              then answers it 200; 200 to the others at once
  drip-first  answers the first --drip-count requests (default 8) 200 with a
              body of 1 GiB announced: --drip-prefix bytes at once, then one
              byte every 100 ms until the sender closes the connection (logged
              to <--log>.closed); 200 to the others at once
--delay-ms waits before answering. Prints the port on stdout's first line.
"""
import argparse, http.server, json, os, re, socketserver, sys, threading, time

parser = argparse.ArgumentParser()
parser.add_argument("--mode", default="ok")
parser.add_argument("--log", required=True)
parser.add_argument("--readme", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "README.md"))
parser.add_argument("--delay-ms", type=int, default=0)
parser.add_argument("--release", default="")
parser.add_argument("--drip-count", type=int, default=8)
parser.add_argument("--drip-prefix", type=int, default=0)
parser.add_argument("--port", type=int, default=0, help="0: a free port (printed)")
args = parser.parse_args()
# The secret roomd signs with: RECEIVER_SECRET, else ROOMD_WEBHOOK_SECRET, else ROOMD_SECRET.
secret = next((os.environ[k] for k in ("RECEIVER_SECRET", "ROOMD_WEBHOOK_SECRET", "ROOMD_SECRET") if os.environ.get(k)), "").encode()

readme = open(args.readme, encoding="utf-8").read()
snippet = re.search(r"<!-- webhook-verify -->\s*```python\n(.*?)```", readme, re.S).group(1)
namespace = {}
exec(snippet, namespace)
verify = namespace["verify"]

lock = threading.Lock()
attempts = {}
seen = []


def first_request(record):
    with lock:
        seen.append(record)
        return len(seen) == 1


def drip(handler, record):
    """200, then a body that never ends; logs when the sender closed the connection."""
    handler.send_response(200)
    handler.send_header("Content-Length", str(1 << 30))
    handler.end_headers()
    sent = 0
    try:
        handler.wfile.write(b"x" * args.drip_prefix)
        sent = args.drip_prefix
        while True:
            time.sleep(0.1)
            handler.wfile.write(b"x")
            sent += 1
    except OSError:
        closed = {"id": record["event"]["id"], "received_ms": record["received_ms"],
                  "closed_ms": int(time.time() * 1000), "body_bytes_sent": sent}
        with lock, open(args.log + ".closed", "a", encoding="utf-8") as log:
            log.write(json.dumps(closed) + "\n")
    handler.close_connection = True


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True  # headers and body leave without waiting for an ACK

    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        event = json.loads(body)
        with lock:
            attempts[event["id"]] = attempts.get(event["id"], 0) + 1
            attempt = attempts[event["id"]]
            status = 500 if args.mode == "fail-first" and attempt == 1 else 200
            record = {
                "received_ms": int(time.time() * 1000), "attempt": attempt, "status": status,
                "path": self.path, "event": event,
                "verified": verify(secret, self.headers, body),
                "tampered_verified": verify(secret, self.headers, body + b" "),
                "wrong_secret_verified": verify(secret + b"x", self.headers, body),
                "content_type": self.headers.get("Content-Type"),
                "timestamp_header": self.headers.get("X-Roomd-Timestamp"),
                "signature_header": self.headers.get("X-Roomd-Signature"),
                "raw_body": body.decode("utf-8"),  # for the kits' verifiers, which check the exact bytes
            }
            if args.mode == "drip-first":
                seen.append(record)
                record["drip"] = len(seen) <= args.drip_count
            with open(args.log, "a", encoding="utf-8") as log:
                log.write(json.dumps(record) + "\n")
        if record.get("drip"):
            return drip(self, record)
        first = args.mode in ("hang-first", "hold-first") and first_request(record)
        if args.mode == "hang" or (args.mode == "hang-first" and first):
            time.sleep(3600)
            return
        if args.mode == "hold-first" and first:
            deadline = time.time() + 120
            while not os.path.exists(args.release) and time.time() < deadline:
                time.sleep(0.02)
        time.sleep(args.delay_ms / 1000)
        self.send_response(status)
        self.send_header("Content-Length", "2")
        self.end_headers()
        self.wfile.write(b"ok")

    def log_message(self, *_):
        pass


class Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True


server = Server(("127.0.0.1", args.port), Handler)
print(server.server_address[1], flush=True)
server.serve_forever()
