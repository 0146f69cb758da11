// @ts-check
import { Client, ProviderError } from "@opshandoff/handoff";

const handoff = new Client(process.env.HANDOFF_URL ?? "http://127.0.0.1:8080", process.env.HANDOFF_TOKEN ?? "");
const provider = process.env.SANDBOX_URL ?? "http://127.0.0.1:8090"; // the simulated provider: handoff sandbox

const content = { owner: "u_9", due: "2026-12-01", title: "Follow up" };
const result = await handoff.run("evt_61:crm_task", "crm.task.create", content, async (ctx) => {
  // ctx.content is the approved snapshot; ctx.providerKey is the provider's idempotency key
  const resp = await fetch(provider + "/execute", { method: "POST",
    body: JSON.stringify({ key: ctx.providerKey, params: ctx.content }) });
  if (!resp.ok) { // the provider said no: the type's card decides what follows
    throw new ProviderError(resp.status === 429 ? "rate_limited" : "transient", String(resp.status), await resp.text());
  }
  return { ref: (await resp.json()).ref };
}, { eventId: "evt_61" });
console.log(result.ref, result.replayed ? "(replayed: the provider was not called)" : "(first run)");
