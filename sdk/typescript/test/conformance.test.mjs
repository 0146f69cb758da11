// The wire scenarios of sdk/conformance/scenarios.json, through Client.run;
// every answer the client received must fit the server's OpenAPI document.

import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { Client, HandoffError, NotSent, ProviderError } from "@opshandoff/handoff";
import { openAPIDocument, repo, startEnv } from "./env.mjs";
import { answerValidator, recordingFetch } from "./openapi-validator.mjs";

const { scenarios } = JSON.parse(readFileSync(join(repo, "sdk/conformance/scenarios.json"), "utf8"));
const run = `ts-${Date.now()}`;

async function http(method, url, body) {
  const resp = await fetch(url, { method, headers: { "Content-Type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body) });
  assert.equal(resp.status, 200, `${method} ${url}`);
  return resp.json();
}

/** fn for client.run: what the scenario says the provider call does, and
 * what it returns. (Every TypeScript fn may be async: coroutine is a Python
 * matter.) */
function providerCall(sandbox, spec) {
  const fn = async (ctx) => {
    fn.calls++;
    if (spec.not_sent) throw new NotSent(spec.not_sent);
    if (spec.sleep_ms) await new Promise((r) => setTimeout(r, spec.sleep_ms));
    if (spec.fail) {
      const f = spec.fail;
      throw new ProviderError(f.class, f.code ?? "", f.message ?? "", f.retry_after_seconds ?? 0);
    }
    const x = spec.execute;
    const resp = await fetch(sandbox + "/execute", {
      method: "POST",
      headers: { "Content-Type": "application/json", ...(x.fault ? { "Sandbox-Fault": x.fault } : {}) },
      body: JSON.stringify({ key: ctx.providerKey, params: ctx.content }),
      signal: AbortSignal.timeout(x.timeout_ms ?? 10000), // a timeout propagates: the outcome is unknown
    });
    const answer = await resp.json();
    fn.providerRef = answer.ref;
    if ("returns" in spec) return spec.returns;
    if (spec.answer === "string") return answer.ref;
    if (spec.answer === "id") return { id: answer.ref };
    return { ref: answer.ref, data: { executions: answer.executions } };
  };
  fn.calls = 0;
  return fn;
}

describe("conformance", () => {
  let env;
  let check;
  const answers = [];
  before(async () => {
    env = await startEnv();
    check = answerValidator(await openAPIDocument(env));
  });
  after(async () => { await env?.stop(); });

  for (const sc of scenarios) {
    test(sc.name, { skip: sc.clients && !sc.clients.includes("typescript") }, async () => {
      const client = new Client(env.url, env.token, { timeoutMs: 10000, fetch: recordingFetch(answers) });
      const key = `conf:${run}:${sc.name}`;
      let opKey = key;
      await http("DELETE", env.faults);
      let firstRef = null;
      for (const [i, step] of sc.steps.entries()) {
        if (step.fault) {
          await http("POST", env.faults, step.fault);
        } else if (step.claim_elsewhere) {
          await client.register(key, sc.type, sc.content,
            { claim: { worker: "elsewhere", lease_seconds: step.claim_elsewhere.lease_seconds } });
        } else if (step.run) {
          const want = step.expect;
          const fn = providerCall(env.sandbox, step.run.provider);
          let outcome = "completed";
          let result = null;
          let err = null;
          const content = step.run.content ?? sc.content;
          try {
            if (step.run.form === "operation") {
              // The wrapper: the content is the input, the key a template of it.
              opKey = `${key}:${content.customer}`;
              const wrapped = client.operation(sc.type, { key: `${key}:{customer}`, leaseSeconds: step.run.lease_seconds },
                (ctx, snapshot) => {
                  assert.deepEqual(snapshot, ctx.content);
                  return fn(ctx);
                });
              result = await wrapped(content);
            } else {
              result = await client.run(key, sc.type, content, fn, { leaseSeconds: step.run.lease_seconds });
            }
          } catch (e) {
            if (!(e instanceof HandoffError)) throw e;
            outcome = e.constructor.name === "InProgress" ? "RetryLater" : e.constructor.name;
            err = e;
          }
          assert.equal(outcome, want.outcome, `step ${i}: ${err}`);
          if ("fn_calls" in want) assert.equal(fn.calls, want.fn_calls, `step ${i}: fn calls`);
          if ("replayed" in want) assert.equal(result.replayed, want.replayed, `step ${i}: replayed`);
          if ("ref" in want) assert.equal(result.ref, want.ref, `step ${i}: ref`);
          if (want.ref_is_provider) assert.ok(fn.providerRef && result.ref === fn.providerRef, `step ${i}: the provider's ref`);
          if (result) {
            if (firstRef === null) firstRef = result.ref;
            else if (want.same_ref) assert.equal(result.ref, firstRef);
          }
          if ("reason" in want) assert.equal(err.reason, want.reason);
          if ("code" in want) {
            assert.deepEqual([err.status, err.code, err.problem.code], [want.status, want.code, want.code]);
          }
          if ("retry_after_min" in want) assert.ok(err.retryAfter >= want.retry_after_min, `retry after ${err.retryAfter}`);
          if (outcome === "OutcomeUnknown" || outcome === "OnTheDesk") {
            assert.equal(err.deskUrl, `${env.url}/desk/operations/${err.operationId}`);
          }
        }
      }
      const { items } = await client.list({ key: opKey });
      assert.equal(items.length, 1);
      let op = items[0];
      for (const deadline = Date.now() + 5000; op.state !== sc.state && Date.now() < deadline;) {
        await new Promise((r) => setTimeout(r, 100));
        op = await client.get(op.id);
      }
      assert.equal(op.state, sc.state);
      // Read back as a person would see it, so those answers are checked too.
      const timeline = await client.request("GET", `/v1/operations/${op.id}/timeline`);
      if ("timeline" in sc) assert.deepEqual(timeline.items.map((e) => e.action), sc.timeline, "the timeline's actions");
      await client.request("GET", `/v1/operations/${op.id}/attempts`);
      const count = await http("GET", `${env.sandbox}/executions?key=${op.provider_key}`);
      assert.equal(count.executions, sc.executions, "the sandbox's executions");
      if ("faults_hit" in sc) assert.equal((await http("GET", env.faults)).hits, sc.faults_hit);
      if ("settles_replayed" in sc) {
        assert.equal((await http("GET", env.faults)).settles_replayed, sc.settles_replayed, "settles answered as replays");
      }
    });
  }

  test("the check refuses an answer the document does not allow", () => {
    const answer = { method: "GET", url: `${env.url}/v1/operations/op_x`, status: 200, contentType: "application/json" };
    assert.match(check({ ...answer, text: JSON.stringify({ id: 7 }) }) ?? "", /must/);
    assert.match(check({ ...answer, status: 418, text: "{}" }) ?? "", /not documented/);
  });

  test("every answer fits the server's OpenAPI document", () => {
    assert.ok(answers.length >= 30, `only ${answers.length} answers recorded`);
    const wrong = answers.map(check).filter(Boolean);
    assert.deepEqual(wrong, []);
  });
});
