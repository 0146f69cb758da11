import json, os, urllib.request
import handoff

client = handoff.Client(os.environ.get("HANDOFF_URL", "http://127.0.0.1:8080"), os.environ["HANDOFF_TOKEN"])
crm = os.environ.get("SANDBOX_URL", "http://127.0.0.1:8090")  # a stand-in provider: handoff sandbox

@client.operation("crm.task.create", key="{event}:crm_task")
def create_task(ctx, event, owner, title):
    body = json.dumps({"key": ctx.provider_key, "params": ctx.content}).encode()
    with urllib.request.urlopen(urllib.request.Request(crm + "/execute", data=body), timeout=10) as resp:
        return json.load(resp)["ref"]  # the provider's record of the task

result = create_task(event="evt_63", owner="u_9", title="Follow up")
print(result.ref, "(replayed)" if result.replayed else "(first run)")
