"""What the clients do with the user's own mistakes, and the derived ref."""

import asyncio
import functools
import json
import time
import urllib.request
import warnings

import pytest

import handoff

RUN = "pyforms-%d" % time.time_ns()


def forwarded(env):
    with urllib.request.urlopen(env["faults"], timeout=10) as resp:
        return json.loads(resp.read())["forwarded"]


def reset(env):
    urllib.request.urlopen(urllib.request.Request(env["faults"], method="DELETE"), timeout=10).read()


def test_sync_client_refuses_coroutine_functions_before_any_request(env):
    client = handoff.Client(env["url"], env["token"])

    async def send(ctx):
        return {"ref": "x"}

    class Sender:
        async def __call__(self, ctx):
            return {"ref": "x"}

    reset(env)
    for fn in (send, Sender(), functools.partial(send)):
        with pytest.raises(TypeError, match="coroutine function.*AsyncClient"):
            client.run(RUN + ":coro", "conf.task", {"customer": "f_1"}, fn)
    with pytest.raises(TypeError, match="coroutine function"):
        client.operation("conf.task", key=RUN + ":{to}")(send)
    assert forwarded(env) == 0
    assert client.list(key=RUN + ":coro")["items"] == []


def test_a_returned_coroutine_is_not_awaited_and_releases_the_lease(env):
    client = handoff.Client(env["url"], env["token"])
    ran = []

    async def send(ctx):
        ran.append(ctx)
        return {"ref": "x"}

    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a coroutine never awaited nor closed would warn
        with pytest.raises(handoff.OnTheDesk) as e:
            client.run(RUN + ":returned", "conf.task", {"customer": "f_2"}, lambda ctx: send(ctx))
    assert ran == []
    op = e.value.operation
    assert op["state"] == "failed_terminal" and op["lease"] is None
    assert op["last_error"]["code"] == "not_sent" and "does not await" in op["last_error"]["message"]
    # and the asyncio client awaits what the same plain function returns
    result = asyncio.run(handoff.AsyncClient(env["url"], env["token"]).run(
        RUN + ":returned-async", "conf.task", {"customer": "f_3"}, lambda ctx: send(ctx)))
    assert result.ref == "x" and len(ran) == 1


def test_a_function_that_cannot_be_called_releases_the_lease(env):
    client = handoff.Client(env["url"], env["token"])

    def takes_nothing():
        raise AssertionError("never called")

    with pytest.raises(handoff.OnTheDesk) as e:
        client.run(RUN + ":arity", "conf.task", {"customer": "f_4"}, takes_nothing)
    assert e.value.operation["last_error"]["code"] == "not_sent"

    def raises_inside(ctx):
        raise TypeError("a bug after the provider may have been called")

    with pytest.raises(handoff.OutcomeUnknown):
        client.run(RUN + ":inside", "conf.task", {"customer": "f_5"}, raises_inside)


def test_operation_works_out_content_and_key_before_any_request(env):
    client = handoff.Client(env["url"], env["token"])

    @client.operation("conf.task", key=RUN + ":op:{customer}")
    def charge(ctx, customer, amount=100):
        return {"ref": "ch_" + ctx.content["customer"], "data": {"amount": amount}}

    reset(env)
    with pytest.raises(KeyError):
        client.operation("conf.task", key=RUN + ":{missing}")(charge.__wrapped__)(customer="f_6")
    with pytest.raises(TypeError):
        charge(customer=object())  # not JSON
    with pytest.raises(TypeError):
        charge()  # a missing argument
    assert forwarded(env) == 0
    first = charge("f_7")
    again = charge(customer="f_7", amount=100)
    assert (first.ref, first.data, first.replayed) == ("ch_f_7", {"amount": 100}, False)
    assert (again.ref, again.replayed) == ("ch_f_7", True)
    assert first.operation["key"] == RUN + ":op:f_7"


@pytest.mark.parametrize("answer,ref,data", [
    ("pay_1", "pay_1", None),
    ({"ref": "pay_2", "data": {"a": 1}}, "pay_2", {"a": 1}),
    ({"id": "tsk_3", "title": "t"}, "tsk_3", {"id": "tsk_3", "title": "t"}),
    ({"id": 42}, "42", {"id": 42}),
    ({"ref": "", "data": {"status": "sent", "count": 2}}, "sha256:05c0c613efdcd4d633d648b65ae10045",
     {"status": "sent", "count": 2}),
    ({"data": {"status": "sent", "count": 2}}, "sha256:05c0c613efdcd4d633d648b65ae10045", {"status": "sent", "count": 2}),
    ({}, "sha256:44136fa355b3678a1146ad16f7e8649e", None),
    (None, "sha256:74234e98afe7498fb5daf1f36ac2d78a", None),
    (handoff.Result(ref=""), "sha256:44136fa355b3678a1146ad16f7e8649e", None),
])
def test_answer_result(answer, ref, data):
    got = handoff.answer_result(answer)
    assert got["ref"] == ref
    assert got.get("data") == data


def test_canonical_json_is_the_go_clients():
    # the cases of client/do_test.go's TestCanonicalJSON
    assert handoff.canonical_json({"b": 1, "a": [True, None, "x"]}) == '{"a":[true,null,"x"],"b":1}'
    assert handoff.canonical_json({"s": "<é>\u2028\n\u0001\"\\"}) == '{"s":"<é>\u2028\\n\\u0001\\"\\\\"}'
    assert handoff.canonical_json({"\U0001F600": 1, "\uff61": 2}) == '{"\U0001F600":1,"\uff61":2}'
