import json, os, urllib.error, urllib.request
import handoff

client = handoff.Client(os.environ.get("HANDOFF_URL", "http://127.0.0.1:8080"), os.environ["HANDOFF_TOKEN"])
provider = os.environ.get("SANDBOX_URL", "http://127.0.0.1:8090")  # the simulated provider: handoff sandbox

def create_task(ctx):
    # ctx.content is the approved snapshot; ctx.provider_key is the provider's idempotency key
    body = json.dumps({"key": ctx.provider_key, "params": ctx.content}).encode()
    try:
        with urllib.request.urlopen(urllib.request.Request(provider + "/execute", data=body), timeout=10) as resp:
            return {"ref": json.load(resp)["ref"]}
    except urllib.error.HTTPError as e:  # the provider said no: the type's card decides what follows
        raise handoff.ProviderError("rate_limited" if e.code == 429 else "transient", str(e.code), e.reason)

content = {"owner": "u_9", "due": "2026-12-01", "title": "Call back"}
result = client.run("evt_60:crm_task", "crm.task.create", content, create_task, event_id="evt_60")
print(result.ref, "(replayed: the provider was not called)" if result.replayed else "(first run)")
