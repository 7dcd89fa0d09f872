#!/usr/bin/python3
"""An example Toolhost worker in Python with pika, written from docs/wire-protocol.md.

It hosts two tools for the workers of a group (toolhost.invoke.{group}): `echo`, which echoes its
text, and `nap`, which waits `seconds` (60 by default) unless its call is cancelled. It announces
them on toolhost.announce, answers a request delivered again from its first run, and honours
cancels on toolhost.cancel.{group}: the call that runs here stops and answers `cancelled`, and a
cancel heard before its request is remembered until the call's deadline, so that the request is
answered `cancelled` without running.

It prints one line of JSON per event to stdout: ready, started, cancelled (the tool saw its
cancel), finished, skipped (a request answered cancelled without running).

    /usr/bin/python3 worker.py --group demo
"""

import argparse
import collections
import datetime
import hashlib
import json
import signal
import sys
import threading
import time
import uuid

import pika

ANNOUNCE = "toolhost.announce"
DEAD_LETTER = "toolhost.dead_letter"
# How many cancelled call keys are remembered at most, the oldest forgotten first.
CANCEL_LIMIT = 10000

TOOLS = [
    {
        "name": "echo",
        "description": "Echoes the text.",
        "parameters": {
            "type": "object",
            "properties": {"text": {"type": "string", "description": "What to echo."}},
            "required": ["text"],
        },
    },
    {
        "name": "nap",
        "description": "Waits some seconds, unless cancelled.",
        "parameters": {
            "type": "object",
            "properties": {"seconds": {"type": "number", "description": "How long, 60 if absent."}},
        },
        "timeout_ms": 300000,
    },
]


def event(kind, **fields):
    print(json.dumps(dict(fields, event=kind)), flush=True)


def epoch(instant):
    """An ISO-8601 instant such as 2026-11-21T23:00:00.000Z, in seconds since the epoch."""
    return datetime.datetime.fromisoformat(instant.replace("Z", "+00:00")).timestamp()


def failure(code, message, retryable=False):
    return {"code": code, "message": message, "retryable": retryable}


