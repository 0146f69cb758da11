"""The wire scenarios of sdk/conformance/scenarios.json, through Client.run."""

import json
import time
import urllib.request
from pathlib import Path

import pytest

import handoff

SCENARIOS = json.loads((Path(__file__).resolve().parents[3] / "sdk/conformance/scenarios.json").read_text())["scenarios"]
RUN = "py-%d" % time.time_ns()


def http(method, url, body=None):
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(url, data=data, method=method, headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=10) as resp:
        return json.loads(resp.read())


def provider_call(sandbox, spec):
    """fn for client.run: what the scenario says the provider call does."""

    def fn(ctx):
        fn.calls += 1
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
        return {"ref": answer["ref"], "data": {"executions": answer["executions"]}}

    fn.calls = 0
    return fn


@pytest.mark.parametrize("sc", SCENARIOS, ids=[s["name"] for s in SCENARIOS])
def test_scenario(env, sc):
    client = handoff.Client(env["url"], env["token"], timeout=10)
    key = "conf:%s:%s" % (RUN, sc["name"])
    http("DELETE", env["faults"])
    first_ref = None
    for i, step in enumerate(sc["steps"]):
        if "fault" in step:
            http("POST", env["faults"], step["fault"])
        elif "claim_elsewhere" in step:
            client.register(key, sc["type"], sc["content"],
                            claim={"worker": "elsewhere", "lease_seconds": step["claim_elsewhere"]["lease_seconds"]})
        elif "run" in step:
            run, want = step["run"], step["expect"]
            fn = provider_call(env["sandbox"], run["provider"])
            outcome, result, err = "completed", None, None
            try:
                result = client.run(key, sc["type"], run.get("content", sc["content"]), fn,
                                    lease_seconds=run.get("lease_seconds"))
            except handoff.HandoffError as e:
                outcome, err = type(e).__name__, e
            if outcome == "InProgress":
                outcome = "RetryLater"  # InProgress is the RetryLater of another worker's lease
            assert outcome == want["outcome"], "step %d: %r" % (i, err)
            if "fn_calls" in want:
                assert fn.calls == want["fn_calls"], "step %d" % i
            if "replayed" in want:
                assert result.replayed == want["replayed"], "step %d" % i
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
    check_after(client, env, sc, key)


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
