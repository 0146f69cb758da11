// The clients guide's "From TypeScript" example, run as a reader would: a completed
// operation, then a replay that does not call the provider again.

import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { repo, startEnv } from "./env.mjs";

const example = join(repo, "sdk/typescript/examples/quickstart.mjs");
let env;
before(async () => { env = await startEnv(join(repo, "cards/examples/cards.yaml")); });
after(async () => { await env?.stop(); });

test("the clients guide shows the example", () => {
  const guide = readFileSync(join(repo, "docs/guides/clients.md"), "utf8");
  const section = guide.split("## From TypeScript")[1]?.split("\n## ")[0] ?? "";
  const block = /```js\n([\s\S]*?)```/.exec(section);
  assert.ok(block, "no js block under From TypeScript");
  assert.equal(block[1], readFileSync(example, "utf8"));
});

test("the example completes, then replays", () => {
  const run = () => execFileSync(process.execPath, [example], { encoding: "utf8",
    env: { ...process.env, HANDOFF_URL: env.url, HANDOFF_TOKEN: env.token, SANDBOX_URL: env.sandbox } }).trim();
  const first = run();
  const second = run();
  const ref = first.split(" ")[0];
  assert.equal(first, `${ref} (first run)`);
  assert.equal(second, `${ref} (replayed: the provider was not called)`);
});
