// The client sends the caller's W3C trace context with every request.
import { test } from "node:test";
import assert from "node:assert/strict";
import { Client } from "../src/index.js";

const TRACEPARENT = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";

test("the trace context goes with every request", async () => {
  const seen = [];
  const fetch = async (url, init) => {
    seen.push(init.headers);
    return new Response(JSON.stringify({ kind: "workflow" }), { status: 200, headers: { "Content-Type": "application/json" } });
  };
  await new Client("http://handoff.test", "tok", { fetch, traceContext: () => ({ traceparent: TRACEPARENT }) }).request("GET", "/v1/whoami");
  assert.equal(seen[0].traceparent, TRACEPARENT);
  assert.equal(seen[0].Authorization, "Bearer tok");
  await new Client("http://handoff.test", "tok", { fetch }).request("GET", "/v1/whoami");
  assert.equal(seen[1].traceparent, undefined);
});