def run_tool(name, arguments, stop, key):
    """Runs one tool on its own thread: (content, error). `stop` is set when the call is
    cancelled; a tool that waits or loops checks it (Python cannot interrupt a thread)."""
    if name == "echo":
        return "echo: " + str(arguments.get("text", "")), None
    if name == "nap":
        seconds = float(arguments.get("seconds", 60))
        event("started", call_key=key, tool=name)
        if stop.wait(seconds):
            event("cancelled", call_key=key, tool=name)
            return None, failure(
                "cancelled",
                "The call to tool 'nap' was cancelled while it ran; some or all of its work may"
                " have been done.",
            )
        event("finished", call_key=key, tool=name)
        return f"rested {seconds:g} s", None
    return None, failure("tool_not_found", f"Tool '{name}' is not hosted by this worker.")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--url", default="amqp://guest:guest@127.0.0.1:5672/")
    parser.add_argument("--group", default="default")
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--heartbeat-ms", type=int, default=5000)
    args = parser.parse_args()

    queue = "toolhost.invoke." + args.group
    cancel_topic = "toolhost.cancel." + args.group
    connection = pika.BlockingConnection(pika.URLParameters(args.url))
    channel = connection.channel()
    channel.queue_declare(
        queue, durable=True, arguments={"x-dead-letter-exchange": DEAD_LETTER}
    )
    channel.exchange_declare(ANNOUNCE, exchange_type="fanout", durable=True)
    # Cancels: an exclusive queue of this worker's own, bound to the group's fanout exchange, read
    # before the first request is taken.
    channel.exchange_declare(cancel_topic, exchange_type="fanout", durable=True)
    cancels = channel.queue_declare("", exclusive=True).method.queue
    channel.queue_bind(cancels, cancel_topic)
    channel.basic_qos(prefetch_count=args.concurrency)

    worker_id = str(uuid.uuid4())
    # Everything below is touched only on pika's thread (its callbacks, and the callbacks the tool
    # threads hand it with add_callback_threadsafe), so it needs no lock.
    results = {}  # call key -> (reply body, forget at epoch seconds)
    running = {}  # call key -> threading.Event, set to stop the call
    waiting = collections.defaultdict(list)  # call key -> deliveries of copies of a running call
    cancelled = collections.OrderedDict()  # call key -> forget at epoch seconds

    def announce(kind):
        body = {"type": kind, "worker_id": worker_id, "group": args.group}
        if kind == "announce":
            body.update(heartbeat_ms=args.heartbeat_ms, tools=TOOLS)
        channel.basic_publish(
            ANNOUNCE, "", json.dumps(body).encode(),
            pika.BasicProperties(content_type="application/json", delivery_mode=1),
        )

    def reply_then_ack(method, properties, body):
        # The reply first, then the ack, on the request's channel: the ack never overtakes it.
        if properties.reply_to:
            channel.basic_publish(
                "", properties.reply_to, body.encode(),
                pika.BasicProperties(
                    content_type="application/json",
                    correlation_id=properties.correlation_id,
                    delivery_mode=1,
                ),
            )
        channel.basic_ack(method.delivery_tag)

    def reply_body(request, content, error):
        return json.dumps({
            "tool_call_id": request["tool_call_id"], "tool_name": request["tool_name"],
            "content": content if error is None else error["message"],
            "is_error": error is not None, "error": error,
        })

    def forget_expired(now):
        for key in [k for k, (_, until) in results.items() if until <= now]:
            del results[key]
        while cancelled and next(iter(cancelled.values())) <= now:
            cancelled.popitem(last=False)

    def finish(key, request, deadline, method, properties, content, error):
        running.pop(key, None)
        body = reply_body(request, content, error)
        results[key] = (body, deadline + 1)
        reply_then_ack(method, properties, body)
        for other_method, other_properties in waiting.pop(key, []):
            reply_then_ack(other_method, other_properties, body)

    def on_request(ch, method, properties, body):
        try:
            request = json.loads(body)
            if not isinstance(request, dict):
                raise ValueError("not a JSON object")
            for field in ("tool_call_id", "tool_name", "deadline"):
                if not isinstance(request.get(field), str):
                    raise ValueError(f"'{field}' is missing")
            deadline = epoch(request["deadline"])
        except ValueError as e:
            print(f"dead-lettering a request that is not one: {e}", file=sys.stderr, flush=True)
            ch.basic_reject(method.delivery_tag, requeue=False)
            return
        now = time.time()
        forget_expired(now)
        # The call key; a request without one (an old caller) is known by its whole body, which
        # tells apart requests that differ in any field.
        key = request.get("call_key") or hashlib.sha256(body).hexdigest()
        name = request["tool_name"]
        if deadline <= now:
            reply_then_ack(method, properties, reply_body(request, None, failure(
                "timeout", f"Tool '{name}' was not run: the call's deadline passed before a"
                " worker got it. You may retry.", True)))
            return
        if key in results:
            reply_then_ack(method, properties, results[key][0])
            return
        if key in running:
            waiting[key].append((method, properties))
            return
        if key in cancelled:
            event("skipped", call_key=key, tool=name)
            finish(key, request, deadline, method, properties, None, failure(
                "cancelled", f"The call to tool '{name}' was cancelled before it ran; nothing of"
                " it was done."))
            return
        arguments = request.get("arguments") or {}
        try:
            if isinstance(arguments, str):
                arguments = json.loads(arguments)
            if not isinstance(arguments, dict):
                raise ValueError("not a JSON object")
        except ValueError as e:
            reply_then_ack(method, properties, reply_body(request, None, failure(
                "invalid_arguments", f"Tool '{name}' got arguments that are not an object: {e}")))
            return
        stop = threading.Event()
        running[key] = stop

        def work():
            content, error = run_tool(name, arguments, stop, key)
            connection.add_callback_threadsafe(
                lambda: finish(key, request, deadline, method, properties, content, error))

        threading.Thread(target=work, daemon=True).start()

    def on_cancel(ch, method, properties, body):
        try:
            cancel = json.loads(body)
            key = cancel["call_key"]
            until = min(epoch(cancel["deadline"]), time.time() + 600)
            if cancel.get("type") != "cancel" or not isinstance(key, str):
                raise ValueError("not a cancel")
        except (ValueError, KeyError, TypeError, AttributeError) as e:
            print(f"dropping a message that is not a cancel: {e}", file=sys.stderr, flush=True)
            return
        # Remembered whether or not the call runs here: its request may still be in the queue,
        # or come again. A call that already answered keeps its result.
        cancelled[key] = until
        while len(cancelled) > CANCEL_LIMIT:
            cancelled.popitem(last=False)
        if key in running:
            running[key].set()

    stopping = []
    signal.signal(signal.SIGTERM, lambda *_: stopping.append(True))
    channel.basic_consume(cancels, on_cancel, auto_ack=True)
    channel.basic_consume(queue, on_request)
    announce("announce")
    event("ready", group=args.group, worker_id=worker_id)
    next_beat = time.monotonic() + args.heartbeat_ms / 1000
    try:
        while not stopping:
            connection.process_data_events(time_limit=0.1)
            if time.monotonic() >= next_beat:
                announce("announce")
                next_beat = time.monotonic() + args.heartbeat_ms / 1000
    except KeyboardInterrupt:
        pass
    # Requests still running go back to the queue unacknowledged, for another worker.
    announce("goodbye")
    connection.close()


if __name__ == "__main__":
    main()
