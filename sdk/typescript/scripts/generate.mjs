// Generates src/openapi.d.ts from the OpenAPI document the server serves:
// the request and response types cannot drift from the server, and a test
// (test/generated.test.mjs) fails when the committed file is stale.

import { writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { openAPIDocument, startEnv } from "../test/env.mjs";
import { render } from "./render.mjs";

const env = await startEnv();
try {
  const out = join(dirname(fileURLToPath(import.meta.url)), "../src/openapi.d.ts");
  writeFileSync(out, await render(await openAPIDocument(env)));
  console.log("wrote", out);
} finally {
  await env.stop();
}
