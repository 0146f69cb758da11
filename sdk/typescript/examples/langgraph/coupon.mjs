// Seed 002's trap, in LangGraph: resuming after interrupt() re-runs the node
// from its start, so a side effect before the interrupt happens again. The
// node here issues a coupon, then asks a person to approve the email text.
// Through client.run the resumed node gets the first coupon back (replayed)
// instead of issuing a second.

import { Annotation, END, START, StateGraph, interrupt } from "@langchain/langgraph";

const State = Annotation.Root({
  customer: Annotation(),
  campaign: Annotation(),
  coupon: Annotation(),
  replayed: Annotation(),
  email: Annotation(),
});

/** The graph: one node that issues a coupon, then waits for a person. */
export function couponGraph(issueCoupon) {
  return new StateGraph(State)
    .addNode("offer", async (state) => {
      const coupon = await issueCoupon(state.customer, state.campaign); // runs again on resume
      const email = interrupt({ draft: `Dear ${state.customer}, your code is ${coupon.ref}.` });
      return { coupon: coupon.ref, replayed: coupon.replayed, email };
    })
    .addEdge(START, "offer")
    .addEdge("offer", END);
}

/** The coupon through Handoff: one business key per customer and campaign. */
export function issueWithHandoff(client, providerUrl) {
  return (customer, campaign) =>
    client.run(`coupon:${customer}:${campaign}`, "coupon.issue", { customer, campaign }, async (ctx) => {
      const answer = await execute(providerUrl, ctx.providerKey, ctx.content);
      return { ref: answer.ref };
    });
}

/** The coupon straight from the provider, as the node would without Handoff. */
export function issueDirectly(providerUrl) {
  return async (customer, campaign) => {
    const answer = await execute(providerUrl, `coupon:${customer}:${campaign}`, { customer, campaign });
    return { ref: answer.ref, replayed: false };
  };
}

async function execute(providerUrl, key, params) {
  const resp = await fetch(providerUrl + "/execute", { method: "POST", headers: { "Content-Type": "application/json" },
    body: JSON.stringify({ key, params }) });
  if (!resp.ok) throw new Error(`the provider answered ${resp.status}`);
  return resp.json();
}
