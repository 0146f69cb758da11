// The client's types. The wire shapes come from src/openapi.d.ts, generated
// from the server's own OpenAPI document (npm run generate).

import type { components } from "./openapi.js";

type Schemas = components["schemas"];
export type Operation = Schemas["Operation"];
export type OperationList = Schemas["OperationList"];
export type RegisterRequest = Schemas["RegisterRequest"];
export type RegisterResponse = Schemas["RegisterResponse"];
export type ClaimResponse = Schemas["ClaimResponse"];
export type SettleRequest = Schemas["SettleRequest"];
export type ReconcileRequest = Schemas["ReconcileRequest"];
export type EventRequest = Schemas["EventRequest"];
export type Event = Schemas["Event"];
export type Problem = Schemas["Problem"];
/** The content of an operation: a JSON object. */
export type Content = RegisterRequest["content"];
export type ErrorClass = NonNullable<SettleRequest["error"]>["class"];
export type { components, paths } from "./openapi.js";

export interface ClientOptions {
  /** One request's bound, in milliseconds (default 30000). */
  timeoutMs?: number;
  /** The worker's name in claims (default "ts-client"). */
  worker?: string;
  /** The fetch to use (default the global one). */
  fetch?: typeof fetch;
  /** The caller's W3C trace context headers (traceparent, tracestate),
   * sent with every request so the workflow's trace holds the server's
   * spans; with OpenTelemetry:
   * `() => { const h = {}; propagation.inject(context.active(), h); return h; }`. */
  traceContext?: () => Record<string, string>;
}

/** What the function run calls gets. */
export interface Context {
  operationId: string;
  /** The approved content snapshot to execute. */
  content: Content;
  /** Send it to the provider as its idempotency key. */
  providerKey: string;
  attempt: number;
  leaseToken: number;
  operation: RegisterResponse;
}

/** What the provider did: its reference and whatever later readers need. */
export interface ProviderResult {
  ref: string;
  data?: unknown;
}

/**
 * What fn may return. It returned, so the side effect is settled completed
 * with the answer kept; the ref is the answer when it is a string, else its
 * ref, else its id, else derived from the answer (see answerResult).
 */
export type Answer = ProviderResult | string | { id: string | number; [member: string]: unknown } | Record<string, unknown> | null | void;

export interface Result extends ProviderResult {
  /** The key had completed before; fn was not called. */
  replayed: boolean;
  operation: Operation | RegisterResponse;
}

export interface RunOptions {
  eventId?: string;
  correlationId?: string;
  /** The key of the operation whose side effect triggered this one. */
  causedBy?: string;
  worker?: string;
  leaseSeconds?: number;
  /** Send begin as its own call after the claim (the three-call lifecycle), for work between claim and provider call. */
  separateBegin?: boolean;
}

export interface OperationOptions<I> extends RunOptions {
  /** "welcome:{user}" (each {name} the input's member), or a function of the input. */
  key: string | ((input: I) => string);
}

/** The settled result for what fn returned: the ref, in order, the answer
 * itself when a non-empty string, its ref, its id, else derivedRef(answer). */
export function answerResult(answer: unknown): Promise<ProviderResult>;
/** "sha256:" and the first 32 hex digits of the SHA-256 of canonicalJSON(answer). */
export function derivedRef(answer: unknown): Promise<string>;
/** JSON with members sorted by key, no whitespace: what a derived ref hashes. */
export function canonicalJSON(value: unknown): string;

export class Client {
  constructor(url: string, token: string, options?: ClientOptions);
  readonly url: string;
  run(key: string, type: string, content: Content, fn: (ctx: Context) => Answer | Promise<Answer>,
    options?: RunOptions): Promise<Result>;
  /** One line per side effect: a function of the content (an object) that
   * runs fn under the key — a template whose {name} is the input's member,
   * or a function of the input — and resolves to the Result. */
  operation<I extends Record<string, unknown>>(type: string, options: OperationOptions<I>,
    fn: (ctx: Context, content: I) => Answer | Promise<Answer>): (input: I) => Promise<Result>;
  register(key: string, type: string, content: Content, options?: {
    eventId?: string; source?: string; correlationId?: string; causedBy?: string;
    claim?: NonNullable<RegisterRequest["claim"]>;
  }): Promise<RegisterResponse>;
  claim(id: string, options?: { worker?: string; leaseSeconds?: number }): Promise<ClaimResponse>;
  begin(id: string, leaseToken: number): Promise<Operation>;
  heartbeat(id: string, leaseToken: number, leaseSeconds?: number): Promise<Operation>;
  settle(id: string, leaseToken: number, outcome: SettleRequest["outcome"],
    body?: { result?: SettleRequest["result"]; error?: SettleRequest["error"] }): Promise<Operation>;
  get(id: string): Promise<Operation>;
  list(query?: Record<string, string | number | string[] | undefined>): Promise<OperationList>;
  reconcile(id: string, found: boolean, body?: { result?: ReconcileRequest["result"]; evidence?: ReconcileRequest["evidence"] }): Promise<Operation>;
  events(eventId: string, actions: EventRequest["actions"], options?: { source?: string; correlationId?: string }): Promise<Event>;
  event(eventId: string): Promise<Event>;
  /** One request of the wire contract, for the calls without a method of their own;
   * an error answer rejects with a HandoffError, no answer with fetch's error. */
  request(method: string, path: string, body?: unknown): Promise<unknown>;
}

/** What the provider said, thrown by the function run calls. */
export class ProviderError extends Error {
  constructor(class_: ErrorClass, code?: string, message?: string, retryAfter?: number);
  class_: ErrorClass;
  code: string;
  providerMessage: string;
  /** The provider's Retry-After, in seconds. */
  retryAfter: number;
}

/** Thrown by fn when it stopped before it could have called the provider:
 * the attempt is settled failed (not_sent) and the lease released at once. */
export class NotSent extends Error {
  constructor(message?: string, options?: ErrorOptions);
}

/** A problem answer, or an outcome that is not a result; problem is the document. */
export class HandoffError extends Error {
  constructor(problem: Partial<Problem> & Record<string, unknown>, baseUrl?: string, options?: ErrorOptions);
  problem: Partial<Problem> & Record<string, unknown>;
  status: number | null;
  code: string;
  reason: string;
  detail: string;
  operation: Operation | null;
  operationId: string | null;
  deskUrl: string | null;
}
export class FingerprintMismatch extends HandoffError {}
export class StaleLease extends HandoffError {}
export class RetryLater extends HandoffError {
  constructor(problem: Partial<Problem> & Record<string, unknown>, baseUrl?: string, retryAfter?: number, options?: ErrorOptions);
  /** Seconds to wait before running again. */
  retryAfter: number;
}
export class InProgress extends RetryLater {}
export class AwaitingApproval extends HandoffError {}
export class OnTheDesk extends HandoffError {}
export class OutcomeUnknown extends OnTheDesk {}
export class Cancelled extends HandoffError {}
