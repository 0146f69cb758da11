// Handoff's TypeScript client. run drives the whole protocol around one side
// effect — register and claim, begin, call, settle — the way the Go client's
// Do does. It speaks only the wire contract and needs nothing but fetch.

import {
  AwaitingApproval, Cancelled, FingerprintMismatch, HandoffError, InProgress,
  NotSent, OnTheDesk, OutcomeUnknown, ProviderError, RetryLater, StaleLease,
} from "./errors.js";

export {
  AwaitingApproval, Cancelled, FingerprintMismatch, HandoffError, InProgress,
  NotSent, OnTheDesk, OutcomeUnknown, ProviderError, RetryLater, StaleLease,
};

// Re-sends of begin, heartbeat and settle: exponential backoff with full
// jitter from RETRY_FIRST, capped at RETRY_MAX; a Retry-After is honoured up
// to RETRY_MAX + 1 s.
const RETRY_FIRST = 100;
const RETRY_MAX = 2000;

/** No answer, or 502/503/504: the request may be sent again. */
class Unavailable extends Error {
  constructor(cause, retryAfterMs) {
    super(String(cause?.message ?? cause), { cause });
    this.retryAfterMs = retryAfterMs;
  }
}

/** The worker's cautious view of when its lease ends. */
class LeaseClock {
  until = 0;
  extend(sentAt, seconds) { this.until = Math.max(this.until, sentAt + seconds * 1000); }
  left() { return this.until - Date.now(); }
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

function secondsUntil(stamp) {
  if (!stamp) return 0;
  return Math.max(0, (Date.parse(stamp) - Date.now()) / 1000);
}

function problemError(problem, baseUrl) {
  if (problem.code === "fingerprint_mismatch") return new FingerprintMismatch(problem, baseUrl);
  if (problem.code === "stale_lease") return new StaleLease(problem, baseUrl);
  return new HandoffError(problem, baseUrl);
}

function isTimeout(err) {
  return err?.name === "TimeoutError" || err?.name === "AbortError" || err?.cause?.code === "UND_ERR_CONNECT_TIMEOUT";
}

const opPath = (id, verb = "") => `/v1/operations/${encodeURIComponent(id)}${verb ? "/" + verb : ""}`;

function withOptional(body, pairs) {
  for (const [name, value] of Object.entries(pairs)) if (value !== undefined && value !== null) body[name] = value;
  return body;
}

/** Calls one Handoff server with one workflow token. */
export class Client {
  constructor(url, token, { timeoutMs = 30000, worker = "ts-client", fetch = globalThis.fetch, traceContext = () => ({}) } = {}) {
    this.url = url.replace(/\/+$/, "");
    this.token = token;
    this.timeoutMs = timeoutMs;
    this.worker = worker;
    this.fetch = fetch;
    this.traceContext = traceContext;
  }

  /** One request of the wire contract, for the calls without a method of
   * their own; an error answer rejects with a HandoffError, no answer with
   * fetch's error. */
  async request(method, path, body) {
    try {
      return await this.#send(method, path, body);
    } catch (err) {
      throw err instanceof Unavailable ? err.cause : err;
    }
  }

  /** request, rejecting with Unavailable where the request may be re-sent. */
  async #send(method, path, body) {
    let resp;
    try {
      resp = await this.fetch(this.url + path, {
        method,
        headers: { ...this.traceContext(), Authorization: `Bearer ${this.token}`, Accept: "application/json",
          ...(body === undefined ? {} : { "Content-Type": "application/json" }) },
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: AbortSignal.timeout(this.timeoutMs),
      });
    } catch (err) {
      throw new Unavailable(err, null); // no answer: connection refused, reset, timeout
    }
    let text;
    try {
      text = await resp.text();
    } catch (err) {
      throw new Unavailable(err, null);
    }
    if (resp.status >= 400) {
      let problem;
      try { problem = JSON.parse(text); } catch { problem = null; }
      if (!problem || typeof problem !== "object" || !problem.code) {
        problem = { status: resp.status, code: "http_error", detail: text.trim() };
      }
      problem.status ??= resp.status;
      const err = problemError(problem, this.url);
      if ([502, 503, 504].includes(resp.status)) {
        const s = Number.parseInt(resp.headers.get("Retry-After") ?? "", 10);
        throw new Unavailable(err, Number.isFinite(s) && s >= 0 ? s * 1000 : null);
      }
      throw err;
    }
    return text ? JSON.parse(text) : null;
  }

