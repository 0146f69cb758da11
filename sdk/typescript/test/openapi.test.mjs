// The server's OpenAPI document is fit to generate from: the committed types
// are what openapi-typescript makes of it today, and Redocly's recommended
// ruleset finds no error in it.

import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { after, before, test } from "node:test";
import { render } from "../scripts/render.mjs";
import { openAPIDocument, startEnv } from "./env.mjs";

const pkg = join(dirname(fileURLToPath(import.meta.url)), "..");
let env;
let doc;
before(async () => {
  env = await startEnv();
  doc = await openAPIDocument(env);
});
after(async () => { await env?.stop(); });

test("src/openapi.d.ts is generated from the server's current document (npm run generate)", async () => {
  assert.equal(readFileSync(join(pkg, "src/openapi.d.ts"), "utf8"), await render(doc));
});

test("free-form objects are typed as objects of any members, not Record<string, never>", () => {
  const types = readFileSync(join(pkg, "src/openapi.d.ts"), "utf8");
  const content = /RegisterRequest: \{[\s\S]*?content: ([^;]+);/.exec(types);
  assert.ok(content, "RegisterRequest.content not found");
  assert.match(content[1], /\[key: string\]: unknown/);
});

test("Redocly's recommended ruleset reports no error", () => {
  const dir = mkdtempSync(join(tmpdir(), "handoff-lint-"));
  try {
    const file = join(dir, "openapi.json");
    writeFileSync(file, JSON.stringify(doc, null, 1));
    let out;
    try {
      out = execFileSync(join(pkg, "node_modules/.bin/redocly"), ["lint", "--extends=recommended", "--format=json", file],
        { env: { ...process.env, REDOCLY_TELEMETRY: "off", REDOCLY_SUPPRESS_UPDATE_NOTICE: "true" },
          stdio: ["ignore", "pipe", "ignore"] }).toString();
    } catch (err) {
      out = err.stdout?.toString() ?? ""; // exits 1 on errors; the report says which
    }
    const report = JSON.parse(out);
    const errors = report.problems.filter((p) => p.severity === "error").map((p) => `${p.ruleId}: ${p.message}`);
    assert.deepEqual(errors, []);
    assert.equal(report.totals.errors, 0);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
