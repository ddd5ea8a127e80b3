"""A small OpenAI-compatible chat completions server for the tests, on 127.0.0.1.

It answers `POST /v1/chat/completions` from the recorded responses in
tests/coding/model_raters/recorded/ (the protocol's real wire format): a completion whose
message content is the answer the test's `answer(request)` gives, and the recorded
refusal, cut-off answer and error bodies for the faults. A fault is queued per item
(`fail(marker, *faults)`: the next requests whose user message contains `marker` get
them, one each, in order), so threads sending in any order meet the same faults:

    "429"        429 with Retry-After: 0 and the recorded rate-limit body
    "500"        500 with the recorded server error body
    "timeout"    no answer for longer than the client waits
    "malformed"  a completion whose content is not JSON
    "invalid"    a completion whose answer names an option the codebook lacks
    "refusal"    the recorded refusal
    "length"     the recorded answer cut off at the token limit
    "400", "401", "404"   the recorded error bodies
    "garbage"    status 200 with a body that is not JSON

Every request body received is kept in `requests`, its Authorization header in
`authorizations`.
"""

import copy
import json
import threading
import time
from collections import defaultdict, deque
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

RECORDED = Path(__file__).parent / "coding" / "model_raters" / "recorded"


def recorded(name):
    return json.loads((RECORDED / name).read_text())


class ModelServer:
    def __init__(self, answer=None, timeout_sleep=2.0):
        self.answer = answer or (lambda request: {})
        self.timeout_sleep = timeout_sleep
        self.requests = []
        self.authorizations = []
        self.faults = defaultdict(deque)
        self.lock = threading.Lock()
        self.completion = recorded("chat_completion.json")
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            # Headers and body go out as two writes: without this, a kept-alive client's
            # delayed acknowledgement holds every answer back by about 40 ms.
            disable_nagle_algorithm = True

            def log_message(self, *args):
                pass

            def do_POST(self):
                length = int(self.headers.get("content-length") or 0)
                body = json.loads(self.rfile.read(length) or b"{}")
                if self.path.rstrip("/") != "/v1/chat/completions":
                    return self.send(404, recorded("error_404.json"))
                with server.lock:
                    server.requests.append(body)
                    server.authorizations.append(self.headers.get("authorization", ""))
                    fault = server._fault(body)
                if fault is None:
                    return self.send(200, server.completed(body, server.answer(body)))
                return server.faulty(self, fault, body)

            def send(self, status, payload, headers=(), raw=None):
                data = raw if raw is not None else json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                for name, value in headers:
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(data)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    @property
    def url(self):
        return f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"

    def start(self):
        self.thread.start()
        return self

    def stop(self):
        self.httpd.shutdown()
        self.httpd.server_close()

    def fail(self, marker, *faults):
        with self.lock:
            self.faults[marker].extend(faults)

    def _fault(self, body):
        text = user_text(body)
        for marker, queued in self.faults.items():
            if queued and marker in text:
                return queued.popleft()
        return None

    def completed(self, body, answer, finish="stop"):
        payload = copy.deepcopy(self.completion)
        content = answer if isinstance(answer, str) else json.dumps(answer)
        payload["choices"][0]["message"]["content"] = content
        payload["choices"][0]["finish_reason"] = finish
        payload["model"] = body.get("model", payload["model"])
        sent = sum(len(m.get("content") or "") for m in body.get("messages", []))
        payload["usage"] = {"prompt_tokens": sent // 4, "completion_tokens": len(content) // 4,
                            "total_tokens": sent // 4 + len(content) // 4}
        return payload

    def faulty(self, handler, fault, body):
        if fault == "429":
            return handler.send(429, recorded("error_429.json"), [("retry-after", "0")])
        if fault in ("400", "401", "404", "500"):
            return handler.send(int(fault), recorded(f"error_{fault}.json"))
        if fault == "timeout":
            time.sleep(self.timeout_sleep)
            return handler.send(200, self.completed(body, self.answer(body)))
        if fault == "malformed":
            return handler.send(200, self.completed(body, '{"label": "rl_method", oops'))
        if fault == "invalid":
            return handler.send(200, self.completed(body, {**self.answer(body),
                                                           "label": "not_an_option"}))
        if fault == "refusal":
            return handler.send(200, recorded("refusal.json"))
        if fault == "length":
            return handler.send(200, recorded("length.json"))
        if fault == "garbage":
            return handler.send(200, None, raw=b"<html>502 Bad Gateway</html>")
        raise ValueError(fault)


def user_text(body):
    return "\n".join(m.get("content") or "" for m in body.get("messages", [])
                     if m.get("role") == "user")
