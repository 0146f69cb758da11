"""The asyncio client: ``await client.run(...)`` around a coroutine function.

Requests go through the sync client's transport (the standard library's
urllib) in a worker thread, ``asyncio.to_thread``; the heartbeat is a task
beside the awaited function, so the protocol is the sync client's, step for
step.
"""

from __future__ import annotations

import asyncio
import functools
import inspect
import time
from typing import Any, Callable, List, Mapping, Optional, Tuple, TypeVar, Union

from ._client import (
    RETRY_FIRST,
    Client,
    Context,
    Json,
    Result,
    _context,
    _LeaseClock,
    _op,
    _call_operation,
    _invoke,
    _is_coroutine_function,
    _operation_call,
    _operation_signature,
    _retry_wait,
    _settle_from,
    _unavailable_type,
)

F = TypeVar("F", bound=Callable[..., Any])


class AsyncClient:
    """Calls one Handoff server with one workflow token, for asyncio code.

    ``run`` takes a coroutine function (``async def``) or a plain one (run
    in a worker thread, so the event loop and the heartbeat go on); the
    other calls are the sync client's, awaited.
    """

    def __init__(self, url: str, token: str, timeout: float = 30.0, *, worker: str = "python-asyncio-client",
                 trace_context: Optional[Callable[[], Mapping[str, str]]] = None) -> None:
        self.sync = Client(url, token, timeout, worker=worker, trace_context=trace_context)

    @property
    def url(self) -> str:
        return self.sync.url

    @property
    def worker(self) -> str:
        return self.sync.worker

    async def request(self, method: str, path: str, body: Optional[Mapping[str, Any]] = None) -> Any:
        return await asyncio.to_thread(self.sync.request, method, path, body)

    async def register(self, key: str, type: str, content: Mapping[str, Any], **options: Any) -> Json:
        return await asyncio.to_thread(functools.partial(self.sync.register, key, type, content, **options))

    async def claim(self, operation_id: str, **options: Any) -> Json:
        return await asyncio.to_thread(functools.partial(self.sync.claim, operation_id, **options))

    async def begin(self, operation_id: str, lease_token: int) -> Json:
        return await asyncio.to_thread(self.sync.begin, operation_id, lease_token)

    async def heartbeat(self, operation_id: str, lease_token: int, lease_seconds: Optional[int] = None) -> Json:
        return await asyncio.to_thread(self.sync.heartbeat, operation_id, lease_token, lease_seconds)

    async def settle(self, operation_id: str, lease_token: int, outcome: str, **body: Any) -> Json:
        return await asyncio.to_thread(functools.partial(self.sync.settle, operation_id, lease_token, outcome, **body))

    async def event(self, event_id: str) -> Json:
        return await asyncio.to_thread(self.sync.event, event_id)

    async def get(self, operation_id: str) -> Json:
        return await asyncio.to_thread(self.sync.get, operation_id)

    async def list(self, **query: Any) -> Json:
        return await asyncio.to_thread(functools.partial(self.sync.list, **query))

    async def reconcile(self, operation_id: str, found: bool, **options: Any) -> Json:
        return await asyncio.to_thread(functools.partial(self.sync.reconcile, operation_id, found, **options))

    async def events(self, event_id: str, actions: List[Mapping[str, Any]], **options: Any) -> Json:
        return await asyncio.to_thread(functools.partial(self.sync.events, event_id, actions, **options))

    async def run(self, key: str, type: str, content: Mapping[str, Any], fn: Callable[[Context], Any], *,
                  event_id: Optional[str] = None, correlation_id: Optional[str] = None, caused_by: Optional[str] = None,
                  worker: Optional[str] = None, lease_seconds: Optional[int] = None,
                  separate_begin: bool = False) -> Result:
        """Client.run for asyncio: registers and claims, returns the stored
        result (``replayed``) when the key had completed, otherwise awaits
        ``fn(ctx)`` while heartbeating the lease and settles what it returned
        or raised; raises what the settled operation says."""
        if not callable(fn):
            raise TypeError(f"handoff.AsyncClient.run: fn must be the function that calls the provider, not {fn!r}")
        lease = lease_seconds or 30
        claimed_at = time.monotonic()
        reg = await self.register(key, type, content, event_id=event_id, correlation_id=correlation_id,
                                  caused_by=caused_by, claim={"worker": worker or self.worker, "lease_seconds": lease,
                                                                "begin": not separate_begin})
        replayed = self.sync._replayed_or_refused(reg)
        if replayed is not None:
            return replayed
        op_id, token = reg["id"], reg["claim"]["lease"]["token"]
        held = _LeaseClock()
        held.extend(claimed_at, lease)
        if reg.get("state") != "action_pending":
            await self._leased(held, _op(op_id, "begin"), {"lease_token": token})
        value, raised = await self._with_heartbeat(held, op_id, token, lease, fn, _context(reg))
        settle = _settle_from(token, value, raised)
        # A re-send of a settle whose answer was lost is the same settle: the
        # server answers it as it did (Idempotent-Replayed), so StaleLease
        # here means the lease was lost, never that the settle was kept.
        settled = await self._leased(held, _op(op_id, "settle"), settle)
        if isinstance(raised, (KeyboardInterrupt, SystemExit, asyncio.CancelledError)):
            raise raised
        return self.sync._settled(settled, raised)

    def operation(self, type: str, *, key: Union[str, Callable[..., str]], worker: Optional[str] = None,
                  lease_seconds: Optional[int] = None, separate_begin: bool = False) -> Callable[[F], F]:
        """Client.operation for asyncio: the decorated function (async def,
        or a plain one) becomes a coroutine function returning the Result."""

        def wrap(fn: F) -> F:
            if not callable(fn):
                raise TypeError(f"handoff.AsyncClient.operation: {fn!r} is not a function")
            sig = _operation_signature(fn)

            @functools.wraps(fn)
            async def call(*args: Any, **kwargs: Any) -> Result:
                content, k = _operation_call(sig, key, args, kwargs)
                return await self.run(k, type, content, functools.partial(_call_operation, fn, sig), worker=worker,
                                      lease_seconds=lease_seconds, separate_begin=separate_begin)

            return call  # type: ignore[return-value]

        return wrap

    async def _leased(self, held: _LeaseClock, path: str, body: Json) -> Json:
        """A POST that rides out a short outage while the lease lasts."""
        backoff = RETRY_FIRST
        while True:
            try:
                return await asyncio.to_thread(self.sync._send, "POST", path, body)  # type: ignore[no-any-return]
            except _unavailable_type() as u:
                wait, backoff = _retry_wait(backoff, u.retry_after)
                if held.left() <= wait:
                    raise u.cause from None  # the lease ends first: a retry could only be refused
                await asyncio.sleep(wait)

    async def _with_heartbeat(self, held: _LeaseClock, op_id: str, token: int, lease: int,
                              fn: Callable[[Context], Any], ctx: Context) -> Tuple[Any, Optional[BaseException]]:
        async def beat() -> None:
            while True:
                await asyncio.sleep(lease / 3)
                sent = time.monotonic()
                try:
                    await self._leased(held, _op(op_id, "heartbeat"), {"lease_token": token, "lease_seconds": lease})
                    held.extend(sent, lease)
                except Exception:
                    pass  # the settle will say whether the lease still holds

        heart = asyncio.ensure_future(beat())
        try:
            return await _call(fn, ctx), None
        except BaseException as e:  # noqa: BLE001 — after begin, every failure must be settled
            return None, e
        finally:
            heart.cancel()


async def _call(fn: Callable[[Context], Any], ctx: Context) -> Any:
    """Awaits a coroutine function; runs a plain one in a worker thread and
    awaits what it returns when that is awaitable."""
    if _is_coroutine_function(fn):
        return await _invoke(fn, ctx)
    value = await asyncio.to_thread(_invoke, fn, ctx)
    if inspect.isawaitable(value):
        value = await value
    return value

