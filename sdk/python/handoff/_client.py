"""The client: one call per route of the wire contract, and ``run``."""

from __future__ import annotations

import http.client
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
from typing import Any, Callable, Dict, List, Mapping, Optional, Tuple

from ._errors import (
    AwaitingApproval,
    Cancelled,
    FingerprintMismatch,
    HandoffError,
    InProgress,
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


class Client:
    """Calls one Handoff server with one workflow token."""

    def __init__(self, url: str, token: str, timeout: float = 30.0, *, worker: str = "python-client") -> None:
        self.url = url.rstrip("/")
        self.token = token
        self.timeout = timeout
        self.worker = worker

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
        lease = lease_seconds or 30
        claimed_at = time.monotonic()  # the lease runs from no later than this
        reg = self.register(key, type, content, event_id=event_id, correlation_id=correlation_id,
                            caused_by=caused_by, claim={"worker": worker or self.worker, "lease_seconds": lease,
                                                          "begin": not separate_begin})
        claim = reg.get("claim")
        if not claim:
            if reg.get("state") == "completed":
                r = reg.get("result") or {}
                return Result(ref=r.get("ref", ""), data=r.get("data"), replayed=True, operation=reg)
            raise self._refusal(reg)
        op_id, token = reg["id"], claim["lease"]["token"]
        held = _LeaseClock()
        held.extend(claimed_at, lease)
        if reg.get("state") != "action_pending":
            # Nothing was sent if begin fails: the lease lapses, another worker may claim.
            self._leased(held, _op(op_id, "begin"), {"lease_token": token})
        ctx = Context(operation_id=op_id, content=claim.get("content") or {}, provider_key=claim.get("provider_key", ""),
                      attempt=(claim.get("attempt") or {}).get("number", 0), lease_token=token, operation=reg)
        value, raised = self._with_heartbeat(held, op_id, token, lease, fn, ctx)
        settle = _settle_from(token, value, raised)
        # A re-send of a settle whose answer was lost is the same settle: the
        # server answers it as it did (Idempotent-Replayed), so StaleLease
        # here means the lease was lost, never that the settle was kept.
        settled = self._leased(held, _op(op_id, "settle"), settle)
        if isinstance(raised, (KeyboardInterrupt, SystemExit)):
            raise raised
        return self._settled(settled, raised)

    def _leased(self, held: _LeaseClock, path: str, body: Json) -> Json:
        """A POST that rides out a short outage while the lease lasts."""
        backoff = RETRY_FIRST
        while True:
            try:
                return self._send("POST", path, body)  # type: ignore[no-any-return]
            except _Unavailable as u:
                wait = random.uniform(0, backoff) + 0.001
                backoff = min(2 * backoff, RETRY_MAX)
                if u.retry_after is not None:
                    wait = u.retry_after
                wait = min(wait, RETRY_MAX + 1)
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
            return fn(ctx), None
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
        if isinstance(value, Result):
            value = {"ref": value.ref, "data": value.data}
        result = {"ref": value["ref"]}
        if value.get("data") is not None:
            result["data"] = value["data"]
        return _settle_body(token, "completed", result, None)
    if isinstance(raised, ProviderError):
        return _settle_body(token, "failed_retryable", None, {"class": raised.class_, "code": raised.code,
                            "message": raised.message, "retry_after_seconds": int(raised.retry_after)})
    # No answer from the provider, or the worker failed after begin: the
    # provider may have acted, so this is never reported as a failure.
    cls = "timeout" if _is_timeout(raised) else "unknown"
    return _settle_body(token, "unknown_outcome", None, {"class": cls, "message": str(raised) or type(raised).__name__})
