"""The wire scenarios of sdk/conformance/scenarios.json, through Client.run
and AsyncClient.run (and their operation decorators where a step says so)."""

import asyncio
import json
import time
import urllib.request
from pathlib import Path

import pytest

import handoff

SCENARIOS = json.loads((Path(__file__).resolve().parents[3] / "sdk/conformance/scenarios.json").read_text())["scenarios"]
RUN = "py-%d" % time.time_ns()
KINDS = ("sync", "asyncio")


def http(method, url, body=None):
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(url, data=data, method=method, headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=10) as resp:
        return json.loads(resp.read())


def execute(sandbox, spec, ctx):
    """What the scenario says the provider call does, and what fn returns."""
    if "not_sent" in spec:
        raise handoff.NotSent(spec["not_sent"])
    if spec.get("sleep_ms"):
        time.sleep(spec["sleep_ms"] / 1000)
    if "fail" in spec:
        f = spec["fail"]
        raise handoff.ProviderError(f["class"], f.get("code", ""), f.get("message", ""), f.get("retry_after_seconds", 0))
    x = spec["execute"]
    req = urllib.request.Request(sandbox + "/execute", method="POST",
                                 data=json.dumps({"key": ctx.provider_key, "params": ctx.content}).encode(),
                                 headers={"Content-Type": "application/json"})
    if x.get("fault"):
        req.add_header("Sandbox-Fault", x["fault"])
    with urllib.request.urlopen(req, timeout=x.get("timeout_ms", 10000) / 1000) as resp:
        answer = json.loads(resp.read())  # a timeout propagates: the outcome is unknown
    execute.provider_ref = answer["ref"]
    if "returns" in spec:
        return spec["returns"]
    if spec.get("answer") == "string":
        return answer["ref"]
    if spec.get("answer") == "id":
        return {"id": answer["ref"]}
    return {"ref": answer["ref"], "data": {"executions": answer["executions"]}}


class Calls:
    n = 0


def provider_call(sandbox, spec, coroutine):
    """fn for client.run: a plain function, or an async def when the step
    says coroutine (the blocking call then runs in a thread, as a real
    coroutine would await its HTTP library)."""
    calls = Calls()
    if coroutine:
        async def fn(ctx):
            calls.n += 1
            return await asyncio.to_thread(execute, sandbox, spec, ctx)
    else:
        def fn(ctx):
            calls.n += 1
            return execute(sandbox, spec, ctx)
    return fn, calls


def operation_call(client, sc_type, key, sandbox, spec, coroutine, kind):
    """The decorator form: the content from the call's arguments by name,
    the key from a template (sync) or a function of the arguments (asyncio)."""
    calls = Calls()
    template = key + ":{customer}"
    key_of = template if kind == "sync" else (lambda **content: template.format(**content))
    if coroutine:
        @client.operation(sc_type, key=key_of)
        async def fn(ctx, **content):
            calls.n += 1
            return await asyncio.to_thread(execute, sandbox, spec, ctx)
    else:
        @client.operation(sc_type, key=key_of)
        def fn(ctx, **content):
            calls.n += 1
            return execute(sandbox, spec, ctx)
    return fn, calls


