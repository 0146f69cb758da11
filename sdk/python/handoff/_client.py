"""The client: one call per route of the wire contract, and ``run``."""

from __future__ import annotations

import functools
import hashlib
import http.client
import inspect
import json
import random
import socket
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any, Callable, Dict, List, Mapping, Optional, Tuple, TypeVar, Union

from ._errors import (
    AwaitingApproval,
    Cancelled,
    FingerprintMismatch,
    HandoffError,
    InProgress,
    NotSent,
    OnTheDesk,
    OutcomeUnknown,
    ProviderError,
    RetryLater,
    StaleLease,
)

Json = Dict[str, Any]

# Re-sends of begin, heartbeat and settle: exponential backoff with full
# jitter from RETRY_FIRST, capped at RETRY_MAX; a Retry-After is honoured up
# to RETRY_MAX + 1 s.
RETRY_FIRST = 0.1
RETRY_MAX = 2.0


@dataclass(frozen=True)
class Result:
    """The provider's record of the side effect; ``replayed`` when the key
    had completed before and the function was not called."""

    ref: str
    data: Any = None
    replayed: bool = False
    operation: Json = field(default_factory=dict, repr=False)


@dataclass(frozen=True)
class Context:
    """What the function ``run`` calls gets: the approved content snapshot to
    execute and the provider key to send as the provider's idempotency key."""

    operation_id: str
    content: Json
    provider_key: str
    attempt: int
    lease_token: int
    operation: Json = field(repr=False)


class _Unavailable(Exception):
    """No answer, or 502/503/504: the request may be sent again."""

    def __init__(self, cause: BaseException, retry_after: Optional[float]) -> None:
        super().__init__(str(cause))
        self.cause = cause
        self.retry_after = retry_after


