#!/usr/bin/python3
"""An example Toolhost tool service in Python with pika, written from docs/wire-protocol.md.

It serves one tool service, whose tools turn text into a style ("upper" or "title"), on the
queue named by --queue, and announces itself on toolhost.announce so that every Toolhost host
on the broker registers its tools (source service:{id}). The answer streams in two replies, the
last with end_of_message: true. Empty text answers an error reply. SIGTERM or Ctrl-C says goodbye.

    /usr/bin/python3 tool_service.py --url amqp://guest:guest@127.0.0.1:5672/ \
        --service text-style --queue text-style-request --tool shout
"""

import argparse
import json
import signal
import sys
import time
import uuid

import pika

ANNOUNCE = "toolhost.announce"
DEAD_LETTER = "toolhost.dead_letter"


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
                    {"name": "text", "type": "string", "description": "The text to restyle."}
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

    def on_request(ch, method, properties, body):
        try:
            request = json.loads(body)
            if not isinstance(request, dict):
                raise ValueError("not a JSON object")
        except ValueError as e:
            print(f"dead-lettering a request that is not one: {e}", file=sys.stderr, flush=True)
            ch.basic_reject(method.delivery_tag, requeue=False)
            return
        if properties.reply_to:
            text = str(request.get("arguments", {}).get("text", ""))
            if not text:
                reply(properties, {"response": None,
                                   "error": {"type": "bad-request", "message": "text is empty"},
                                   "end_of_message": True})
            else:
                styled = text.upper() if request.get("style") == "upper" else text.title()
                user = request.get("user") or "nobody"
                half = len(styled) // 2
                reply(properties, {"response": styled[:half], "error": None,
                                   "end_of_message": False})
                reply(properties, {"response": styled[half:] + f" (for {user})", "error": None,
                                   "end_of_message": True})
        ch.basic_ack(method.delivery_tag)

    stopping = []
    signal.signal(signal.SIGTERM, lambda *_: stopping.append(True))
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