  call(method, path, body) { return this.request(method, path, body); }

  /** POST /v1/operations; with claim ({worker, lease_seconds}) the answer carries the claim or claim_refused. */
  register(key, type, content, { eventId, source, correlationId, causedBy, claim } = {}) {
    return this.call("POST", "/v1/operations", withOptional({ key, type, content },
      { event_id: eventId, source, correlation_id: correlationId, caused_by: causedBy, claim }));
  }

  claim(id, { worker, leaseSeconds } = {}) {
    return this.call("POST", opPath(id, "claim"), withOptional({ worker: worker ?? this.worker }, { lease_seconds: leaseSeconds }));
  }

  begin(id, leaseToken) { return this.call("POST", opPath(id, "begin"), { lease_token: leaseToken }); }

  heartbeat(id, leaseToken, leaseSeconds) {
    return this.call("POST", opPath(id, "heartbeat"), withOptional({ lease_token: leaseToken }, { lease_seconds: leaseSeconds }));
  }

  settle(id, leaseToken, outcome, { result, error } = {}) {
    return this.call("POST", opPath(id, "settle"), withOptional({ lease_token: leaseToken, outcome }, { result, error }));
  }

  get(id) { return this.call("GET", opPath(id)); }

  /** GET /v1/operations; an array value repeats the parameter (state). */
  list(query = {}) {
    const q = new URLSearchParams();
    for (const [k, v] of Object.entries(query)) {
      if (v === undefined || v === null) continue;
      for (const one of Array.isArray(v) ? v : [v]) q.append(k, String(one));
    }
    const s = q.toString();
    return this.call("GET", "/v1/operations" + (s ? "?" + s : ""));
  }

  reconcile(id, found, { result, evidence } = {}) {
    return this.call("POST", opPath(id, "reconcile"), withOptional({ found }, { result, evidence }));
  }

  /** POST /v1/events: one operation per action, keyed <event_id>:<action>. */
  events(eventId, actions, { source, correlationId } = {}) {
    return this.call("POST", "/v1/events", withOptional({ event_id: eventId, actions }, { source, correlation_id: correlationId }));
  }

  event(eventId) { return this.call("GET", `/v1/events/${encodeURIComponent(eventId)}`); }

  /**
   * Runs fn, the one call to the provider, under the key. Registers and
   * claims; if the key completed before, resolves to the stored result
   * (replayed) without calling fn. Otherwise the claim also begins (the
   * two-call lifecycle; separateBegin: true sends begin as its own call) —
   * from here a lost worker means "unknown", never a silent retry — calls fn(ctx) while heartbeating
   * the lease, and settles what fn returned ({ref, data}) or threw (a
   * ProviderError; anything else, a timeout or a lost connection included,
   * settles as unknown_outcome). Rejects with what the settled operation
   * says: RetryLater, OnTheDesk, OutcomeUnknown.
   */
  async run(key, type, content, fn, { eventId, correlationId, causedBy, worker, leaseSeconds, separateBegin } = {}) {
    if (typeof fn !== "function") throw new TypeError(`handoff run: fn must be the function that calls the provider, not ${typeof fn}`);
    const lease = leaseSeconds || 30;
    const claimedAt = Date.now(); // the lease runs from no later than this
    const reg = await this.register(key, type, content, { eventId, correlationId, causedBy,
      claim: { worker: worker ?? this.worker, lease_seconds: lease, begin: !separateBegin } });
    const claim = reg.claim;
    if (!claim) {
      if (reg.state === "completed") {
        return { ref: reg.result?.ref ?? "", data: reg.result?.data, replayed: true, operation: reg };
      }
      throw this.#refusal(reg);
    }
    const id = reg.id;
    const token = claim.lease.token;
    const held = new LeaseClock();
    held.extend(claimedAt, lease);
    if (reg.state !== "action_pending") {
      // Nothing was sent if begin fails: the lease lapses, another worker may claim.
      await this.#leased(held, opPath(id, "begin"), { lease_token: token });
    }
    const ctx = { operationId: id, content: claim.content ?? {}, providerKey: claim.provider_key,
      attempt: claim.attempt?.number ?? 0, leaseToken: token, operation: reg };
    const { value, thrown } = await this.#withHeartbeat(held, id, token, lease, fn, ctx);
    const body = await settleFrom(token, value, thrown);
    // A re-send of a settle whose answer was lost is the same settle: the
    // server answers it as it did (Idempotent-Replayed), so StaleLease here
    // means the lease was lost, never that the settle was kept.
    const settled = await this.#leased(held, opPath(id, "settle"), body);
    return this.#settled(settled, thrown);
  }

