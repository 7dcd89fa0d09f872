#!/usr/bin/python3
"""An example Toolhost tool service in Python with pika, written from docs/wire-protocol.md.

It serves one tool service, whose tools turn text into a style ("upper" or "title"), on the
queue named by --queue, and announces itself on toolhost.announce so that every Toolhost host
on the broker registers its tools (source service:{id}). The answer streams in two replies, the
last with end_of_message: true. Empty text answers an error reply. SIGTERM or Ctrl-C says goodbye.

A request may ask the service to wait `seconds` first. It honours cancels on
toolhost.service_cancel.{queue}: a request that waits stops and answers an error of type
"cancelled", and a cancel heard before its request is remembered until the request's expiry, so
that the request is answered so without running. It prints one line of JSON per such event to
stdout: started, cancelled (the request saw its cancel), skipped.

    /usr/bin/python3 tool_service.py --url amqp://guest:guest@127.0.0.1:5672/ \
        --service text-style --queue text-style-request --tool shout
"""

import argparse
import collections
import json
import signal
import sys
import threading
import time
import uuid

import pika

ANNOUNCE = "toolhost.announce"
DEAD_LETTER = "toolhost.dead_letter"
# How many cancelled correlation ids are remembered at most, the oldest forgotten first.
CANCEL_LIMIT = 10000


