"""Handoff's Python client.

``Client.run`` runs the whole protocol around one side effect — register and
claim, begin, call, settle — the way the Go client's ``Do`` does: it returns
a :class:`Result` (``replayed`` when the key had already completed and the
function was not called), or raises the error that says what a workflow must
do next. It speaks only the wire contract and needs nothing but the standard
library.
"""

from ._client import Client, Context, Result
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

__all__ = [
    "AwaitingApproval",
    "Cancelled",
    "Client",
    "Context",
    "FingerprintMismatch",
    "HandoffError",
    "InProgress",
    "OnTheDesk",
    "OutcomeUnknown",
    "ProviderError",
    "Result",
    "RetryLater",
    "StaleLease",
]
