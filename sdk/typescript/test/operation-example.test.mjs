// The package README's example, run as a reader would: a completed
// operation, then a replay that does not call the provider again.

import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { repo, startEnv } from "./env.mjs";

const example = join(repo, "sdk/typescript/examples/operation.mjs");
let env;
before(async () => { env = await startEnv(join(repo, "cards/examples/cards.yaml")); });
after(async () => { await env?.stop(); });

test("the package README shows the example", () => {
  const readme = readFileSync(join(repo, "sdk/typescript/README.md"), "utf8");
  const block = /```js\n([\s\S]*?)```/.exec(readme);
  assert.equal(block?.[1], readFileSync(example, "utf8"));
});

test("the example completes, then replays", () => {
  const run = () => execFileSync(process.execPath, [example], { encoding: "utf8",
    env: { ...process.env, HANDOFF_URL: env.url, HANDOFF_TOKEN: env.token, SANDBOX_URL: env.sandbox } }).trim();
  const first = run();
  const ref = first.split(" ")[0];
  assert.equal(first, `${ref} (first run)`);
  assert.equal(run(), `${ref} (replayed)`);
});