def event(kind, **fields):
    print(json.dumps(dict(fields, event=kind)), flush=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--url", default="amqp://guest:guest@127.0.0.1:5672/")
    parser.add_argument("--service", default="text-style", help="the tool service's id")
    parser.add_argument("--queue", default="text-style-request", help="its request queue")
    parser.add_argument("--tool", default="shout", help="the name of the tool it announces")
    parser.add_argument("--heartbeat-ms", type=int, default=1000)
    args = parser.parse_args()

    connection = pika.BlockingConnection(pika.URLParameters(args.url))
    channel = connection.channel()
    # Queue and exchange arguments must match what every other party declares, or the broker
    # closes the channel with PRECONDITION_FAILED.
    channel.queue_declare(
        args.queue, durable=True, arguments={"x-dead-letter-exchange": DEAD_LETTER}
    )
    channel.exchange_declare(ANNOUNCE, exchange_type="fanout", durable=True)
    # Cancels: an exclusive queue of this instance's own, bound to the service's fanout exchange.
    cancel_topic = "toolhost.service_cancel." + args.queue
    channel.exchange_declare(cancel_topic, exchange_type="fanout", durable=True)
    cancels = channel.queue_declare("", exclusive=True).method.queue
    channel.queue_bind(cancels, cancel_topic)
    channel.basic_qos(prefetch_count=16)

    worker_id = str(uuid.uuid4())
    announcement = {
        "type": "announce",
        "worker_id": worker_id,
        "heartbeat_ms": args.heartbeat_ms,
        "service": {
            "id": args.service,
            "topic": args.queue,
            "config-params": [{"name": "style", "required": True}],
        },
        "tools": [
            {
                "type": "tool-service",
                "name": args.tool,
                "description": "Restyles text in capitals.",
                "service": args.service,
                "style": "upper",
                "arguments": [
                    {"name": "text", "type": "string", "description": "The text to restyle."},
                    {"name": "seconds", "type": "number",
                     "description": "How long to wait first; none if absent."},
                ],
            }
        ],
    }

    def announce(kind):
        body = dict(announcement, type=kind)
        channel.basic_publish(
            ANNOUNCE,
            "",
            json.dumps(body).encode(),
            pika.BasicProperties(content_type="application/json", delivery_mode=1),
        )

    # Touched only on pika's thread (its callbacks, and those the request threads hand it).
    running = {}  # correlation id -> threading.Event, set to stop the request
    cancelled = collections.OrderedDict()  # correlation id -> forget at epoch seconds

    def reply(properties, body):
        # Reply to reply_to on the default exchange, carrying the correlation id (and header id).
        correlation = properties.correlation_id or (properties.headers or {}).get("id")
        channel.basic_publish(
            "",
            properties.reply_to,
            json.dumps(body).encode(),
            pika.BasicProperties(
                content_type="application/json",
                correlation_id=correlation,
                headers={"id": correlation},
                delivery_mode=1,
            ),
        )

    def answer(ch, method, properties, bodies):
        # Runs on pika's thread: the replies, then the ack, on the request's channel.
        running.pop(properties.correlation_id or (properties.headers or {}).get("id"), None)
        if properties.reply_to:
            for body in bodies:
                reply(properties, body)
        ch.basic_ack(method.delivery_tag)

    def respond(request, stop, correlation):
        """The replies to one request, on a thread of its own; `stop` is set by a cancel."""
        text = str(request.get("arguments", {}).get("text", ""))
        if not text:
            return [{"response": None,
                     "error": {"type": "bad-request", "message": "text is empty"},
                     "end_of_message": True}]
        seconds = float(request.get("arguments", {}).get("seconds", 0) or 0)
        if seconds > 0:
            event("started", correlation_id=correlation)
            if stop.wait(seconds):
                event("cancelled", correlation_id=correlation)
                return [{"response": None,
                         "error": {"type": "cancelled",
                                   "message": "It was cancelled while it ran; some of its work"
                                              " may have been done."},
                         "end_of_message": True}]
        styled = text.upper() if request.get("style") == "upper" else text.title()
        user = request.get("user") or "nobody"
        half = len(styled) // 2
        return [{"response": styled[:half], "error": None, "end_of_message": False},
                {"response": styled[half:] + f" (for {user})", "error": None,
                 "end_of_message": True}]

    def on_request(ch, method, properties, body):
        try:
            request = json.loads(body)
            if not isinstance(request, dict):
                raise ValueError("not a JSON object")
        except ValueError as e:
            print(f"dead-lettering a request that is not one: {e}", file=sys.stderr, flush=True)
            ch.basic_reject(method.delivery_tag, requeue=False)
            return
        correlation = properties.correlation_id or (properties.headers or {}).get("id")
        if correlation in cancelled:
            event("skipped", correlation_id=correlation)
            answer(ch, method, properties, [{
                "response": None,
                "error": {"type": "cancelled",
                          "message": "It was cancelled before it ran; nothing was done."},
                "end_of_message": True}])
            return
        stop = threading.Event()
        if correlation:
            running[correlation] = stop

        def work():
            bodies = respond(request, stop, correlation)
            connection.add_callback_threadsafe(lambda: answer(ch, method, properties, bodies))

        threading.Thread(target=work, daemon=True).start()

    def on_cancel(ch, method, properties, body):
        # {"cancel": true}, with the request's correlation id and its expiry.
        correlation = properties.correlation_id or (properties.headers or {}).get("id")
        try:
            if not correlation or json.loads(body).get("cancel") is not True:
                raise ValueError("no correlation id, or no \"cancel\": true")
        except (ValueError, AttributeError) as e:
            print(f"dropping a message that is not a cancel: {e}", file=sys.stderr, flush=True)
            return
        now = time.time()
        while cancelled and next(iter(cancelled.values())) <= now:
            cancelled.popitem(last=False)
        ttl = float(properties.expiration) / 1000 if properties.expiration else 600
        cancelled[correlation] = now + min(ttl, 600)
        while len(cancelled) > CANCEL_LIMIT:
            cancelled.popitem(last=False)
        if correlation in running:
            running[correlation].set()

    stopping = []
    signal.signal(signal.SIGTERM, lambda *_: stopping.append(True))
    channel.basic_consume(cancels, on_cancel, auto_ack=True)
    channel.basic_consume(args.queue, on_request)
    announce("announce")
    print(f"tool service {args.service} serving {args.queue}", flush=True)
    next_beat = time.monotonic() + args.heartbeat_ms / 1000
    try:
        while not stopping:
            connection.process_data_events(time_limit=0.1)
            if time.monotonic() >= next_beat:
                announce("announce")
                next_beat = time.monotonic() + args.heartbeat_ms / 1000
    except KeyboardInterrupt:
        pass
    announce("goodbye")
    connection.close()


if __name__ == "__main__":
    main()