  /**
   * One line per side effect: operation("email.send", { key: "welcome:{user}" }, fn)
   * returns a function of one argument, an object, which becomes the
   * content; the key is the template with each {name} replaced by that
   * member, or key(input) when key is a function. The wrapped function runs
   * the protocol and resolves to the Result (replayed when the key had
   * completed before); fn gets the Context and the claimed snapshot (the
   * approved content). The content and the key are worked out before any
   * request: a member a template names that is missing, or an input that is
   * not a plain object, rejects at once.
   */
  operation(type, { key, ...options }, fn) {
    if (typeof fn !== "function") throw new TypeError(`handoff operation ${type}: fn must be a function`);
    if (typeof key !== "string" && typeof key !== "function") {
      throw new TypeError(`handoff operation ${type}: key must be a template string or a function of the input`);
    }
    return async (input) => {
      if (input === null || typeof input !== "object" || Array.isArray(input)) {
        throw new TypeError(`handoff operation ${type}: the input must be an object, the content`);
      }
      const content = JSON.parse(JSON.stringify(input)); // the content as the server will see it
      const k = typeof key === "function" ? key(input) : key.replace(/\{([^{}]+)\}/g, (_, name) => {
        const v = input[name];
        if (v === undefined || v === null || typeof v === "object") {
          throw new TypeError(`handoff operation ${type}: the key template names ${name}, which the input has no text for`);
        }
        return String(v);
      });
      if (typeof k !== "string" || k === "") throw new TypeError(`handoff operation ${type}: the key must be a non-empty string`);
      return this.run(k, type, content, (ctx) => fn(ctx, ctx.content), options);
    };
  }

  /** A POST that rides out a short outage while the lease lasts. */
  async #leased(held, path, body) {
    let backoff = RETRY_FIRST;
    for (;;) {
      try {
        return await this.#send("POST", path, body);
      } catch (err) {
        if (!(err instanceof Unavailable)) throw err;
        let wait = Math.random() * backoff + 1;
        backoff = Math.min(2 * backoff, RETRY_MAX);
        if (err.retryAfterMs !== null) wait = err.retryAfterMs;
        wait = Math.min(wait, RETRY_MAX + 1000);
        if (held.left() <= wait) throw err.cause; // the lease ends first: a retry could only be refused
        await sleep(wait);
      }
    }
  }

  async #withHeartbeat(held, id, token, lease, fn, ctx) {
    let done = false;
    let timer;
    const beat = async () => {
      const sent = Date.now();
      try {
        await this.#leased(held, opPath(id, "heartbeat"), { lease_token: token, lease_seconds: lease });
        held.extend(sent, lease);
      } catch {
        // the settle will say whether the lease still holds
      }
      if (!done) timer = setTimeout(beat, (lease * 1000) / 3);
    };
    timer = setTimeout(beat, (lease * 1000) / 3);
    try {
      return { value: await fn(ctx), thrown: undefined };
    } catch (err) {
      return { value: undefined, thrown: err ?? new Error("fn threw " + String(err)) };
    } finally {
      done = true;
      clearTimeout(timer);
    }
  }

  #refusal(op) {
    const refused = op.claim_refused ?? {};
    const reason = refused.reason ?? "";
    const problem = { status: 409, code: "not_claimable", reason, detail: refused.detail || "not claimable", operation: op };
    switch (reason) {
      case "in_progress": return new InProgress(problem, this.url, secondsUntil(op.lease?.expires_at));
      case "retry_later": return new RetryLater(problem, this.url, refused.retry_after_seconds || secondsUntil(op.next_retry_at));
      case "awaiting_approval": return new AwaitingApproval(problem, this.url);
      case "cancelled": return new Cancelled(problem, this.url);
    }
    if (op.state === "unknown_outcome") return new OutcomeUnknown(problem, this.url);
    if (op.state === "failed_terminal") return new OnTheDesk(problem, this.url);
    return new HandoffError(problem, this.url);
  }

  #settled(op, thrown) {
    if (op.state === "completed") {
      return { ref: op.result?.ref ?? "", data: op.result?.data, replayed: false, operation: op };
    }
    const problem = { status: 200, code: "settled", reason: op.state, detail: op.last_error?.message ?? "", operation: op };
    const options = thrown === undefined ? undefined : { cause: thrown };
    switch (op.state) {
      case "failed_retryable": throw new RetryLater(problem, this.url, secondsUntil(op.next_retry_at), options);
      case "unknown_outcome": throw new OutcomeUnknown(problem, this.url, options);
      case "failed_terminal": throw new OnTheDesk(problem, this.url, options);
    }
    throw new HandoffError(problem, this.url, options);
  }
}

