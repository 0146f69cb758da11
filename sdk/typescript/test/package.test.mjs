// The package a user installs: what npm pack puts in it, and that the
// installed copy loads with import and with require on this Node.

import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, test } from "node:test";
import { repo } from "./env.mjs";

const pkgDir = join(repo, "sdk/typescript");
const pkg = JSON.parse(readFileSync(join(pkgDir, "package.json"), "utf8"));
const tmp = mkdtempSync(join(tmpdir(), "handoff-pack-"));
after(() => rmSync(tmp, { recursive: true, force: true }));

const npm = (...args) => execFileSync("npm", args, { cwd: pkgDir, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });

test("npm pack carries the README, the CHANGELOG, the LICENSE and both builds", () => {
  const [packed] = JSON.parse(npm("pack", "--dry-run", "--json"));
  const files = packed.files.map((f) => f.path);
  for (const f of ["README.md", "CHANGELOG.md", "LICENSE", "package.json", "src/index.js", "src/index.d.ts",
    "dist/cjs/index.js", "dist/cjs/package.json", "dist/cjs/index.d.ts"]) {
    assert.ok(files.includes(f), `${f} is not in the package: ${files.join(", ")}`);
  }
  assert.ok(!files.some((f) => f.startsWith("test/") || f.startsWith("node_modules/")), files.join(", "));
  assert.equal(pkg.license, "Apache-2.0");
  assert.equal(readFileSync(join(pkgDir, "LICENSE"), "utf8"), readFileSync(join(repo, "LICENSE"), "utf8"),
    "the package's LICENSE is the repository's");
  assert.match(readFileSync(join(pkgDir, "CHANGELOG.md"), "utf8"), new RegExp(`^## ${pkg.version.replaceAll(".", "\\.")}$`, "m"));
});

test("the installed package loads with import and with require", () => {
  const node = Number(process.versions.node.split(".")[0]);
  const oldest = Number(/^>=(\d+)/.exec(pkg.engines.node)?.[1]);
  assert.ok(node >= oldest, `node ${process.version} is older than engines ${pkg.engines.node}`);
  const [packed] = JSON.parse(npm("pack", "--json", "--pack-destination", tmp));
  const app = join(tmp, "app");
  const installed = join(app, "node_modules/@opshandoff/handoff");
  mkdirSync(installed, { recursive: true });
  execFileSync("tar", ["-xzf", join(tmp, packed.filename), "-C", installed, "--strip-components=1"]);
  const probe = `const c = new h.Client("http://127.0.0.1:1", "t");
    if (typeof c.run !== "function" || typeof c.operation !== "function" || typeof h.NotSent !== "function") throw new Error("missing exports");
    h.answerResult({}).then((r) => console.log(r.ref));`;
  const run = (args) => execFileSync(process.execPath, args, { cwd: app, encoding: "utf8" }).trim();
  const viaRequire = run(["-e", `const h = require("@opshandoff/handoff");
    if (!require.resolve("@opshandoff/handoff").endsWith("dist/cjs/index.js")) throw new Error("not the CommonJS build");
    ${probe}`]);
  const viaImport = run(["--input-type=module", "-e", `import * as h from "@opshandoff/handoff";
    ${probe}`]);
  assert.equal(viaRequire, "sha256:44136fa355b3678a1146ad16f7e8649e");
  assert.equal(viaImport, viaRequire);
});
