// Starts the conformance environment (sdk/conformance/env): the real handoff
// binary, the sandbox provider and the fault proxy. HANDOFF_BIN and
// HANDOFF_CONFORMANCE_ENV name prebuilt binaries; otherwise both are built
// from the repository. HANDOFF_TEST_POSTGRES runs the server on PostgreSQL.

import { execFileSync, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";

export const repo = resolve(dirname(fileURLToPath(import.meta.url)), "../../..");

function build(envVar, out, pkg) {
  if (process.env[envVar]) return process.env[envVar];
  execFileSync("go", ["build", "-o", out, pkg], { cwd: repo, stdio: ["ignore", "inherit", "inherit"] });
  return out;
}

/** Resolves to {url, server, sandbox, token, faults, stop()}; cards is the
 * operation types' file, by default the conformance scenarios' own. */
export async function startEnv(cards = join(repo, "sdk/conformance/cards.yaml")) {
  const tmp = mkdtempSync(join(tmpdir(), "handoff-ts-"));
  const handoff = build("HANDOFF_BIN", join(tmp, "handoff"), "./cmd/handoff");
  const envBin = build("HANDOFF_CONFORMANCE_ENV", join(tmp, "conformance-env"), "./sdk/conformance/env");
  const proc = spawn(envBin, ["-handoff", handoff, "-cards", cards],
    { stdio: ["pipe", "pipe", "pipe"] });
  let log = "";
  proc.stderr.on("data", (d) => { log += d; });
  const line = await new Promise((resolveLine, reject) => {
    const rl = createInterface({ input: proc.stdout });
    rl.once("line", resolveLine);
    proc.once("exit", (code) => reject(new Error(`the conformance environment exited ${code}:\n${log}`)));
  });
  const env = JSON.parse(line);
  env.log = () => log;
  env.stop = async () => {
    proc.stdin.end();
    await new Promise((r) => (proc.exitCode !== null ? r() : proc.once("exit", r)));
    rmSync(tmp, { recursive: true, force: true });
  };
  return env;
}

/** The server's own OpenAPI document. */
export async function openAPIDocument(env) {
  const resp = await fetch(env.server + "/v1/openapi.json");
  return resp.json();
}
