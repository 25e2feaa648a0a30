#!/usr/bin/env python3
"""A local stand-in for the OpenAI and Anthropic APIs, for cutegen's tests.

It speaks the real wire formats: OpenAI chat completions (POST .../chat/completions,
whole replies and SSE chunks with the usage in a last chunk when
stream_options.include_usage is set, then "data: [DONE]") and Anthropic Messages
(POST .../messages, whole Message objects and the named SSE events message_start,
content_block_start/delta/stop with thinking_delta, signature_delta and text_delta, ping,
message_delta with the stop reason and usage, message_stop).

Tests script it: POST /_script {"steps": ["429:1", "ok"]} queues what the next API
requests get (one step each; "ok" once the queue is empty). Steps:
  ok           a normal reply (streamed when the request asks for it)
  429[:S]      429 with Retry-After: S (default 1)
  500 502 503 529   that status with an error body
  401          the provider's bad-key error (echoing the key, as OpenAI does)
  404          unknown model
  context      400 context-length error
  drop         close the connection without a reply
  slow:S       wait S seconds, then reply normally
  truncate     cut the reply off (stream without its end event; short body)
  length       a reply stopped at the output limit
  empty        a reply with no text
  malformed    a body (or stream event) that is not JSON
GET /_requests returns every API request received (method, path, headers, body);
POST /_reset forgets requests and steps. Only the standard library is used.

Usage: server.py [--port-file FILE]   (prints "PORT n" on stdout, then serves)
"""
import json
import os
import socket
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

HERE = os.path.dirname(os.path.abspath(__file__))
with open(os.path.join(HERE, "canned.json")) as f:
    CANNED = json.load(f)

LOCK = threading.Lock()
STEPS = []
REQUESTS = []


def next_step():
    with LOCK:
        return STEPS.pop(0) if STEPS else "ok"


def last_user_text(body):
    for m in reversed(body.get("messages", [])):
        if m.get("role") == "user":
            c = m.get("content")
            return c if isinstance(c, str) else json.dumps(c)
    return ""


def reply_text(body):
    return CANNED["text"] + " You said: " + last_user_text(body)