def call(kind, thunk):
    if kind == "sync":
        return thunk()
    return asyncio.run(thunk())


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("sc", SCENARIOS, ids=[s["name"] for s in SCENARIOS])
def test_scenario(env, sc, kind):
    if "clients" in sc and "python" not in sc["clients"]:
        pytest.skip("a scenario for %s" % sc["clients"])
    client = (handoff.Client if kind == "sync" else handoff.AsyncClient)(env["url"], env["token"], timeout=10)
    sync = client if kind == "sync" else client.sync
    key = "conf:%s:%s:%s" % (RUN, kind, sc["name"])
    # Both clients share one server: the same content under the other
    # client's key would be held as its twin, so each marks its own.
    mark = lambda c: dict(c, client=kind)  # noqa: E731
    op_key = key
    http("DELETE", env["faults"])
    first_ref = None
    for i, step in enumerate(sc["steps"]):
        if "fault" in step:
            http("POST", env["faults"], step["fault"])
        elif "claim_elsewhere" in step:
            sync.register(key, sc["type"], mark(sc["content"]),
                          claim={"worker": "elsewhere", "lease_seconds": step["claim_elsewhere"]["lease_seconds"]})
        elif "run" in step:
            run, want = step["run"], step["expect"]
            content = mark(run.get("content", sc["content"]))
            coroutine = run.get("coroutine", False)
            outcome, result, err = "completed", None, None
            execute.provider_ref = None
            try:
                if run.get("form") == "operation":
                    op_key = key + ":" + content["customer"]
                    fn, calls = operation_call(client, sc["type"], key, env["sandbox"], run["provider"], coroutine, kind)
                    result = call(kind, lambda: fn(**content))
                else:
                    fn, calls = provider_call(env["sandbox"], run["provider"], coroutine)
                    result = call(kind, lambda: client.run(key, sc["type"], content, fn,
                                                           lease_seconds=run.get("lease_seconds")))
            except handoff.HandoffError as e:
                outcome, err = type(e).__name__, e
            except TypeError as e:
                outcome, err = "TypeError", e
            if kind == "sync" and "sync_expect" in step:
                # The sync client refuses a coroutine function before any request.
                assert outcome == step["sync_expect"]["outcome"], "step %d: %r" % (i, err)
                assert "coroutine function" in str(err) and "AsyncClient" in str(err)
                assert http("GET", env["faults"])["forwarded"] == step["sync_expect"]["forwarded"]
                assert sync.list(key=op_key)["items"] == []
                return
            if outcome == "InProgress":
                outcome = "RetryLater"  # InProgress is the RetryLater of another worker's lease
            assert outcome == want["outcome"], "step %d: %r" % (i, err)
            if "fn_calls" in want:
                assert calls.n == want["fn_calls"], "step %d" % i
            if "replayed" in want:
                assert result.replayed == want["replayed"], "step %d" % i
            if "ref" in want:
                assert result.ref == want["ref"], "step %d" % i
            if want.get("ref_is_provider"):
                assert execute.provider_ref and result.ref == execute.provider_ref, "step %d" % i
            if result is not None:
                if first_ref is None:
                    first_ref = result.ref
                elif want.get("same_ref"):
                    assert result.ref == first_ref
            if "reason" in want:
                assert err.reason == want["reason"]
            if "code" in want:
                assert (err.status, err.code) == (want["status"], want["code"])
                assert err.problem["code"] == want["code"]  # the server's own problem document
            if "retry_after_min" in want:
                assert err.retry_after >= want["retry_after_min"]
            if outcome in ("OutcomeUnknown", "OnTheDesk"):
                assert err.desk_url == env["url"] + "/desk/operations/" + err.operation_id
    check_after(sync, env, sc, op_key)


def check_after(client, env, sc, key):
    items = client.list(key=key)["items"]
    assert len(items) == 1
    op = items[0]
    deadline = time.monotonic() + 5
    while op["state"] != sc["state"] and time.monotonic() < deadline:
        time.sleep(0.1)
        op = client.get(op["id"])
    assert op["state"] == sc["state"]
    if "timeline" in sc:
        timeline = client.request("GET", "/v1/operations/" + op["id"] + "/timeline")
        assert [e["action"] for e in timeline["items"]] == sc["timeline"]
    count = http("GET", env["sandbox"] + "/executions?key=" + op["provider_key"])
    assert count["executions"] == sc["executions"]
    if "faults_hit" in sc:
        assert http("GET", env["faults"])["hits"] == sc["faults_hit"]
    if "settles_replayed" in sc:
        assert http("GET", env["faults"])["settles_replayed"] == sc["settles_replayed"]
