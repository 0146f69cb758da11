import { Client } from "@opshandoff/handoff";

const handoff = new Client(process.env.HANDOFF_URL ?? "http://127.0.0.1:8080", process.env.HANDOFF_TOKEN ?? "");
const crm = process.env.SANDBOX_URL ?? "http://127.0.0.1:8090"; // a stand-in provider: handoff sandbox

const createTask = handoff.operation("crm.task.create", { key: "{event}:crm_task" }, async (ctx, task) => {
  const resp = await fetch(crm + "/execute", { method: "POST", body: JSON.stringify({ key: ctx.providerKey, params: task }) });
  return (await resp.json()).ref; // the provider's record of the task
});
const result = await createTask({ event: "evt_62", owner: "u_9", title: "Follow up" });
console.log(result.ref, result.replayed ? "(replayed)" : "(first run)");
