// The wrapper form's checks before any request, and the derived ref.

import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { answerResult, canonicalJSON, Client } from "@opshandoff/handoff";
import { startEnv } from "./env.mjs";

let env;
before(async () => { env = await startEnv(); });
after(async () => { await env?.stop(); });

const forwarded = async () => (await (await fetch(env.faults)).json()).forwarded;

test("operation works out the content and the key before any request", async () => {
  await fetch(env.faults, { method: "DELETE" });
  const client = new Client(env.url, env.token);
  const run = `tsforms-${Date.now()}`;
  let calls = 0;
  const charge = client.operation("conf.task", { key: `${run}:{customer}` }, async (ctx, content) => {
    calls++;
    return { ref: `ch_${content.customer}`, data: { amount: content.amount } };
  });
  await assert.rejects(charge({ amount: 1 }), /names customer/);
  await assert.rejects(charge(null), /must be an object/);
  await assert.rejects(client.run(`${run}:x`, "conf.task", {}, undefined), TypeError);
  assert.equal(await forwarded(), 0);
  const first = await charge({ customer: "t_1", amount: 100 });
  const again = await charge({ customer: "t_1", amount: 100 });
  assert.deepEqual([first.ref, first.data, first.replayed], ["ch_t_1", { amount: 100 }, false]);
  assert.deepEqual([again.ref, again.replayed, calls], ["ch_t_1", true, 1]);
  assert.equal(first.operation.key, `${run}:t_1`);
  const byFunction = client.operation("conf.task", { key: (input) => `${run}:fn:${input.customer}` }, () => "ref_fn");
  assert.equal((await byFunction({ customer: "t_2" })).operation.key, `${run}:fn:t_2`);
});

test("answerResult: the ref in the order the three clients share", async () => {
  const cases = [
    ["pay_1", "pay_1", undefined],
    [{ ref: "pay_2", data: { a: 1 } }, "pay_2", { a: 1 }],
    [{ id: "tsk_3", title: "t" }, "tsk_3", { id: "tsk_3", title: "t" }],
    [{ id: 42 }, "42", { id: 42 }],
    [{ ref: "", data: { status: "sent", count: 2 } }, "sha256:05c0c613efdcd4d633d648b65ae10045", { status: "sent", count: 2 }],
    [{ data: { status: "sent", count: 2 } }, "sha256:05c0c613efdcd4d633d648b65ae10045", { status: "sent", count: 2 }],
    [{}, "sha256:44136fa355b3678a1146ad16f7e8649e", undefined],
    [undefined, "sha256:74234e98afe7498fb5daf1f36ac2d78a", undefined],
  ];
  for (const [answer, ref, data] of cases) {
    const got = await answerResult(answer);
    assert.deepEqual([got.ref, got.data], [ref, data], JSON.stringify(answer));
  }
  // the cases of client/do_test.go's TestCanonicalJSON
  assert.equal(canonicalJSON({ b: 1, a: [true, null, "x"] }), '{"a":[true,null,"x"],"b":1}');
  assert.equal(canonicalJSON({ s: "<é>\u2028\n\u0001\"\\" }), '{"s":"<é>\u2028\\n\\u0001\\"\\\\"}');
  assert.equal(canonicalJSON({ "\u{1F600}": 1, "\uff61": 2 }), '{"\u{1F600}":1,"\uff61":2}');
});
