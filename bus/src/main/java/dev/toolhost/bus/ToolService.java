package dev.toolhost.bus;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.UUID;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import tools.jackson.core.JacksonException;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;
import tools.jackson.databind.node.ObjectNode;

/**
 * A tool service is a process that answers tool-service requests on its queue; subclass it and
 * write {@link #invoke}. A few lines make a service:
 *
 * <pre>{@code
 * new ToolService(bus, descriptor, List.of(tool)) {
 *   protected Object invoke(Request request) {
 *     return "Hello, " + request.arguments().path("name").asString();
 *   }
 * }.start();
 * }</pre>
 *
 * <p>Each request runs on a virtual thread. The returned value is the response (a string, or any
 * JSON value); a thrown exception answers {@code {error: {type, message}}} with the exception's
 * simple class name and message. {@link Request#emit} streams partial responses before the last.
 * When given tool descriptors, the service announces itself on {@value ToolWorker#ANNOUNCE_TOPIC}
 * at start and every heartbeat, and says goodbye on {@link #close()}, so hosts register its tools
 * with no config change. A request that is not a JSON object is dead-lettered with a log line.
 *
 * <p>A service hears cancels on {@link ToolServiceExecutor#cancelTopic}: the request a cancel names
 * by correlation id has its thread interrupted ({@link #invoke} should stop when it is) and is
 * answered an error of type {@value ToolServiceExecutor#CANCELLED_TYPE}; a cancel that comes before
 * its request is remembered until the request's expiry, and the request is answered so without
 * running.
 */
public abstract class ToolService implements AutoCloseable {

  private static final Logger LOG = LoggerFactory.getLogger(ToolService.class);
  private static final JsonMapper JSON = JsonMapper.shared();

  private final MessageBus bus;
  private final ToolServiceDescriptor descriptor;
  private final List<ToolDescriptor> tools;
  private final Duration heartbeat = Duration.ofSeconds(5);
  private final String instanceId = UUID.randomUUID().toString();
  private final Cancellations cancellations = new Cancellations();
  private Subscription subscription;
  private Subscription cancels;
  private Thread heartbeats;

  /** A service answering on the descriptor's queue, announcing the given tools (may be none). */
  protected ToolService(
      MessageBus bus, ToolServiceDescriptor descriptor, List<ToolDescriptor> tools) {
    this.bus = Objects.requireNonNull(bus, "bus");
    this.descriptor = Objects.requireNonNull(descriptor, "descriptor");
    this.tools = List.copyOf(tools);
  }

  /**
   * One request to the service.
   *
   * @param user the user the call acts for ({@code ""} when unknown)
   * @param envelope the whole request: user, config values and arguments
   * @param arguments the arguments the model gave
   */
  public record Request(String user, JsonNode envelope, JsonNode arguments, Emitter emitter) {
    /** The config value of the given param, or a missing node. */
    public JsonNode config(String name) {
      return envelope.path(name);
    }

    /** Sends a partial response before the final one. */
    public void emit(Object partial) {
      emitter.emit(partial);
    }
  }

  /** Sends partial responses of one request. */
  @FunctionalInterface
  public interface Emitter {
    /** Sends one partial response. */
    void emit(Object partial);
  }

  /**
   * Answers one request.
   *
   * @return the response: a string, or a value that becomes JSON
   * @throws Exception to answer an error
   */
  protected abstract Object invoke(Request request) throws Exception;

  /** Declares the queue, starts answering, and announces the tools if there are any. */
  public synchronized ToolService start() {
    bus.declareQueue(descriptor.requestQueue());
    cancels =
        bus.subscribe(ToolServiceExecutor.cancelTopic(descriptor.requestQueue()), this::cancel);
    subscription = bus.consume(descriptor.requestQueue(), 64, this::handle);
    if (!tools.isEmpty()) {
      announce("announce");
      heartbeats =
          Thread.ofVirtual()
              .start(
                  () -> {
                    try {
                      while (true) {
                        Thread.sleep(heartbeat);
                        announce("announce");
                      }
                    } catch (InterruptedException e) {
                      Thread.currentThread().interrupt();
                    }
                  });
    }
    return this;
  }

