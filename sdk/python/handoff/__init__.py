"""Handoff's Python client.

``Client.run`` runs the whole protocol around one side effect — register and
claim, begin, call, settle — the way the Go client's ``Do`` does: it returns
a :class:`Result` (``replayed`` when the key had already completed and the
function was not called), or raises the error that says what a workflow must
do next. ``AsyncClient`` is the same for asyncio (``await client.run(...)``
around an ``async def``), and ``operation`` on either makes one decorated
function of each side effect. It speaks only the wire contract and needs
nothing but the standard library.
"""

from ._async import AsyncClient
from ._client import Client, Context, Result, answer_result, canonical_json, derived_ref
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

__version__ = "0.2.0"

__all__ = [
    "AsyncClient",
    "AwaitingApproval",
    "Cancelled",
    "Client",
    "Context",
    "FingerprintMismatch",
    "HandoffError",
    "InProgress",
    "NotSent",
    "OnTheDesk",
    "OutcomeUnknown",
    "ProviderError",
    "Result",
    "RetryLater",
    "StaleLease",
    "answer_result",
    "canonical_json",
    "derived_ref",
]