/** The settle body for what fn returned or threw. */
async function settleFrom(token, value, thrown) {
  if (thrown === undefined) {
    return { lease_token: token, outcome: "completed", result: await answerResult(value) };
  }
  if (thrown instanceof NotSent) {
    return { lease_token: token, outcome: "failed_retryable",
      error: { class: "config", code: "not_sent", message: thrown.message || "the provider was not called" } };
  }
  if (thrown instanceof ProviderError) {
    return { lease_token: token, outcome: "failed_retryable", error: { class: thrown.class_, code: thrown.code,
      message: thrown.providerMessage, retry_after_seconds: Math.floor(thrown.retryAfter) } };
  }
  // No answer from the provider, or the worker failed after begin: the
  // provider may have acted, so this is never reported as a failure.
  return { lease_token: token, outcome: "unknown_outcome",
    error: { class: isTimeout(thrown) ? "timeout" : "unknown", message: String(thrown?.message ?? thrown) || "error" } };
}

/**
 * The settled result for what fn returned — it returned, so the side effect
 * is completed and the answer is kept. The ref is, in order: the answer
 * itself when it is a non-empty string; its ref; its id (a string or a
 * number, as text); else "sha256:" and the first 32 hex digits of the
 * SHA-256 of the answer's canonical JSON (canonicalJSON). The data is the
 * answer's data when the answer is {ref, data} or a part of it, else the
 * whole answer.
 */
export async function answerResult(value) {
  let answer = value === undefined ? null : JSON.parse(JSON.stringify(value) ?? "null");
  if (typeof answer === "string" && answer !== "") return { ref: answer };
  const result = {};
  const isObject = answer !== null && typeof answer === "object" && !Array.isArray(answer);
  if (isObject && Object.keys(answer).every((k) => k === "ref" || k === "data")) {
    if (answer.data !== undefined && answer.data !== null) result.data = answer.data;
    if (answer.ref === undefined || answer.ref === null || answer.ref === "") {
      const { ref: _ignored, ...rest } = answer; // a missing ref is no part of the answer
      answer = rest;
    }
  } else if (answer !== null) {
    result.data = answer;
  }
  const ref = isObject ? refText(answer.ref) ?? refText(answer.id) : null;
  return { ref: ref ?? await derivedRef(answer), ...result };
}

function refText(v) {
  if (typeof v === "string" && v !== "") return v;
  if (typeof v === "number" && Number.isFinite(v)) return JSON.stringify(v);
  return null;
}

/** "sha256:" and the first 32 hex digits of the SHA-256 of the answer's
 * canonical JSON: the ref of an answer that names none, the same in the Go,
 * Python and TypeScript clients. */
export async function derivedRef(answer) {
  const bytes = new TextEncoder().encode(canonicalJSON(answer));
  let hex;
  if (globalThis.crypto?.subtle) {
    const sum = new Uint8Array(await globalThis.crypto.subtle.digest("SHA-256", bytes));
    hex = Array.from(sum, (b) => b.toString(16).padStart(2, "0")).join("");
  } else {
    const { createHash } = await import("node:crypto");
    hex = createHash("sha256").update(bytes).digest("hex");
  }
  return "sha256:" + hex.slice(0, 32);
}

/** JSON with object members sorted by key (in UTF-16 code units), no
 * whitespace, strings as JSON.stringify escapes them. */
export function canonicalJSON(v) {
  if (Array.isArray(v)) return "[" + v.map((e) => canonicalJSON(e === undefined ? null : e)).join(",") + "]";
  if (v !== null && typeof v === "object") {
    return "{" + Object.keys(v).filter((k) => v[k] !== undefined).sort()
      .map((k) => JSON.stringify(k) + ":" + canonicalJSON(v[k])).join(",") + "}";
  }
  return JSON.stringify(v) ?? "null";
}
