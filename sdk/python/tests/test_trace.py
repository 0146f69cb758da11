"""The client sends the caller's W3C trace context with every request."""
import http.server
import json
import threading

import handoff

TRACEPARENT = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"


class _Recorder(http.server.BaseHTTPRequestHandler):
    seen = []

    def do_GET(self):  # noqa: N802 - the standard library's name
        _Recorder.seen.append({k.lower(): v for k, v in self.headers.items()})
        body = json.dumps({"kind": "workflow", "name": "n8n", "namespace": "campaigns"}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


def _serve():
    srv = http.server.HTTPServer(("127.0.0.1", 0), _Recorder)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    return srv


def test_the_trace_context_goes_with_every_request():
    srv = _serve()
    try:
        url = "http://127.0.0.1:%d" % srv.server_address[1]
        _Recorder.seen.clear()
        client = handoff.Client(url, "tok", trace_context=lambda: {"traceparent": TRACEPARENT})
        client.request("GET", "/v1/whoami")
        assert _Recorder.seen[-1].get("traceparent") == TRACEPARENT
        handoff.Client(url, "tok").request("GET", "/v1/whoami")  # no OpenTelemetry here: nothing sent
        assert "traceparent" not in _Recorder.seen[-1] or _Recorder.seen[-1]["traceparent"] != TRACEPARENT
    finally:
        srv.shutdown()
