"""What the ingest tests share: the fixture files, a fake clock, and a recorded server.

Only the outside world is faked. The server answers httpx requests from recorded
responses in the real wire format (tests/ingest/fixtures), through
httpx.MockTransport; the clock only moves when a client sleeps, so no test waits.
"""

import json
from pathlib import Path

import httpx
import pytest

FIXTURES = Path(__file__).parent / "fixtures"


def fixture_bytes(name):
    return (FIXTURES / name).read_bytes()


def fixture_json(name):
    return json.loads(fixture_bytes(name))


class FakeTime:
    """A clock that moves only when someone sleeps; every sleep is recorded."""

    def __init__(self, now=1_759_500_000.0):
        self.now = now
        self.sleeps = []

    def clock(self):
        return self.now

    def sleep(self, seconds):
        self.sleeps.append(round(seconds, 3))
        self.now += seconds


class RecordedServer:
    """Serves queued responses by path and query; the last one of a route repeats.

    server.on("/api/query", response1, response2, start="0") answers requests to
    /api/query whose query has start=0 with response1, then response2, then
    response2 again. Routes are tried in the order they were added. A response may
    also be a callable taking the request (to answer conditional requests).
    """

    def __init__(self):
        self.routes = []
        self.requests = []

    def on(self, path, *responses, **query):
        self.routes.append((path, query, list(responses)))
        return self

    def handler(self, request):
        self.requests.append(request)
        for path, query, responses in self.routes:
            if request.url.path == path and all(
                request.url.params.get(k) == str(v) for k, v in query.items()
            ):
                answer = responses.pop(0) if len(responses) > 1 else responses[0]
                return answer(request) if callable(answer) else answer
        return httpx.Response(404, json={"message": f"no recorded response for {request.url}"})

    @property
    def transport(self):
        return httpx.MockTransport(self.handler)


def response(status=200, body=b"", headers=None, content_type=None):
    """An httpx.Response with a bytes, str, or JSON-able body."""
    headers = dict(headers or {})
    if isinstance(body, (dict, list)):
        body = json.dumps(body).encode()
        headers.setdefault("content-type", "application/json; charset=utf-8")
    elif isinstance(body, str):
        body = body.encode()
    if content_type:
        headers["content-type"] = content_type
    return httpx.Response(status, headers=headers, content=body)


@pytest.fixture
def fake_time():
    return FakeTime()


@pytest.fixture
def server():
    return RecordedServer()
