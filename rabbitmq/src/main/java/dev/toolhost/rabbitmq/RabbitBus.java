package dev.toolhost.rabbitmq;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.AlreadyClosedException;
import com.rabbitmq.client.BuiltinExchangeType;
import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import com.rabbitmq.client.ConnectionFactory;
import com.rabbitmq.client.DefaultConsumer;
import com.rabbitmq.client.Envelope;
import com.rabbitmq.client.Recoverable;
import com.rabbitmq.client.RecoveryListener;
import com.rabbitmq.client.ShutdownSignalException;
import dev.toolhost.bus.BusClosedException;
import dev.toolhost.bus.BusException;
import dev.toolhost.bus.Correlations;
import dev.toolhost.bus.Delivery;
import dev.toolhost.bus.Message;
import dev.toolhost.bus.MessageBus;
import dev.toolhost.bus.MessageTooLargeException;
import dev.toolhost.bus.NoRouteException;
import dev.toolhost.bus.Replies;
import dev.toolhost.bus.Subscription;
import java.io.IOException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentNavigableMap;
import java.util.concurrent.ConcurrentSkipListMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.ReentrantLock;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import tools.jackson.core.JacksonException;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * The RabbitMQ bus is the message bus on a RabbitMQ broker, for tools on more than one machine.
 *
 * <p>Work queues are durable queues that dead-letter to {@value MessageBus#DEAD_LETTER_QUEUE}
 * through the fanout exchange of the same name. Sends are mandatory and confirmed: a send to a
 * queue that does not exist comes back (basic.return) and throws {@link NoRouteException}. Topics
 * are fanout exchanges, each subscriber with an exclusive queue of its own. Replies come to one
 * exclusive queue per bus, {@code toolhost.reply.{uuid}}. A worker's reply goes out on the channel
 * its request came on, just before that request's acknowledgement on the same channel (see {@link
 * #replyThenAck}). Messages are transient: a request lives for seconds and expires (per-message
 * TTL) at its deadline.
 *
 * <p>The connection recovers by itself (queues, bindings and consumers too); while it is down, and
 * until its topology is back (so that a reply has a queue to reach), sends and requests throw, and
 * every request waiting for a reply fails with a {@link BusException} at once, since a reply may
 * never come. Thread-safe. {@link #toString()} never shows the password.
 *
 * <p>Message size: the client reads messages up to {@value #BROKER_LIMIT} bytes, the most any
 * RabbitMQ accepts ({@code max_message_size} is 128 MiB by default and at most 512 MiB), so that no
 * message the broker takes can close the connection (amqp-client's own default of 64 MiB closed it
 * on every larger delivery, and recovery got the same message again, for ever). A body over this
 * bus's {@linkplain #maxMessageSize() maximum} is refused when sent, and dead-lettered when it
 * arrives, with one log line: {@code basic.reject} without requeue, to the dead-letter exchange
 * every work queue names.
 */
public final class RabbitBus implements MessageBus {

  private static final Logger LOG = LoggerFactory.getLogger(RabbitBus.class);
  private static final JsonMapper JSON = JsonMapper.shared();
  private static final Duration CONFIRM_TIMEOUT = Duration.ofSeconds(10);
  private static final int PUBLISHERS = 4;

  /** The largest message the client reads: RabbitMQ's highest {@code max_message_size}, 512 MiB. */
  public static final int BROKER_LIMIT = 512 * 1024 * 1024;

  private final String redacted;
  private final Connection connection;
  private final List<Publisher> publishers;
  private final AtomicInteger nextPublisher = new AtomicInteger();
  private final Channel admin;
  private final Channel replyChannel;
  private final Channel droppedChannel;
  private final String replyQueue = "toolhost.reply." + UUID.randomUUID();
  private final Correlations correlations = new Correlations();
  private final Map<String, Boolean> declaredTopics = new ConcurrentHashMap<>();
  private final Map<String, ConsumerCount> consumerCounts = new ConcurrentHashMap<>();
  private final AtomicBoolean closed = new AtomicBoolean();
  private final String messageIds = UUID.randomUUID() + "-";
  private final AtomicLong nextMessageId = new AtomicLong();
  private final int maxMessageSize;
  // From a lost connection until its recovery has declared the queues and consumers again.
  private volatile boolean recovering;

  private RabbitBus(String redacted, Connection connection, int maxMessageSize) throws IOException {
    this.redacted = redacted;
    this.connection = connection;
    this.maxMessageSize = maxMessageSize;
    this.admin = connection.createChannel();
    admin.exchangeDeclare(DEAD_LETTER_QUEUE, BuiltinExchangeType.FANOUT, true);
    // Declared plainly, as every client does: its limits are a policy (DeadLetterPolicy), which an
    // existing queue takes without being declared again.
    admin.queueDeclare(DEAD_LETTER_QUEUE, true, false, false, null);
    admin.queueBind(DEAD_LETTER_QUEUE, DEAD_LETTER_QUEUE, "");
    // Letters the policy drops from the dead-letter queue come here, for one host to log them. A
    // queue of Toolhost's own since this version, so it may have arguments: it is bounded too.
    admin.exchangeDeclare(DeadLetterPolicy.DROPPED, BuiltinExchangeType.FANOUT, true);
    admin.queueDeclare(
        DeadLetterPolicy.DROPPED,
        true,
        false,
        false,
        Map.of("x-message-ttl", 60_000, "x-max-length", 1_000, "x-overflow", "drop-head"));
    admin.queueBind(DeadLetterPolicy.DROPPED, DeadLetterPolicy.DROPPED, "");
    this.droppedChannel = connection.createChannel();
    droppedChannel.basicQos(1);
    droppedChannel.basicConsume(
        DeadLetterPolicy.DROPPED,
        true,
        new DefaultConsumer(droppedChannel) {
          @Override
          public void handleDelivery(
              String tag, Envelope envelope, AMQP.BasicProperties properties, byte[] body) {
            logDropped(properties, body);
          }
        });
    this.publishers = List.of(newPublishers());
    this.replyChannel = connection.createChannel();
    replyChannel.queueDeclare(replyQueue, false, true, true, null);
    replyChannel.basicConsume(
        replyQueue,
        true,
        new DefaultConsumer(replyChannel) {
          @Override
          public void handleDelivery(
              String tag, Envelope envelope, AMQP.BasicProperties properties, byte[] body) {
            if (body.length > RabbitBus.this.maxMessageSize) {
              LOG.warn(
                  "Dropped a reply of {} bytes, over the limit of {} bytes",
                  body.length,
                  RabbitBus.this.maxMessageSize);
              Message withoutBody = message(properties, new byte[0]);
              String id =
                  withoutBody
                      .correlationId()
                      .orElse(withoutBody.headers().getOrDefault(Message.ID_HEADER, ""));
              correlations.fail(
                  id,
                  new MessageTooLargeException(
                      replyQueue, body.length, RabbitBus.this.maxMessageSize));
              return;
            }
            correlations.deliver(message(properties, body));
          }
        });
    connection.addShutdownListener(this::connectionLost);
    // The reply channel dies with the connection; its shutdown is the surest sign replies are lost.
    replyChannel.addShutdownListener(this::connectionLost);
    if (connection instanceof Recoverable recoverable) {
      recoverable.addRecoveryListener(
          new RecoveryListener() {
            @Override
            public void handleRecovery(Recoverable recovered) {
              recovering = false;
              LOG.info(
                  "The connection to the message bus at {} recovered", RabbitBus.this.redacted);
            }

            @Override
            public void handleRecoveryStarted(Recoverable recovering) {}
          });
    }
  }

  private Publisher[] newPublishers() throws IOException {
    Publisher[] made = new Publisher[PUBLISHERS];
    for (int i = 0; i < made.length; i++) {
      made[i] = new Publisher(connection.createChannel());
    }
    return made;
  }

  /**
   * Connects to the broker at the URI, such as {@code amqp://guest:guest@127.0.0.1:5672/}, with the
   * {@linkplain #DEFAULT_MAX_MESSAGE_SIZE default maximum message size}.
   *
   * @throws BusException naming the URI, with the password hidden, when the broker cannot be
   *     reached or refuses the login
   */
  public static RabbitBus connect(URI uri) {
    return connect(uri, DEFAULT_MAX_MESSAGE_SIZE);
  }

  /**
   * Connects to the broker at the URI.
   *
   * @param maxMessageSize the largest body, in bytes, this bus sends or hands to a consumer; keep
   *     it below the broker's {@code max_message_size}, so that the bus refuses what the broker
   *     would
   * @throws BusException naming the URI, with the password hidden, when the broker cannot be
   *     reached or refuses the login
   */
  public static RabbitBus connect(URI uri, int maxMessageSize) {
    return connect(uri, maxMessageSize, DeadLetterLimits.DEFAULT);
  }

  /**
   * Connects to the broker at the URI, and sets the dead-letter queue's limits (in the background:
   * the bus is usable at once; a broker without the management API keeps the queue as it is, with a
   * warning saying how to set them).
   *
   * @param maxMessageSize as above
   * @param deadLetters the bounds of {@value MessageBus#DEAD_LETTER_QUEUE}
   * @throws BusException naming the URI, with the password hidden, when the broker cannot be
   *     reached or refuses the login
   */
  public static RabbitBus connect(URI uri, int maxMessageSize, DeadLetterLimits deadLetters) {
    RabbitBus bus = open(uri, maxMessageSize);
    Thread.ofVirtual()
        .name("toolhost-dead-letter-policy")
        .start(() -> DeadLetterPolicy.apply(uri, DEAD_LETTER_QUEUE, deadLetters));
    return bus;
  }

  private static RabbitBus open(URI uri, int maxMessageSize) {
    if (maxMessageSize < 1 || maxMessageSize > BROKER_LIMIT) {
      throw new IllegalArgumentException(
          "The maximum message size must be from 1 to " + BROKER_LIMIT + " bytes.");
    }
    String redacted = redact(uri);
    ConnectionFactory factory = new ConnectionFactory();
    try {
      factory.setUri(uri);
    } catch (Exception e) {
      throw new BusException("Invalid message bus URI " + redacted + ": " + e.getMessage());
    }
    if (uri.getPath() == null || uri.getPath().isEmpty() || uri.getPath().equals("/")) {
      // amqp://host:5672/ reads as the empty vhost in the AMQP URI spec; people mean "/".
      factory.setVirtualHost("/");
    }
    factory.setAutomaticRecoveryEnabled(true);
    factory.setTopologyRecoveryEnabled(true);
    factory.setNetworkRecoveryInterval(500);
    factory.setRequestedHeartbeat(10);
    factory.setConnectionTimeout(5_000);
    factory.setMaxInboundMessageBodySize(BROKER_LIMIT);
    factory.setSharedExecutor(Executors.newVirtualThreadPerTaskExecutor());
    try {
      Connection connection = factory.newConnection("toolhost");
      try {
        return new RabbitBus(redacted, connection, maxMessageSize);
      } catch (IOException | RuntimeException e) {
        connection.abort();
        throw e;
      }
    } catch (IOException | TimeoutException | RuntimeException e) {
      String why = why(e);
      throw new BusException("Cannot connect to the message bus at " + redacted + ": " + why, e);
    }
  }

  // One line per letter the dead-letter queue dropped (over a limit, or expired): its call ids and
  // size, so that what was lost can be told. The tool_call_id is read from bodies up to 64 KiB.
  static void logDropped(AMQP.BasicProperties properties, byte[] body) {
    String reason = "dropped";
    String queue = DEAD_LETTER_QUEUE;
    Object deaths = properties.getHeaders() == null ? null : properties.getHeaders().get("x-death");
    if (deaths instanceof List<?> list
        && !list.isEmpty()
        && list.getFirst() instanceof Map<?, ?> latest) {
      reason = String.valueOf(latest.get("reason"));
      queue = String.valueOf(latest.get("queue"));
    }
    String toolCallId = "unknown";
    if (body.length <= 64 * 1024) {
      try {
        JsonNode id = JSON.readTree(body).path("tool_call_id");
        if (id.isString()) {
          toolCallId = id.asString();
        }
      } catch (JacksonException e) {
        toolCallId = "unknown (not JSON)";
      }
    }
    LOG.warn(
        "Dropped a letter from dead-letter queue '{}' ({}): tool_call_id {}, correlation_id {},"
            + " {} bytes",
        queue,
        reason,
        toolCallId,
        properties.getCorrelationId() == null ? "none" : properties.getCorrelationId(),
        body.length);
  }

  private static String why(Throwable e) {
    String why = e.getClass().getSimpleName();
    for (Throwable at = e; at != null; at = at.getCause()) {
      if (at.getMessage() != null && !at.getMessage().isBlank()) {
        why = at.getMessage();
      }
    }
    return why;
  }

  /** The URI with its password replaced by {@code ***}. */
  public static String redact(URI uri) {
    String userInfo = uri.getRawUserInfo();
    if (userInfo == null || !userInfo.contains(":")) {
      return uri.toString();
    }
    String user = userInfo.substring(0, userInfo.indexOf(':'));
    return uri.toString().replace(userInfo + "@", user + ":***@");
  }

  @Override
  public int maxMessageSize() {
    return maxMessageSize;
  }

  @Override
  public void declareQueue(String queue) {
    Map<String, Object> arguments = Map.of("x-dead-letter-exchange", DEAD_LETTER_QUEUE);
    onAdmin(channel -> channel.queueDeclare(queue, true, false, false, arguments));
  }

  @Override
  public void deleteQueue(String queue) {
    onAdmin(channel -> channel.queueDelete(queue));
  }

  @Override
  public int consumerCount(String queue) {
    try (Channel channel = connection.createChannel()) {
      return channel.queueDeclarePassive(queue).getConsumerCount();
    } catch (IOException e) {
      // A passive declare of a missing queue closes its channel with 404.
      return 0;
    } catch (TimeoutException | AlreadyClosedException e) {
      throw notConnected(e);
    }
  }

  @Override
  public void send(String queue, Message message) {
    message.checkSize(queue, maxMessageSize);
    await(publisher().publish("", queue, message, true), queue);
  }

  @Override
  public Subscription consume(String queue, int prefetch, DeliveryHandler handler) {
    try {
      Channel channel = connection.createChannel();
      channel.basicQos(Math.min(prefetch, 65535));
      return consumer(channel, queue, handler);
    } catch (IOException | AlreadyClosedException e) {
      throw new BusException("Cannot consume queue '" + queue + "': " + e.getMessage(), e);
    }
  }

  @Override
  public void publish(String topic, Message message) {
    message.checkSize(topic, maxMessageSize);
    declareTopic(topic);
    await(publisher().publish(topic, "", message, false), topic);
  }

  @Override
  public Subscription subscribe(String topic, DeliveryHandler handler) {
    declareTopic(topic);
    try {
      Channel channel = connection.createChannel();
      String queue = channel.queueDeclare().getQueue();
      channel.queueBind(queue, topic, "");
      return consumer(channel, queue, handler);
    } catch (IOException | AlreadyClosedException e) {
      throw new BusException("Cannot subscribe to topic '" + topic + "': " + e.getMessage(), e);
    }
  }

  @Override
  public Replies request(String queue, Message request, Instant deadline) {
    request.checkSize(queue, maxMessageSize);
    if (recovering) {
      // A reply could find no reply queue yet: the request would run and its answer be lost.
      throw new BusException(
          "The connection to the message bus at " + redacted + " is being recovered.");
    }
    if (!hasConsumers(queue)) {
      throw new NoRouteException(queue);
    }
    Replies replies = correlations.open();
    Message correlated =
        request
            .withCorrelationId(replies.correlationId())
            .withReplyTo(replyQueue)
            .withExpiration(deadline);
    CompletableFuture<Void> confirmed;
    try {
      confirmed = publisher().publish("", queue, correlated, true);
    } catch (RuntimeException e) {
      replies.close();
      throw e;
    }
    // The caller does not wait for the confirm: it waits for the reply, which the confirm precedes
    // unless the broker refused or returned the request; then the failure ends the replies instead.
    confirmed.whenComplete(
        (ok, failed) -> {
          if (failed != null) {
            if (failed instanceof NoRouteException) {
              consumerCounts.remove(queue);
            }
            correlations.fail(replies.correlationId(), failure(failed, queue));
          }
        });
    return replies;
  }

  @Override
  public void replyThenAck(Delivery request, Message reply) {
    Optional<String> to = request.message().replyTo();
    if (to.isEmpty()) {
      LOG.debug("Dropped a reply: the request has no reply-to address");
      request.ack();
      return;
    }
    Message correlated =
        request.message().correlationId().map(reply::withCorrelationId).orElse(reply);
    if (request instanceof RabbitDelivery delivery) {
      delivery.replyThenAck(to.get(), correlated);
    } else {
      MessageBus.super.replyThenAck(request, reply);
    }
  }

  @Override
  public void reply(Message request, Message reply) {
    Optional<String> to = request.replyTo();
    if (to.isEmpty()) {
      LOG.debug("Dropped a reply: the request has no reply-to address");
      return;
    }
    Message correlated = request.correlationId().map(reply::withCorrelationId).orElse(reply);
    await(publisher().publish("", to.get(), correlated, false), to.get());
  }

  @Override
  public void close() {
    if (!closed.compareAndSet(false, true)) {
      return;
    }
    correlations.failAll(new BusClosedException());
    try {
      connection.close(5_000);
    } catch (IOException | AlreadyClosedException e) {
      LOG.debug("Closing the connection to {} failed", redacted, e);
    }
  }

  /** Drops the connection at once, as a process that dies would: no goodbye, no recovery. */
  void abort() {
    closed.set(true);
    connection.abort();
  }

  @Override
  public String toString() {
    return "RabbitBus[" + redacted + "]";
  }

  // A queue's consumers are counted at most once a second: a passive declare per call would cost
  // a round trip. Once a count of some is a second old, one caller counts again (a channel opened
  // and closed, three round trips) while the others go on by the count it had; before, every call
  // in flight then counted at once, opening as many channels on the broker.
  private boolean hasConsumers(String queue) {
    long now = System.nanoTime();
    ConsumerCount known = consumerCounts.get(queue);
    if (known != null && known.count > 0) {
      if (now - known.at < TimeUnit.SECONDS.toNanos(1)
          || !known.counting.compareAndSet(false, true)) {
        return true;
      }
    }
    int count;
    try {
      count = consumerCount(queue);
    } catch (RuntimeException e) {
      if (known != null) {
        known.counting.set(false);
      }
      throw e;
    }
    consumerCounts.put(queue, new ConsumerCount(count, now, new AtomicBoolean()));
    return count > 0;
  }

  private record ConsumerCount(int count, long at, AtomicBoolean counting) {}

  private void connectionLost(ShutdownSignalException cause) {
    if (closed.get() || cause.isInitiatedByApplication()) {
      return;
    }
    LOG.warn("Lost the connection to the message bus at {}: {}", redacted, cause.getMessage());
    // Only a lost connection recovers (and says so); a channel error alone would leave the flag
    // set.
    if (connection instanceof Recoverable && cause.isHardError()) {
      recovering = true;
    }
    consumerCounts.clear();
    correlations.failAll(
        new BusException(
            "The connection to the message bus at "
                + redacted
                + " was lost while waiting for the reply; whether the call ran is unknown."));
  }

  private void declareTopic(String topic) {
    if (declaredTopics.putIfAbsent(topic, Boolean.TRUE) == null) {
      try {
        onAdmin(channel -> channel.exchangeDeclare(topic, BuiltinExchangeType.FANOUT, true));
      } catch (RuntimeException e) {
        declaredTopics.remove(topic);
        throw e;
      }
    }
  }

  private Subscription consumer(Channel channel, String queue, DeliveryHandler handler)
      throws IOException {
    AtomicBoolean stopped = new AtomicBoolean();
    String tag =
        channel.basicConsume(
            queue,
            false,
            new DefaultConsumer(channel) {
              @Override
              public void handleDelivery(
                  String consumerTag,
                  Envelope envelope,
                  AMQP.BasicProperties properties,
                  byte[] body) {
                if (body.length > maxMessageSize) {
                  tooLarge(channel, envelope, properties, body.length, queue, handler);
                  return;
                }
                Message message = message(properties, body);
                if (message.expiredAt(Instant.now())) {
                  // The broker drops expired messages at the head of the queue only.
                  settle(channel, envelope.getDeliveryTag(), false);
                  return;
                }
                RabbitDelivery delivery =
                    new RabbitDelivery(channel, envelope, message, stopped, queue);
                try {
                  handler.handle(delivery);
                } catch (RuntimeException e) {
                  LOG.warn("A consumer of '{}' threw; the message goes back", queue, e);
                }
              }
            });
    return () -> {
      if (stopped.compareAndSet(false, true)) {
        try {
          channel.basicCancel(tag);
          // Closing the channel puts its unsettled messages back on the queue.
          channel.close();
        } catch (IOException | TimeoutException | AlreadyClosedException e) {
          LOG.debug("Closing the consumer of '{}' failed", queue, e);
        }
      }
    };
  }

  // Dead-letters a delivery over the maximum size, once: rejected without requeue, it never comes
  // back, and the connection stays up.
  private void tooLarge(
      Channel channel,
      Envelope envelope,
      AMQP.BasicProperties properties,
      long size,
      String queue,
      DeliveryHandler handler) {
    settle(channel, envelope.getDeliveryTag(), false);
    LOG.warn(
        "Dead-lettered a message of {} bytes on '{}': over the limit of {} bytes",
        size,
        queue,
        maxMessageSize);
    try {
      handler.tooLarge(message(properties, new byte[0]), size);
    } catch (RuntimeException e) {
      LOG.warn("A consumer of '{}' threw on an oversized message", queue, e);
    }
  }

  private static void settle(Channel channel, long tag, boolean ack) {
    try {
      if (ack) {
        channel.basicAck(tag, false);
      } else {
        channel.basicReject(tag, false);
      }
    } catch (IOException | AlreadyClosedException e) {
      // The channel closed: the broker puts the message back and delivers it again.
      LOG.debug("Settling a delivery failed; it will be delivered again", e);
    }
  }

  private final class RabbitDelivery implements Delivery {
    private final Channel channel;
    private final Envelope envelope;
    private final Message message;
    private final AtomicBoolean stopped;
    private final AtomicBoolean settled = new AtomicBoolean();

    RabbitDelivery(
        Channel channel, Envelope envelope, Message message, AtomicBoolean stopped, String queue) {
      this.channel = channel;
      this.envelope = envelope;
      this.message = message;
      this.stopped = stopped;
    }

    @Override
    public Message message() {
      return message;
    }

    @Override
    public boolean redelivered() {
      return envelope.isRedeliver();
    }

    @Override
    public void ack() {
      if (!stopped.get() && settled.compareAndSet(false, true)) {
        settle(channel, envelope.getDeliveryTag(), true);
      }
    }

    @Override
    public void deadLetter(String reason) {
      if (!stopped.get() && settled.compareAndSet(false, true)) {
        settle(channel, envelope.getDeliveryTag(), false);
      }
    }

    /**
     * Publishes the reply on the channel the request came on, then acknowledges the request on the
     * same channel. The broker handles a channel's commands in the order they were sent, so the
     * acknowledgement never takes effect before the reply was routed, and no confirm round trip is
     * needed for it; when the publish fails, the request is not acknowledged and comes again.
     */
    void replyThenAck(String to, Message reply) {
      if (stopped.get() || !settled.compareAndSet(false, true)) {
        return;
      }
      byte[] body = reply.body().getBytes(StandardCharsets.UTF_8);
      AMQP.BasicProperties properties = properties(reply).build();
      try {
        // Both on this thread, one after the other: nothing can reorder them on the channel.
        channel.basicPublish("", to, false, properties, body);
        channel.basicAck(envelope.getDeliveryTag(), false);
      } catch (IOException | AlreadyClosedException e) {
        LOG.warn(
            "Could not reply to '{}'; the request will be delivered again: {}", to, e.getMessage());
      }
    }
  }

  private static Message message(AMQP.BasicProperties properties, byte[] body) {
    Map<String, String> headers = new HashMap<>();
    if (properties.getHeaders() != null) {
      properties.getHeaders().forEach((key, value) -> headers.put(key, String.valueOf(value)));
    }
    Optional<Instant> expiration = Optional.empty();
    if (headers.containsKey(Message.EXPIRES_AT_HEADER)) {
      try {
        expiration =
            Optional.of(
                Instant.ofEpochMilli(Long.parseLong(headers.get(Message.EXPIRES_AT_HEADER))));
      } catch (NumberFormatException e) {
        // Not ours to judge: the message is delivered with no expiry.
      }
    }
    return new Message(
        new String(body, StandardCharsets.UTF_8),
        headers,
        Optional.ofNullable(properties.getCorrelationId()),
        Optional.ofNullable(properties.getReplyTo()),
        expiration,
        headers.containsKey(Message.ID_HEADER) || headers.containsKey(Message.EXPIRES_AT_HEADER));
  }

  // Every property costs the broker and both clients a little on every message. A message id is set
  // only on a mandatory publish without a correlation id, to match its return; requests are matched
  // by their correlation id. Headers go only where the message asks for them (tool services'
  // traffic): a table of two headers took about 7% of the request/reply throughput here.
  private static AMQP.BasicProperties.Builder properties(Message message) {
    AMQP.BasicProperties.Builder builder =
        new AMQP.BasicProperties.Builder().contentType("application/json").deliveryMode(1);
    message.correlationId().ifPresent(builder::correlationId);
    message.replyTo().ifPresent(builder::replyTo);
    message
        .expiration()
        .ifPresent(
            at ->
                builder.expiration(
                    Long.toString(Math.max(1, Instant.now().until(at, ChronoUnit.MILLIS)))));
    if (!message.headers().isEmpty() || message.propertyHeaders()) {
      Map<String, Object> headers = new HashMap<>(message.headers());
      if (message.propertyHeaders()) {
        message.correlationId().ifPresent(id -> headers.putIfAbsent(Message.ID_HEADER, id));
        message
            .expiration()
            .ifPresent(
                at -> headers.put(Message.EXPIRES_AT_HEADER, Long.toString(at.toEpochMilli())));
      }
      builder.headers(headers);
    }
    return builder;
  }

  // Unique per bus without a SecureRandom draw per message; only returns need to find it.
  private String nextMessageId() {
    return messageIds + Long.toHexString(nextMessageId.incrementAndGet());
  }

  private Publisher publisher() {
    if (closed.get()) {
      throw new BusClosedException();
    }
    // The next publisher in turn, or the first after it that nobody holds: a publish waits for
    // another only when every channel is busy.
    int start = nextPublisher.getAndIncrement();
    for (int i = 0; i < publishers.size(); i++) {
      Publisher candidate = publishers.get(Math.floorMod(start + i, publishers.size()));
      if (!candidate.lock.isLocked()) {
        return candidate;
      }
    }
    return publishers.get(Math.floorMod(start, publishers.size()));
  }

  private void await(CompletableFuture<Void> confirmed, String where) {
    await(confirmed, where, Instant.now().plus(CONFIRM_TIMEOUT));
  }

  private BusException failure(Throwable failed, String where) {
    if (failed instanceof BusException bus) {
      return bus instanceof NoRouteException
          ? new NoRouteException(where)
          : new BusException(bus.getMessage(), bus);
    }
    return new BusException("Publishing to '" + where + "' failed: " + failed.getMessage(), failed);
  }

  private void await(CompletableFuture<Void> confirmed, String where, Instant deadline) {
    long wait =
        Math.min(
            CONFIRM_TIMEOUT.toMillis(),
            Math.max(1, Instant.now().until(deadline, ChronoUnit.MILLIS)));
    try {
      confirmed.get(wait, TimeUnit.MILLISECONDS);
    } catch (ExecutionException e) {
      throw failure(e.getCause(), where);
    } catch (TimeoutException e) {
      throw new BusException(
          "The broker at " + redacted + " did not confirm a message to '" + where + "' in time.");
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new BusException("Interrupted while publishing to '" + where + "'.");
    }
  }

  private BusException notConnected(Exception e) {
    return new BusException(
        "The message bus at " + redacted + " is not connected: " + e.getMessage(), e);
  }

  @FunctionalInterface
  private interface AdminAction {
    void run(Channel channel) throws IOException;
  }

  private synchronized void onAdmin(AdminAction action) {
    try {
      action.run(admin);
    } catch (IOException | AlreadyClosedException e) {
      throw new BusException("The broker at " + redacted + " refused: " + e.getMessage(), e);
    }
  }

  /** One confirm-mode channel; publishes are serialized on it, confirms are asynchronous. */
  private final class Publisher {
    private final Channel channel;
    // A lock, not a monitor: a contended monitor spins before it parks, burning the CPU that the
    // broker and the other side of the call need.
    private final ReentrantLock lock = new ReentrantLock();
    private final ConcurrentNavigableMap<Long, CompletableFuture<Void>> unconfirmed =
        new ConcurrentSkipListMap<>();
    // Mandatory publishes not confirmed yet, by the id their return would carry.
    private final Map<String, CompletableFuture<Void>> byReturnId = new ConcurrentHashMap<>();

    Publisher(Channel channel) throws IOException {
      this.channel = channel;
      channel.confirmSelect();
      channel.addConfirmListener(
          (seq, multiple) -> confirm(seq, multiple, null),
          (seq, multiple) ->
              confirm(seq, multiple, new BusException("The broker refused a message (nack).")));
      // The broker sends basic.return before basic.ack for the same message.
      channel.addReturnListener(
          returned -> {
            AMQP.BasicProperties properties = returned.getProperties();
            String id =
                properties.getCorrelationId() != null
                    ? properties.getCorrelationId()
                    : properties.getMessageId();
            CompletableFuture<Void> future = id == null ? null : byReturnId.get(id);
            if (future != null) {
              future.completeExceptionally(new NoRouteException(returned.getRoutingKey()));
            }
          });
      channel.addShutdownListener(
          cause -> {
            BusException lost =
                new BusException(
                    "The connection to the message bus at "
                        + redacted
                        + " was lost before the broker confirmed the message.");
            unconfirmed.values().forEach(future -> future.completeExceptionally(lost));
            unconfirmed.clear();
          });
    }

    private void confirm(long seq, boolean multiple, BusException failure) {
      ConcurrentNavigableMap<Long, CompletableFuture<Void>> done =
          multiple ? unconfirmed.headMap(seq, true) : unconfirmed.subMap(seq, true, seq, true);
      for (CompletableFuture<Void> future : done.values()) {
        if (failure == null) {
          future.complete(null);
        } else {
          future.completeExceptionally(failure);
        }
      }
      done.clear();
    }

    CompletableFuture<Void> publish(
        String exchange, String routingKey, Message message, boolean mandatory) {
      byte[] body = message.body().getBytes(StandardCharsets.UTF_8);
      if (body.length > maxMessageSize) {
        throw new MessageTooLargeException(
            exchange.isEmpty() ? routingKey : exchange, body.length, maxMessageSize);
      }
      AMQP.BasicProperties.Builder builder = properties(message);
      CompletableFuture<Void> future = new CompletableFuture<>();
      if (mandatory) {
        String returnId;
        if (message.correlationId().isPresent()) {
          returnId = message.correlationId().get();
        } else {
          returnId = nextMessageId();
          builder.messageId(returnId);
        }
        byReturnId.put(returnId, future);
        future.whenComplete((ok, failed) -> byReturnId.remove(returnId, future));
      }
      AMQP.BasicProperties properties = builder.build();
      lock.lock();
      try {
        long seq = channel.getNextPublishSeqNo();
        unconfirmed.put(seq, future);
        channel.basicPublish(exchange, routingKey, mandatory, properties, body);
      } catch (IOException | AlreadyClosedException e) {
        future.completeExceptionally(notConnected(e));
      } finally {
        lock.unlock();
      }
      return future;
    }
  }
}
