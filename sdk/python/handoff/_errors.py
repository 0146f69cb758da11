"""The errors a workflow tells apart: each carries the problem document."""

from __future__ import annotations

from typing import Any, Dict, Optional


class ProviderError(Exception):
    """What the provider said, raised by the function ``run`` calls.

    ``class_`` is one of transient, rate_limited, timeout, validation, auth,
    permission, not_found, conflict, config, unknown; the server applies the
    operation type's retry card to it. ``retry_after`` is the provider's
    Retry-After in seconds.
    """

    def __init__(self, class_: str, code: str = "", message: str = "", retry_after: float = 0) -> None:
        super().__init__(f"{class_} {code}: {message}")
        self.class_ = class_
        self.code = code
        self.message = message
        self.retry_after = retry_after


class NotSent(Exception):
    """Raised by the function ``run`` calls when it stopped before it could
    have called the provider — its own checks of its arguments failed — so
    nothing was sent. The client settles the attempt failed (class
    ``config``, code ``not_sent``) and so releases the lease at once,
    instead of leaving it to lapse into an unknown outcome for a person;
    the operation type's card decides whether it is retried. The clients
    raise it themselves where they can tell: the sync client handed a
    coroutine it will not await, or a function that does not take the
    arguments it is called with."""


class HandoffError(Exception):
    """A problem answer from the server, or an outcome that is not a result.

    ``problem`` is the RFC 9457 document the server sent; where the server
    answered with an operation instead (a refused claim, a settled failure)
    it is composed in the same shape: ``code`` ``not_claimable`` with the
    refusal's ``reason``, or ``settled`` with the state as ``reason``, and
    the operation under ``operation``.
    """

    def __init__(self, problem: Dict[str, Any], base_url: str = "") -> None:
        self.problem = problem
        self.status: Optional[int] = problem.get("status")
        self.code: str = problem.get("code") or ""
        self.reason: str = problem.get("reason") or ""
        self.detail: str = problem.get("detail") or ""
        self.operation: Optional[Dict[str, Any]] = problem.get("operation")
        op = self.operation or {}
        self.operation_id: Optional[str] = op.get("id")
        desk = (op.get("links") or {}).get("desk")
        self.desk_url: Optional[str] = base_url + desk if desk else None
        text = f"handoff: {self.status} {self.code}"
        if self.reason:
            text += f" ({self.reason})"
        super().__init__(f"{text}: {self.detail}" if self.detail else text)


class FingerprintMismatch(HandoffError):
    """The key was registered before with different content (422)."""


class StaleLease(HandoffError):
    """The lease is no longer this worker's (409 stale_lease): it ran out or
    another worker holds the operation now."""


class RetryLater(HandoffError):
    """Nothing to do now; try again in ``retry_after`` seconds."""

    def __init__(self, problem: Dict[str, Any], base_url: str = "", retry_after: float = 0) -> None:
        super().__init__(problem, base_url)
        self.retry_after = retry_after


class InProgress(RetryLater):
    """Another worker holds the lease; ``retry_after`` is when it runs out."""


class AwaitingApproval(HandoffError):
    """The content waits for a person's approval before it may run."""


class OnTheDesk(HandoffError):
    """The operation failed for good and waits for a person (failed_terminal)."""


class OutcomeUnknown(OnTheDesk):
    """Nobody knows whether the provider acted (unknown_outcome): never
    retried by machine; a person decides at ``desk_url``."""


class Cancelled(HandoffError):
    """A person cancelled the operation."""
