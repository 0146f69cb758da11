// Builds the CommonJS copy of the client under dist/cjs, for require():
// the ES module sources compiled by TypeScript, a package.json that marks
// the folder CommonJS, and the type declarations beside them.

import { execFileSync } from "node:child_process";
import { copyFileSync, mkdirSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const out = join(root, "dist/cjs");
rmSync(join(root, "dist"), { recursive: true, force: true });
execFileSync(process.execPath, [join(root, "node_modules/typescript/bin/tsc"), "-p", join(root, "tsconfig.cjs.json")],
  { stdio: "inherit" });
mkdirSync(out, { recursive: true });
writeFileSync(join(out, "package.json"), JSON.stringify({ type: "commonjs" }, null, 2) + "\n");
for (const f of ["index.d.ts", "openapi.d.ts"]) copyFileSync(join(root, "src", f), join(out, f));