  private void handle(Delivery delivery) {
    JsonNode envelope;
    try {
      envelope = JSON.readTree(delivery.message().body());
    } catch (JacksonException e) {
      envelope = null;
    }
    if (envelope == null || !envelope.isObject()) {
      LOG.warn(
          "Dead-lettered a message on '{}': not a JSON object request envelope",
          descriptor.requestQueue());
      delivery.deadLetter("not a JSON object");
      return;
    }
    JsonNode request = envelope;
    Message in = delivery.message();
    // Every Toolhost caller sets a correlation id; a request without one cannot be cancelled.
    String id =
        in.correlationId()
            .or(() -> Optional.ofNullable(in.headers().get(Message.ID_HEADER)))
            .orElse(UUID.randomUUID().toString());
    Thread.ofVirtual()
        .start(
            () -> {
              if (!cancellations.start(id)) {
                answer(delivery, cancelled("It was cancelled before it ran; nothing was done."));
                return;
              }
              Message last;
              try {
                Object response =
                    invoke(
                        new Request(
                            request.path("user").asString(""),
                            request,
                            request.path("arguments"),
                            partial -> bus.reply(in, reply(partial, null, false))));
                last = reply(response, null, true);
              } catch (BusException e) {
                cancellations.end(id);
                LOG.warn("Could not reply on '{}': {}", descriptor.requestQueue(), e.getMessage());
                return;
              } catch (Exception e) {
                last = reply(null, e, true);
              }
              if (cancellations.end(id)) {
                last =
                    cancelled(
                        "It was cancelled while it ran; some of its work may have been done.");
              }
              answer(delivery, last);
            });
  }

  private void answer(Delivery delivery, Message reply) {
    try {
      bus.reply(delivery.message(), reply);
    } catch (BusException e) {
      LOG.warn("Could not reply on '{}': {}", descriptor.requestQueue(), e.getMessage());
      return;
    }
    delivery.ack();
  }

  /**
   * Takes a cancel from the service's cancel topic: the request with its correlation id, when it
   * runs here, has its thread interrupted and is answered an error of type {@value
   * ToolServiceExecutor#CANCELLED_TYPE}; one that does not run here is remembered until its expiry,
   * so that it is answered so without running if it comes later.
   */
  private void cancel(Delivery delivery) {
    delivery.ack();
    Message cancel = delivery.message();
    Optional<String> id =
        cancel
            .correlationId()
            .or(() -> Optional.ofNullable(cancel.headers().get(Message.ID_HEADER)));
    if (id.isEmpty()) {
      LOG.warn(
          "Dropped a cancel on '{}' without a correlation id",
          ToolServiceExecutor.cancelTopic(descriptor.requestQueue()));
      return;
    }
    cancellations.cancel(
        id.get(), cancel.expiration().orElse(Instant.now().plus(Cancellations.LONGEST)));
  }

  private static Message cancelled(String why) {
    ObjectNode body = JSON.createObjectNode();
    body.putNull("response");
    ObjectNode failure = body.putObject("error");
    failure.put("type", ToolServiceExecutor.CANCELLED_TYPE);
    failure.put("message", why);
    body.put("end_of_message", true);
    return Message.of(body.toString()).withPropertyHeaders();
  }

  private static Message reply(Object response, Exception error, boolean end) {
    ObjectNode body = JSON.createObjectNode();
    if (error != null) {
      body.putNull("response");
      ObjectNode failure = body.putObject("error");
      failure.put("type", error.getClass().getSimpleName());
      failure.put("message", error.getMessage() == null ? "" : error.getMessage());
    } else {
      body.set("response", JSON.valueToTree(response));
      body.putNull("error");
    }
    body.put("end_of_message", end);
    return Message.of(body.toString()).withPropertyHeaders();
  }

  private void announce(String type) {
    ObjectNode body = JSON.createObjectNode();
    body.put("type", type);
    body.put("worker_id", instanceId);
    body.put("heartbeat_ms", heartbeat.toMillis());
    ObjectNode service = body.putObject("service");
    service.put("id", descriptor.id());
    service.put("topic", descriptor.requestQueue());
    var params = service.putArray("config-params");
    descriptor
        .configParams()
        .forEach(p -> params.addObject().put("name", p.name()).put("required", p.required()));
    var list = body.putArray("tools");
    tools.forEach(tool -> list.add(tool.toJson()));
    try {
      bus.publish(ToolWorker.ANNOUNCE_TOPIC, Message.of(body.toString()));
    } catch (BusException e) {
      LOG.warn("Tool service '{}' could not announce itself: {}", descriptor.id(), e.getMessage());
    }
  }

  /** Says goodbye (when it announced) and stops answering. */
  @Override
  public synchronized void close() {
    if (heartbeats != null) {
      heartbeats.interrupt();
      announce("goodbye");
    }
    if (subscription != null) {
      subscription.close();
      subscription = null;
    }
    if (cancels != null) {
      cancels.close();
      cancels = null;
    }
  }
}
