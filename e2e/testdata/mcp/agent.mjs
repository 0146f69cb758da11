// An agent host's side of the e2e test, with the official MCP TypeScript
// client: connect to `handoff mcp` over stdio or streamable HTTP, then call
// the filesystem tools as an agent would and print every answer as JSON.
//
//   node agent.mjs stdio DIR HANDOFF_BINARY CONFIG
//   node agent.mjs http  DIR URL
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";

const [mode, dir, target, config] = process.argv.slice(2);
const transport = mode === "stdio"
  ? new StdioClientTransport({ command: target, args: ["mcp", config], env: process.env, stderr: "inherit" })
  : new StreamableHTTPClientTransport(new URL(target));
const client = new Client({ name: "e2e-ts-agent", version: "2.0" });
await client.connect(transport);

const out = {};
const call = async (name, args) => {
  const r = await client.callTool({ name, arguments: args });
  return { isError: !!r.isError, text: r.content.filter((c) => c.type === "text").map((c) => c.text).join("\n"), meta: r._meta ?? {} };
};
const file = join(dir, "note.txt");

out.tools = (await client.listTools()).tools.map((t) => ({ name: t.name, description: t.description, annotations: t.annotations }));
out.list = await call("list_directory", { path: dir });
out.first = await call("write_file", { path: file, content: "first draft" });
writeFileSync(file, "edited by a person"); // a second real write would undo this
out.second = await call("write_file", { path: file, content: "first draft" });
out.after_second = readFileSync(file, "utf8");
out.other = await call("write_file", { path: file, content: "another text" });
out.after_other = readFileSync(file, "utf8");
out.move = await call("move_file", { source: file, destination: join(dir, "moved.txt") });
// edit_file appends a line by replacing the last one with itself and the
// new one: run twice, it would append twice. The retry must be a replay.
const list = join(dir, "todo.txt");
const edit = { path: list, edits: [{ oldText: "line 1", newText: "line 1\nline 2" }] };
out.edit = await call("edit_file", edit);
out.edit_retry = await call("edit_file", edit);
out.after_edits = readFileSync(list, "utf8");
console.log(JSON.stringify(out));
await client.close();
