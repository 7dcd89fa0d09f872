#!/usr/bin/python3
"""An example Toolhost caller in Python with pika, written from docs/wire-protocol.md.

It calls one tool hosted by the workers of a group (toolhost.invoke.{group}) and prints the reply
body as one line of JSON. It exits 0 on a reply (even an error reply), 2 when no worker of the
group is running, and 3 when no reply came before the deadline.

    /usr/bin/python3 caller.py --group demo add '{"a": 2, "b": 3}'
"""

import argparse
import datetime
import json
import sys
import time
import uuid

import pika


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--url", default="amqp://guest:guest@127.0.0.1:5672/")
    parser.add_argument("--group", default="default")
    parser.add_argument("--timeout", type=float, default=10.0, help="seconds")
    parser.add_argument("--user", default=None)
    parser.add_argument("tool")
    parser.add_argument("arguments", nargs="?", default="{}")
    args = parser.parse_args()

    queue = "toolhost.invoke." + args.group
    connection = pika.BlockingConnection(pika.URLParameters(args.url))
    channel = connection.channel()

    # No worker: fail at once rather than at the deadline (a passive declare of a missing
    # queue closes the channel with 404).
    try:
        consumers = channel.queue_declare(queue, passive=True).method.consumer_count
    except pika.exceptions.ChannelClosedByBroker:
        consumers = 0
        channel = connection.channel()
    if consumers == 0:
        print(f"no worker of group '{args.group}' is running", file=sys.stderr)
        return 2

    reply_queue = "toolhost.reply." + str(uuid.uuid4())
    channel.queue_declare(reply_queue, exclusive=True, auto_delete=True)
    channel.confirm_delivery()

    correlation = str(uuid.uuid4())
    now_ms = int(time.time() * 1000)
    deadline_ms = now_ms + int(args.timeout * 1000)
    deadline = datetime.datetime.fromtimestamp(deadline_ms / 1000, datetime.timezone.utc)
    request = {
        "tool_call_id": "call_" + uuid.uuid4().hex[:12],
        "tool_name": args.tool,
        "arguments": json.loads(args.arguments),
        "deadline": deadline.isoformat(timespec="milliseconds").replace("+00:00", "Z"),
    }
    if args.user:
        request["user"] = args.user
    try:
        channel.basic_publish(
            "",
            queue,
            json.dumps(request).encode(),
            pika.BasicProperties(
                content_type="application/json",
                correlation_id=correlation,
                reply_to=reply_queue,
                expiration=str(deadline_ms - now_ms),
                delivery_mode=1,
            ),
            mandatory=True,
        )
    except pika.exceptions.UnroutableError:
        print(f"no worker of group '{args.group}' is running", file=sys.stderr)
        return 2

    for method, properties, body in channel.consume(
        reply_queue, auto_ack=True, inactivity_timeout=0.1
    ):
        if method is not None and properties.correlation_id == correlation:
            print(body.decode())
            connection.close()
            return 0
        if time.time() * 1000 > deadline_ms:
            print(f"tool '{args.tool}' did not answer before its deadline", file=sys.stderr)
            connection.close()
            return 3
    return 3


if __name__ == "__main__":
    sys.exit(main())
