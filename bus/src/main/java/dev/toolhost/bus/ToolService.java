package dev.toolhost.bus;

import java.time.Duration;
import java.util.List;
import java.util.Objects;
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
 */
public abstract class ToolService implements AutoCloseable {

  private static final Logger LOG = LoggerFactory.getLogger(ToolService.class);
  private static final JsonMapper JSON = JsonMapper.shared();

  private final MessageBus bus;
  private final ToolServiceDescriptor descriptor;
  private final List<ToolDescriptor> tools;
  private final Duration heartbeat = Duration.ofSeconds(5);
  private final String instanceId = UUID.randomUUID().toString();
  private Subscription subscription;
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
    Thread.ofVirtual()
        .start(
            () -> {
              Message in = delivery.message();
              try {
                Object response =
                    invoke(
                        new Request(
                            request.path("user").asString(""),
                            request,
                            request.path("arguments"),
                            partial -> bus.reply(in, reply(partial, null, false))));
                bus.reply(in, reply(response, null, true));
              } catch (BusException e) {
                LOG.warn("Could not reply on '{}': {}", descriptor.requestQueue(), e.getMessage());
                return;
              } catch (Exception e) {
                bus.reply(in, reply(null, e, true));
              }
              delivery.ack();
            });
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
  }
}
