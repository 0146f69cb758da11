// The errors a workflow tells apart: each carries the problem document.

/** What the provider said, thrown by the function run calls. */
export class ProviderError extends Error {
  constructor(class_, code = "", message = "", retryAfter = 0) {
    super(`${class_} ${code}: ${message}`);
    this.name = "ProviderError";
    this.class_ = class_;
    this.code = code;
    this.providerMessage = message;
    this.retryAfter = retryAfter;
  }
}

/**
 * Thrown by the function run calls when it stopped before it could have
 * called the provider — its own checks of its arguments failed — so nothing
 * was sent: the client settles the attempt failed (class config, code
 * not_sent), releasing the lease at once instead of leaving it to lapse into
 * an unknown outcome; the operation type's card decides whether it is retried.
 */
export class NotSent extends Error {
  constructor(message = "the provider was not called", options = undefined) {
    super(message, options);
    this.name = "NotSent";
  }
}

/**
 * A problem answer from the server, or an outcome that is not a result.
 * problem is the RFC 9457 document the server sent; where the server answered
 * with an operation instead (a refused claim, a settled failure) it is
 * composed in the same shape: code not_claimable with the refusal's reason,
 * or settled with the state as reason, and the operation under operation.
 */
export class HandoffError extends Error {
  constructor(problem, baseUrl = "", options = undefined) {
    const status = problem.status ?? null;
    const code = problem.code ?? "";
    const reason = problem.reason ?? "";
    const detail = problem.detail ?? "";
    let text = `handoff: ${status} ${code}`;
    if (reason) text += ` (${reason})`;
    super(detail ? `${text}: ${detail}` : text, options);
    this.name = new.target.name;
    this.problem = problem;
    this.status = status;
    this.code = code;
    this.reason = reason;
    this.detail = detail;
    this.operation = problem.operation ?? null;
    this.operationId = this.operation?.id ?? null;
    const desk = this.operation?.links?.desk;
    this.deskUrl = desk ? baseUrl + desk : null;
  }
}

/** The key was registered before with different content (422). */
export class FingerprintMismatch extends HandoffError {}

/** The lease is no longer this worker's (409 stale_lease). */
export class StaleLease extends HandoffError {}

/** Nothing to do now; try again in retryAfter seconds. */
export class RetryLater extends HandoffError {
  constructor(problem, baseUrl = "", retryAfter = 0, options = undefined) {
    super(problem, baseUrl, options);
    this.retryAfter = retryAfter;
  }
}

/** Another worker holds the lease; retryAfter is when it runs out. */
export class InProgress extends RetryLater {}

/** The content waits for a person's approval before it may run. */
export class AwaitingApproval extends HandoffError {}

/** The operation failed for good and waits for a person (failed_terminal). */
export class OnTheDesk extends HandoffError {}

/** Nobody knows whether the provider acted (unknown_outcome): never retried
 * by machine; a person decides at deskUrl. */
export class OutcomeUnknown extends OnTheDesk {}

/** A person cancelled the operation. */
export class Cancelled extends HandoffError {}
