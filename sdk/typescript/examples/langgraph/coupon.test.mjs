// The LangGraph interrupt/resume on the real graph runtime and its in-memory
// checkpointer, counted at the sandbox provider: two coupons without
// Handoff, one with it.

import assert from "node:assert/strict";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { after, before, test } from "node:test";
import { Command, MemorySaver } from "@langchain/langgraph";
import { Client } from "@opshandoff/handoff";
import { startEnv } from "../../test/env.mjs";
import { couponGraph, issueDirectly, issueWithHandoff } from "./coupon.mjs";

let env;
before(async () => { env = await startEnv(join(dirname(fileURLToPath(import.meta.url)), "cards.yaml")); });
after(async () => { await env?.stop(); });

async function executions(key) {
  const resp = await fetch(`${env.sandbox}/executions?key=${encodeURIComponent(key)}`);
  return (await resp.json()).executions;
}

/** Runs the graph to its interrupt, then resumes it with the approved email. */
async function interruptThenResume(issueCoupon, thread) {
  const graph = couponGraph(issueCoupon).compile({ checkpointer: new MemorySaver() });
  const config = { configurable: { thread_id: thread } };
  const paused = await graph.invoke({ customer: thread, campaign: "spring" }, config);
  assert.equal(paused.__interrupt__?.length, 1, "the graph stops at the interrupt");
  assert.match(paused.__interrupt__[0].value.draft, /your code is sbx_/);
  return graph.invoke(new Command({ resume: "approved text" }), config);
}

test("without Handoff, resuming the node issues a second coupon", async () => {
  const done = await interruptThenResume(issueDirectly(env.sandbox), "c_direct");
  assert.equal(done.email, "approved text");
  assert.equal(await executions("coupon:c_direct:spring"), 2);
});

test("with Handoff, the resumed node gets the first coupon back", async () => {
  const client = new Client(env.url, env.token);
  const calls = [];
  const issue = issueWithHandoff(client, env.sandbox);
  const done = await interruptThenResume(async (...args) => {
    const r = await issue(...args);
    calls.push(r);
    return r;
  }, "c_handoff");
  assert.equal(done.email, "approved text");
  assert.deepEqual(calls.map((r) => r.replayed), [false, true], "the node ran twice; the second run was a replay");
  assert.equal(calls[1].ref, calls[0].ref);
  assert.equal(done.coupon, calls[0].ref);
  assert.equal(done.replayed, true);
  assert.equal(await executions(calls[0].operation.provider_key), 1);
});