def pieces(text, n=3):
    size = max(1, len(text) // n)
    return [text[i:i + size] for i in range(0, len(text), size)]


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, fmt, *args):
        pass

    # ------------------------------------------------------------ plumbing

    def send_json(self, status, obj, headers=None):
        data = json.dumps(obj).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(data)

    def send_raw(self, status, data, ctype="application/json", length=None):
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(data) if length is None else length))
        self.end_headers()
        self.wfile.write(data)

    def start_stream(self):
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Connection", "close")
        self.end_headers()
        self.close_connection = True

    def event(self, data, name=None):
        out = ""
        if name:
            out += "event: " + name + "\n"
        out += "data: " + data + "\n\n"
        self.wfile.write(out.encode())
        self.wfile.flush()

    def drop(self):
        self.close_connection = True
        try:
            self.connection.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass

    # ------------------------------------------------------------ routes

    def do_GET(self):
        if self.path == "/_requests":
            with LOCK:
                self.send_json(200, REQUESTS)
        else:
            self.send_json(404, {"error": {"message": "no such path"}})

    def do_POST(self):
        n = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(n)
        if self.path == "/_script":
            with LOCK:
                STEPS.extend(json.loads(raw)["steps"])
            return self.send_json(200, {"ok": True})
        if self.path == "/_reset":
            with LOCK:
                STEPS.clear()
                REQUESTS.clear()
            return self.send_json(200, {"ok": True})
        try:
            body = json.loads(raw)
        except ValueError:
            body = raw.decode(errors="replace")
        with LOCK:
            REQUESTS.append({"method": "POST", "path": self.path,
                             "headers": {k.lower(): v for k, v in self.headers.items()},
                             "body": body})
        if self.path.endswith("/chat/completions"):
            api = OpenAI(self, body)
        elif self.path.endswith("/messages"):
            api = Anthropic(self, body)
        else:
            return self.send_json(404, {"error": {"message": "unknown path " + self.path}})
        self.serve_step(api, next_step(), body)

    def serve_step(self, api, step, body):
        name, _, arg = step.partition(":")
        stream = isinstance(body, dict) and body.get("stream") is True
        if name == "slow":
            time.sleep(float(arg or 5))
            name = "ok"
        if name == "drop":
            return self.drop()
        if name in ("429", "500", "502", "503", "529", "401", "404", "context"):
            return api.error(name, arg)
        if name == "malformed" and not stream:
            return self.send_raw(200, b'{"id": "broken", "choices": [')
        if name == "truncate" and not stream:
            data = json.dumps(api.whole("ok")).encode()
            self.send_raw(200, data[: len(data) // 2], length=len(data))
            return self.drop()
        if stream:
            return api.stream(name)
        return self.send_json(200, api.whole(name))


class OpenAI:
    def __init__(self, h, body):
        self.h, self.body = h, body
        self.model = body.get("model", "") if isinstance(body, dict) else ""

    def usage(self):
        u = CANNED["openai_usage"]
        return {"prompt_tokens": u["prompt_tokens"], "completion_tokens": u["completion_tokens"],
                "total_tokens": u["prompt_tokens"] + u["completion_tokens"],
                "prompt_tokens_details": {"cached_tokens": u["cached_tokens"], "audio_tokens": 0},
                "completion_tokens_details": {"reasoning_tokens": u["reasoning_tokens"],
                                              "audio_tokens": 0,
                                              "accepted_prediction_tokens": 0,
                                              "rejected_prediction_tokens": 0}}

    def text_and_reason(self, kind):
        text = reply_text(self.body)
        if kind == "length":
            return text[:12], "length"
        if kind == "empty":
            return "", "stop"
        return text, "stop"

    def whole(self, kind):
        text, reason = self.text_and_reason(kind)
        return {"id": "chatcmpl-test", "object": "chat.completion", "created": int(time.time()),
                "model": self.model, "system_fingerprint": "fp_test",
                "choices": [{"index": 0, "message": {"role": "assistant", "content": text,
                                                     "refusal": None},
                             "logprobs": None, "finish_reason": reason}],
                "usage": self.usage()}

    def chunk(self, delta, reason=None, usage=None, choices=True):
        c = {"id": "chatcmpl-test", "object": "chat.completion.chunk",
             "created": int(time.time()), "model": self.model, "system_fingerprint": "fp_test",
             "choices": [{"index": 0, "delta": delta, "logprobs": None,
                          "finish_reason": reason}] if choices else [],
             "usage": usage}
        return json.dumps(c)

    def stream(self, kind):
        h = self.h
        h.start_stream()
        text, reason = self.text_and_reason(kind)
        h.event(self.chunk({"role": "assistant", "content": "", "refusal": None}))
        if kind == "malformed":
            h.event("{not json")
            return
        parts = pieces(text)
        for i, p in enumerate(parts):
            h.event(self.chunk({"content": p}))
            if kind == "truncate" and i == 0:
                return h.drop()
        h.event(self.chunk({}, reason))
        opts = self.body.get("stream_options") or {}
        if opts.get("include_usage"):
            h.event(self.chunk(None, usage=self.usage(), choices=False))
        h.event("[DONE]")

    def error(self, name, arg):
        if name == "429":
            return self.h.send_json(429, {"error": {
                "message": "Rate limit reached for requests", "type": "requests",
                "param": None, "code": "rate_limit_exceeded"}}, {"Retry-After": arg or "1"})
        if name == "401":
            key = self.h.headers.get("Authorization", "").replace("Bearer ", "")
            return self.h.send_json(401, {"error": {
                "message": "Incorrect API key provided: %s. You can find your API key at "
                           "https://platform.openai.com/account/api-keys." % key,
                "type": "invalid_request_error", "param": None, "code": "invalid_api_key"}})
        if name == "404":
            return self.h.send_json(404, {"error": {
                "message": "The model `%s` does not exist or you do not have access to it."
                           % self.model, "type": "invalid_request_error", "param": None,
                "code": "model_not_found"}})
        if name == "context":
            return self.h.send_json(400, {"error": {
                "message": CANNED["context_error_openai"], "type": "invalid_request_error",
                "param": "messages", "code": "context_length_exceeded"}})
        return self.h.send_json(int(name), {"error": {
            "message": "The server had an error while processing your request.",
            "type": "server_error", "param": None, "code": None}})


class Anthropic:
    def __init__(self, h, body):
        self.h, self.body = h, body
        self.model = body.get("model", "") if isinstance(body, dict) else ""
        self.thinking = isinstance(body, dict) and isinstance(body.get("thinking"), dict)

    def usage(self, output=None):
        u = dict(CANNED["anthropic_usage"])
        if output is not None:
            u["output_tokens"] = output
        return u

    def content(self, kind):
        text = reply_text(self.body)
        reason = "end_turn"
        if kind == "length":
            text, reason = text[:12], "max_tokens"
        if kind == "empty":
            text = ""
        blocks = []
        if self.thinking:
            blocks.append({"type": "thinking", "thinking": CANNED["thinking"],
                           "signature": CANNED["signature"]})
        if kind != "empty":
            blocks.append({"type": "text", "text": text})
        return blocks, reason

    def message(self, blocks, reason, usage):
        return {"id": "msg_test", "type": "message", "role": "assistant", "model": self.model,
                "content": blocks, "stop_reason": reason, "stop_sequence": None,
                "usage": usage}

    def whole(self, kind):
        blocks, reason = self.content(kind)
        return self.message(blocks, reason, self.usage())

    def ev(self, obj):
        self.h.event(json.dumps(obj), obj["type"])

    def stream(self, kind):
        h = self.h
        h.start_stream()
        blocks, reason = self.content(kind)
        self.ev({"type": "message_start", "message": self.message([], None, self.usage(1))})
        if kind == "malformed":
            h.event("{not json", "content_block_start")
            return
        self.ev({"type": "ping"})
        for i, b in enumerate(blocks):
            if b["type"] == "thinking":
                self.ev({"type": "content_block_start", "index": i,
                         "content_block": {"type": "thinking", "thinking": "", "signature": ""}})
                for p in pieces(b["thinking"]):
                    self.ev({"type": "content_block_delta", "index": i,
                             "delta": {"type": "thinking_delta", "thinking": p}})
                self.ev({"type": "content_block_delta", "index": i,
                         "delta": {"type": "signature_delta", "signature": b["signature"]}})
            else:
                self.ev({"type": "content_block_start", "index": i,
                         "content_block": {"type": "text", "text": ""}})
                for j, p in enumerate(pieces(b["text"])):
                    self.ev({"type": "content_block_delta", "index": i,
                             "delta": {"type": "text_delta", "text": p}})
                    if kind == "truncate" and j == 0:
                        return h.drop()
            self.ev({"type": "content_block_stop", "index": i})
        self.ev({"type": "message_delta", "delta": {"stop_reason": reason, "stop_sequence": None},
                 "usage": {"output_tokens": CANNED["anthropic_usage"]["output_tokens"]}})
        self.ev({"type": "message_stop"})

    def err(self, status, etype, message, headers=None):
        self.h.send_json(status, {"type": "error", "error": {"type": etype, "message": message},
                                  "request_id": "req_test"}, headers)

    def error(self, name, arg):
        if name == "429":
            return self.err(429, "rate_limit_error", "Number of request tokens has exceeded "
                            "your per-minute rate limit", {"retry-after": arg or "1"})
        if name == "401":
            return self.err(401, "authentication_error", "invalid x-api-key")
        if name == "404":
            return self.err(404, "not_found_error", "model: " + self.model)
        if name == "context":
            return self.err(400, "invalid_request_error", CANNED["context_error_anthropic"])
        if name == "529":
            return self.err(529, "overloaded_error", "Overloaded")
        return self.err(int(name), "api_error", "Internal server error")


class Server(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request, client_address):
        # A client that gave up (a time-out test) is expected; say nothing.
        if isinstance(sys.exc_info()[1], (BrokenPipeError, ConnectionResetError)):
            return
        super().handle_error(request, client_address)


def main():
    port_file = None
    if len(sys.argv) == 3 and sys.argv[1] == "--port-file":
        port_file = sys.argv[2]
    srv = Server(("127.0.0.1", 0), Handler)
    port = srv.server_address[1]
    if port_file:
        with open(port_file + ".tmp", "w") as f:
            f.write(str(port))
        os.rename(port_file + ".tmp", port_file)
    print("PORT %d" % port, flush=True)
    try:
        srv.serve_forever()
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()