class _LeaseClock:
    """The worker's cautious view of when its lease ends: measured from
    before the request that got or extended it."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._until = 0.0

    def extend(self, sent_at: float, seconds: float) -> None:
        with self._lock:
            self._until = max(self._until, sent_at + seconds)

    def left(self) -> float:
        with self._lock:
            return self._until - time.monotonic()


def _problem_error(problem: Json, base_url: str) -> HandoffError:
    code = problem.get("code")
    if code == "fingerprint_mismatch":
        return FingerprintMismatch(problem, base_url)
    if code == "stale_lease":
        return StaleLease(problem, base_url)
    return HandoffError(problem, base_url)


def _seconds_until(stamp: Optional[str]) -> float:
    if not stamp:
        return 0.0
    t = datetime.fromisoformat(_trim(stamp))
    return max(0.0, (t - datetime.now(timezone.utc)).total_seconds())


def _trim(stamp: str) -> str:
    """An RFC 3339 time for datetime.fromisoformat on Python 3.9: Z as an
    offset, at most six digits of fraction."""
    s = stamp.replace("Z", "+00:00")
    head, sep, tail = s.partition(".")
    if not sep:
        return s
    n = 0
    while n < len(tail) and tail[n].isdigit():
        n += 1
    digits = tail[:n]
    return head + "." + digits[:6].ljust(6, "0") + tail[len(digits):]


def _is_timeout(exc: BaseException) -> bool:
    if isinstance(exc, (socket.timeout, TimeoutError)):
        return True
    return isinstance(exc, urllib.error.URLError) and isinstance(exc.reason, (socket.timeout, TimeoutError))


_inject: Any = None  # OpenTelemetry's propagate.inject; False when it is not installed


def _opentelemetry_context() -> Mapping[str, str]:
    """The current OpenTelemetry context's propagation headers, or none
    when OpenTelemetry is not installed (it is never required)."""
    global _inject
    if _inject is None:
        try:
            from opentelemetry.propagate import inject  # type: ignore[import-not-found]
            _inject = inject
        except ImportError:
            _inject = False
    if not _inject:
        return {}
    carrier: Dict[str, str] = {}
    _inject(carrier)
    return carrier


def _retry_wait(backoff: float, retry_after: Optional[float]) -> Tuple[float, float]:
    """How long to wait before re-sending a call the server could not take
    (jittered backoff, or the server's Retry-After), and the next backoff."""
    wait = random.uniform(0, backoff) + 0.001
    if retry_after is not None:
        wait = retry_after
    return min(wait, RETRY_MAX + 1), min(2 * backoff, RETRY_MAX)


class Client:
    """Calls one Handoff server with one workflow token."""

    def __init__(self, url: str, token: str, timeout: float = 30.0, *, worker: str = "python-client",
                 trace_context: Optional[Callable[[], Mapping[str, str]]] = None) -> None:
        self.url = url.rstrip("/")
        self.token = token
        self.timeout = timeout
        self.worker = worker
        # The caller's W3C trace context (traceparent, tracestate) sent with
        # every request, so the workflow's trace holds the server's spans:
        # by default OpenTelemetry's, when it is installed.
        self.trace_context = trace_context if trace_context is not None else _opentelemetry_context

    # -- the wire ---------------------------------------------------------

    def request(self, method: str, path: str, body: Optional[Mapping[str, Any]] = None) -> Any:
        """Sends one request of the wire contract and returns the decoded
        answer; an error answer raises a HandoffError, no answer the
        transport's error. For the calls without a method of their own."""
        try:
            return self._send(method, path, body)
        except _Unavailable as u:
            raise u.cause from None

    def _send(self, method: str, path: str, body: Optional[Mapping[str, Any]] = None) -> Any:
        """request, raising _Unavailable where the request may be re-sent."""
        data = None if body is None else json.dumps(body).encode()
        req = urllib.request.Request(self.url + path, data=data, method=method)
        for name, value in self.trace_context().items():
            req.add_header(name, value)
        req.add_header("Authorization", "Bearer " + self.token)
        req.add_header("Accept", "application/json")
        if data is not None:
            req.add_header("Content-Type", "application/json")
        try:
            with urllib.request.urlopen(req, timeout=self.timeout) as resp:
                return json.loads(resp.read() or b"null")
        except urllib.error.HTTPError as e:
            raw = e.read()
            try:
                problem = json.loads(raw)
            except ValueError:
                problem = None
            if not isinstance(problem, dict) or not problem.get("code"):
                problem = {"status": e.code, "code": "http_error", "detail": raw.decode(errors="replace").strip()}
            problem.setdefault("status", e.code)
            err = _problem_error(problem, self.url)
            if e.code in (502, 503, 504):
                raise _Unavailable(err, _retry_after(e.headers.get("Retry-After"))) from None
            raise err from None
        except (urllib.error.URLError, http.client.HTTPException, ConnectionError, socket.timeout, TimeoutError) as e:
            raise _Unavailable(e, None) from e

    def _call(self, method: str, path: str, body: Optional[Mapping[str, Any]] = None) -> Json:
        return self.request(method, path, body)  # type: ignore[no-any-return]

    def register(self, key: str, type: str, content: Mapping[str, Any], *, event_id: Optional[str] = None,
                 source: Optional[str] = None, correlation_id: Optional[str] = None, caused_by: Optional[str] = None,
                 claim: Optional[Mapping[str, Any]] = None) -> Json:
        """POST /v1/operations; with ``claim`` ({"worker", "lease_seconds"})
        the answer carries the claim, or ``claim_refused``."""
        body: Json = {"key": key, "type": type, "content": dict(content)}
        for name, value in (("event_id", event_id), ("source", source), ("correlation_id", correlation_id),
                            ("caused_by", caused_by), ("claim", claim)):
            if value is not None:
                body[name] = value
        return self._call("POST", "/v1/operations", body)

    def claim(self, operation_id: str, *, worker: Optional[str] = None, lease_seconds: Optional[int] = None) -> Json:
        body: Json = {"worker": worker or self.worker}
        if lease_seconds is not None:
            body["lease_seconds"] = lease_seconds
        return self._call("POST", _op(operation_id, "claim"), body)

    def begin(self, operation_id: str, lease_token: int) -> Json:
        return self._call("POST", _op(operation_id, "begin"), {"lease_token": lease_token})

    def heartbeat(self, operation_id: str, lease_token: int, lease_seconds: Optional[int] = None) -> Json:
        body: Json = {"lease_token": lease_token}
        if lease_seconds is not None:
            body["lease_seconds"] = lease_seconds
        return self._call("POST", _op(operation_id, "heartbeat"), body)

    def settle(self, operation_id: str, lease_token: int, outcome: str, *, result: Optional[Mapping[str, Any]] = None,
               error: Optional[Mapping[str, Any]] = None) -> Json:
        return self._call("POST", _op(operation_id, "settle"), _settle_body(lease_token, outcome, result, error))

    def get(self, operation_id: str) -> Json:
        return self._call("GET", _op(operation_id))

    def list(self, **query: Any) -> Json:
        """GET /v1/operations; a list value repeats the parameter (state)."""
        q = urllib.parse.urlencode({k: v for k, v in query.items() if v is not None}, doseq=True)
        return self._call("GET", "/v1/operations" + ("?" + q if q else ""))

    def reconcile(self, operation_id: str, found: bool, *, result: Optional[Mapping[str, Any]] = None,
                  evidence: Optional[str] = None) -> Json:
        body: Json = {"found": found}
        if result is not None:
            body["result"] = dict(result)
        if evidence is not None:
            body["evidence"] = evidence
        return self._call("POST", _op(operation_id, "reconcile"), body)

    def events(self, event_id: str, actions: List[Mapping[str, Any]], *, source: Optional[str] = None,
               correlation_id: Optional[str] = None) -> Json:
        """POST /v1/events: one operation per action, keyed <event_id>:<action>."""
        body: Json = {"event_id": event_id, "actions": [dict(a) for a in actions]}
        if source is not None:
            body["source"] = source
        if correlation_id is not None:
            body["correlation_id"] = correlation_id
        return self._call("POST", "/v1/events", body)

    def event(self, event_id: str) -> Json:
        return self._call("GET", "/v1/events/" + urllib.parse.quote(event_id, safe=""))

    # -- the protocol -----------------------------------------------------

    def run(self, key: str, type: str, content: Mapping[str, Any], fn: Callable[[Context], Any], *,
            event_id: Optional[str] = None, correlation_id: Optional[str] = None, caused_by: Optional[str] = None,
            worker: Optional[str] = None, lease_seconds: Optional[int] = None,
            separate_begin: bool = False) -> Result:
        """Runs fn, the one call to the provider, under the key.

        Registers and claims; if the key completed before, returns the stored
        result (``replayed``) without calling fn. Otherwise the claim also
        begins (the two-call lifecycle; ``separate_begin=True`` sends begin as
        its own call, for work between the claim and the provider) — from here
        a lost worker means "unknown", never a silent retry — calls
        ``fn(ctx)`` while heartbeating the lease, and settles what fn
        returned (a dict with ``ref`` and optional ``data``, or a Result) or
        raised (a ProviderError; any other exception, a timeout or a lost
        connection included, settles as unknown_outcome). Raises what the
        settled operation says: RetryLater, OnTheDesk, OutcomeUnknown.
        """
        _refuse_coroutine_function(fn, "handoff.Client.run")
        lease = lease_seconds or 30
        claimed_at = time.monotonic()  # the lease runs from no later than this
        reg = self.register(key, type, content, event_id=event_id, correlation_id=correlation_id,
                            caused_by=caused_by, claim={"worker": worker or self.worker, "lease_seconds": lease,
                                                          "begin": not separate_begin})
        replayed = self._replayed_or_refused(reg)
        if replayed is not None:
            return replayed
        op_id, token = reg["id"], reg["claim"]["lease"]["token"]
        held = _LeaseClock()
        held.extend(claimed_at, lease)
        if reg.get("state") != "action_pending":
            # Nothing was sent if begin fails: the lease lapses, another worker may claim.
            self._leased(held, _op(op_id, "begin"), {"lease_token": token})
        ctx = _context(reg)
        value, raised = self._with_heartbeat(held, op_id, token, lease, fn, ctx)
        if raised is None and inspect.isawaitable(value):
            value, raised = None, _not_awaited(value, "handoff.Client.run")
        settle = _settle_from(token, value, raised)
        # A re-send of a settle whose answer was lost is the same settle: the
        # server answers it as it did (Idempotent-Replayed), so StaleLease
        # here means the lease was lost, never that the settle was kept.
        settled = self._leased(held, _op(op_id, "settle"), settle)
        if isinstance(raised, (KeyboardInterrupt, SystemExit)):
            raise raised
        return self._settled(settled, raised)

    def operation(self, type: str, *, key: Union[str, Callable[..., str]], worker: Optional[str] = None,
                  lease_seconds: Optional[int] = None, separate_begin: bool = False) -> Callable[[F], F]:
        """A decorator: one line per side effect.

        ``@client.operation("email.send", key="welcome:{user_id}")`` on
        ``def send(ctx, user_id, to): ...`` makes ``send(user_id="u_1",
        to="a@example.com")`` run the protocol with those arguments, by
        name, as the content, and the key from the template (``str.format``
        over the arguments) or from ``key``, a function called with them.
        The function gets the Context first and then the arguments from the
        claimed snapshot (the approved content), and the call returns the
        Result (``replayed`` when the key had completed before). The content
        and the key are worked out before any request: an argument JSON
        cannot hold, or a key that cannot be made, raises at once.
        """

        def wrap(fn: F) -> F:
            _refuse_coroutine_function(fn, "handoff.Client.operation")
            sig = _operation_signature(fn)

            @functools.wraps(fn)
            def call(*args: Any, **kwargs: Any) -> Result:
                content, k = _operation_call(sig, key, args, kwargs)
                return self.run(k, type, content, functools.partial(_call_operation, fn, sig), worker=worker,
                                lease_seconds=lease_seconds, separate_begin=separate_begin)

            return call  # type: ignore[return-value]

        return wrap

    def _replayed_or_refused(self, reg: Json) -> Optional[Result]:
        """After register-and-claim: the stored result when the key had
        completed, None when the claim was granted, else raises the refusal."""
        if reg.get("claim"):
            return None
        if reg.get("state") == "completed":
            r = reg.get("result") or {}
            return Result(ref=r.get("ref", ""), data=r.get("data"), replayed=True, operation=reg)
        raise self._refusal(reg)

    def _leased(self, held: _LeaseClock, path: str, body: Json) -> Json:
        """A POST that rides out a short outage while the lease lasts."""
        backoff = RETRY_FIRST
        while True:
            try:
                return self._send("POST", path, body)  # type: ignore[no-any-return]
            except _Unavailable as u:
                wait, backoff = _retry_wait(backoff, u.retry_after)
                if held.left() <= wait:
                    raise u.cause from None  # the lease ends first: a retry could only be refused
                time.sleep(wait)

    def _with_heartbeat(self, held: _LeaseClock, op_id: str, token: int, lease: int,
                        fn: Callable[[Context], Any], ctx: Context) -> Tuple[Any, Optional[BaseException]]:
        done = threading.Event()

        def beat() -> None:
            while not done.wait(lease / 3):
                sent = time.monotonic()
                try:
                    self._leased(held, _op(op_id, "heartbeat"), {"lease_token": token, "lease_seconds": lease})
                    held.extend(sent, lease)
                except Exception:
                    pass  # the settle will say whether the lease still holds

        t = threading.Thread(target=beat, name="handoff-heartbeat", daemon=True)
        t.start()
        try:
            return _invoke(fn, ctx), None
        except BaseException as e:  # noqa: BLE001 — after begin, every failure must be settled
            return None, e
        finally:
            done.set()

    def _refusal(self, op: Json) -> HandoffError:
        refused = op.get("claim_refused") or {}
        reason = refused.get("reason", "")
        problem = {"status": 409, "code": "not_claimable", "reason": reason,
                   "detail": refused.get("detail") or "not claimable", "operation": op}
        if reason == "in_progress":
            return InProgress(problem, self.url, _seconds_until((op.get("lease") or {}).get("expires_at")))
        if reason == "retry_later":
            after = refused.get("retry_after_seconds") or _seconds_until(op.get("next_retry_at"))
            return RetryLater(problem, self.url, float(after))
        if reason == "awaiting_approval":
            return AwaitingApproval(problem, self.url)
        if reason == "cancelled":
            return Cancelled(problem, self.url)
        if op.get("state") == "unknown_outcome":
            return OutcomeUnknown(problem, self.url)
        if op.get("state") == "failed_terminal":
            return OnTheDesk(problem, self.url)
        return HandoffError(problem, self.url)

    def _settled(self, op: Json, raised: Optional[BaseException]) -> Result:
        state = op.get("state")
        if state == "completed":
            r = op.get("result") or {}
            return Result(ref=r.get("ref", ""), data=r.get("data"), replayed=False, operation=op)
        problem = {"status": 200, "code": "settled", "reason": state,
                   "detail": (op.get("last_error") or {}).get("message", ""), "operation": op}
        err: HandoffError
        if state == "failed_retryable":
            err = RetryLater(problem, self.url, _seconds_until(op.get("next_retry_at")))
        elif state == "unknown_outcome":
            err = OutcomeUnknown(problem, self.url)
        elif state == "failed_terminal":
            err = OnTheDesk(problem, self.url)
        else:
            err = HandoffError(problem, self.url)
        raise err from raised


F = TypeVar("F", bound=Callable[..., Any])


def _context(reg: Json) -> Context:
    claim = reg["claim"]
    return Context(operation_id=reg["id"], content=claim.get("content") or {}, provider_key=claim.get("provider_key", ""),
                   attempt=(claim.get("attempt") or {}).get("number", 0), lease_token=claim["lease"]["token"],
                   operation=reg)


def _is_coroutine_function(fn: Any) -> bool:
    """An async def, also behind functools.partial or as a callable object's
    __call__."""
    while isinstance(fn, functools.partial):
        fn = fn.func
    if inspect.iscoroutinefunction(fn) or inspect.isasyncgenfunction(fn):
        return True
    call = getattr(type(fn), "__call__", None)
    return not inspect.isfunction(fn) and not inspect.ismethod(fn) and (
        inspect.iscoroutinefunction(call) or inspect.isasyncgenfunction(call))


def _refuse_coroutine_function(fn: Any, where: str) -> None:
    if not callable(fn):
        raise TypeError(f"{where}: fn must be the function that calls the provider, not {fn!r}")
    if _is_coroutine_function(fn):
        raise TypeError(f"{where}: {getattr(fn, '__qualname__', fn)!r} is a coroutine function (async def), which "
                        "the sync client cannot run; use handoff.AsyncClient and await client.run(...)")


def _not_awaited(value: Any, where: str) -> NotSent:
    """A plain function returned an awaitable the sync client will not
    await: a coroutine that never started has called nothing."""
    if inspect.iscoroutine(value):
        value.close()
        return NotSent(f"{where}: the function returned a coroutine, which the sync client does not await, so "
                       "the provider was not called; use handoff.AsyncClient and await client.run(...)")
    return TypeError(f"{where}: the function returned an awaitable ({type(value).__name__}) that may already "  # type: ignore[return-value]
                     "be running; the sync client cannot tell what it did")


def _invoke(fn: Callable[[Context], Any], ctx: Context) -> Any:
    """fn(ctx); a TypeError raised by the call itself — the function does
    not take the arguments it is called with — means its body never ran."""
    try:
        return fn(ctx)
    except TypeError as e:
        if e.__traceback__ is not None and e.__traceback__.tb_next is None:
            raise NotSent(f"the function could not be called with the Context: {e}") from e
        raise


def _call_operation(fn: Callable[..., Any], sig: inspect.Signature, ctx: Context) -> Any:
    """An operation's function, called with the claimed snapshot's members
    as its arguments; a snapshot it does not take has called nothing."""
    try:
        sig.bind(ctx, **ctx.content)
    except TypeError as e:
        raise NotSent(f"{getattr(fn, '__qualname__', fn)} does not take the claimed content: {e}") from e
    return fn(ctx, **ctx.content)


def _operation_signature(fn: Callable[..., Any]) -> inspect.Signature:
    sig = inspect.signature(fn)
    params = list(sig.parameters.values())
    if not params or params[0].kind not in (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD):
        raise TypeError(f"handoff operation {fn.__qualname__}: the function takes the Context first")
    for p in params[1:]:
        if p.kind in (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.VAR_POSITIONAL):
            raise TypeError(f"handoff operation {fn.__qualname__}: argument {p.name!r} has no name to be content by; "
                            "use named parameters (or **kwargs)")
    return sig


def _operation_call(sig: inspect.Signature, key: Union[str, Callable[..., str]], args: Tuple[Any, ...],
                    kwargs: Mapping[str, Any]) -> Tuple[Json, str]:
    """The content (the call's arguments by name, defaults included) and the
    key, before any request."""
    bound = sig.bind(None, *args, **kwargs)
    bound.apply_defaults()
    content: Json = {}
    for name, value in list(bound.arguments.items())[1:]:
        if sig.parameters[name].kind is inspect.Parameter.VAR_KEYWORD:
            content.update(value)
        else:
            content[name] = value
    json.dumps(content)  # raises TypeError now for an argument JSON cannot hold
    k = key.format(**content) if isinstance(key, str) else key(**content)
    if not isinstance(k, str) or not k:
        raise TypeError(f"handoff operation: the key must be a non-empty string, not {k!r}")
    return content, k


def _unavailable_type() -> type:
    return _Unavailable


def _op(operation_id: str, verb: str = "") -> str:
    path = "/v1/operations/" + urllib.parse.quote(operation_id, safe="")
    return path + "/" + verb if verb else path


def _retry_after(value: Optional[str]) -> Optional[float]:
    try:
        return float(int(value)) if value is not None and int(value) >= 0 else None
    except ValueError:
        return None


def _settle_body(token: int, outcome: str, result: Optional[Mapping[str, Any]], error: Optional[Mapping[str, Any]]) -> Json:
    body: Json = {"lease_token": token, "outcome": outcome}
    if result is not None:
        body["result"] = dict(result)
    if error is not None:
        body["error"] = dict(error)
    return body


def _settle_from(token: int, value: Any, raised: Optional[BaseException]) -> Json:
    """The settle body for what fn returned or raised."""
    if raised is None:
        return _settle_body(token, "completed", answer_result(value), None)
    if isinstance(raised, NotSent):
        return _settle_body(token, "failed_retryable", None, {"class": "config", "code": "not_sent",
                            "message": str(raised) or "the provider was not called"})
    if isinstance(raised, ProviderError):
        return _settle_body(token, "failed_retryable", None, {"class": raised.class_, "code": raised.code,
                            "message": raised.message, "retry_after_seconds": int(raised.retry_after)})
    # No answer from the provider, or the worker failed after begin: the
    # provider may have acted, so this is never reported as a failure.
    cls = "timeout" if _is_timeout(raised) else "unknown"
    return _settle_body(token, "unknown_outcome", None, {"class": cls, "message": str(raised) or type(raised).__name__})


def answer_result(value: Any) -> Json:
    """The settled result for what the function returned — it returned, so
    the side effect is completed and the answer is kept. The ref is, in
    order: the answer itself when it is a non-empty string; its ``ref``;
    its ``id`` (a string or a number, as text); else ``sha256:`` and the
    first 32 hex digits of the SHA-256 of the answer's canonical JSON
    (:func:`canonical_json`). The data is the answer's ``data`` when the
    answer is ``{"ref", "data"}`` or a part of it, else the whole answer.
    Values JSON cannot hold are kept as their text."""
    if isinstance(value, Result):
        value = {"ref": value.ref} if value.data is None else {"ref": value.ref, "data": value.data}
    value = json.loads(json.dumps(value, default=str))
    if isinstance(value, str) and value:
        return {"ref": value}
    result: Json = {}
    if isinstance(value, dict) and set(value) <= {"ref", "data"}:
        if value.get("data") is not None:
            result["data"] = value["data"]
        if value.get("ref") in (None, ""):
            value = {k: v for k, v in value.items() if k != "ref"}  # a missing ref is no part of the answer
    elif value is not None:
        result["data"] = value
    ref = _ref_text(value.get("ref")) or _ref_text(value.get("id")) if isinstance(value, dict) else None
    result["ref"] = ref or derived_ref(value)
    return {"ref": result["ref"], **({"data": result["data"]} if "data" in result else {})}


def _ref_text(v: Any) -> Optional[str]:
    if isinstance(v, str) and v:
        return v
    if isinstance(v, (int, float)) and not isinstance(v, bool):
        return json.dumps(v)
    return None


def derived_ref(answer: Any) -> str:
    """``sha256:`` and the first 32 hex digits of the SHA-256 of the
    answer's canonical JSON: the ref of an answer that names none, the same
    in the Go, Python and TypeScript clients."""
    return "sha256:" + hashlib.sha256(canonical_json(answer).encode()).hexdigest()[:32]


def canonical_json(v: Any) -> str:
    """JSON with object members sorted by key (in UTF-16 code units, as
    JavaScript sorts), no whitespace, and strings escaped as JSON.stringify
    escapes them. Integers, strings, booleans, null, lists and objects come
    out the same in all three clients; other numbers as each language writes
    them."""
    if isinstance(v, dict):
        keys = sorted(v, key=lambda k: k.encode("utf-16-be"))
        return "{" + ",".join(json.dumps(k, ensure_ascii=False) + ":" + canonical_json(v[k]) for k in keys) + "}"
    if isinstance(v, (list, tuple)):
        return "[" + ",".join(canonical_json(e) for e in v) + "]"
    return json.dumps(v, ensure_ascii=False)
