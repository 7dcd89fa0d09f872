package dev.toolhost.rabbitmq;

import java.io.IOException;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Base64;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import tools.jackson.databind.json.JsonMapper;
import tools.jackson.databind.node.ObjectNode;

/**
 * The dead-letter policy is the RabbitMQ policy that puts {@link DeadLetterLimits} on a dead-letter
 * queue, named after the queue and matching it alone, set over the management HTTP API ({@code PUT
 * /api/policies/{vhost}/{name}}).
 *
 * <p>A policy, not queue arguments: it applies to a queue that already exists, and it leaves every
 * client's plain declare of the queue valid (see {@link DeadLetterLimits}). A user policy, not an
 * operator policy: only a user policy may name a dead-letter exchange, and the queue's dropped
 * letters go to {@value #DROPPED} so that a host can log them. Overflow is {@code drop-head}: the
 * oldest letter goes first. Priority {@value #PRIORITY}: RabbitMQ applies one user policy per
 * queue, the highest, so this one wins over a broader policy of the operator's for this queue only.
 *
 * <p>Setting it needs the management plugin and a user tagged {@code policymaker} or {@code
 * administrator}. When that fails it logs a warning with the {@code rabbitmqctl set_policy} command
 * that sets the same policy, and returns false; it never throws.
 */
final class DeadLetterPolicy {

  /** The exchange and queue that letters dropped from the dead-letter queue go to, to be logged. */
  static final String DROPPED = "toolhost.dead_letter.dropped";

  /** The policy's priority among user policies matching the queue. */
  static final int PRIORITY = 10;

  private static final Logger LOG = LoggerFactory.getLogger(DeadLetterPolicy.class);
  private static final JsonMapper JSON = JsonMapper.shared();
  private static final Duration TIMEOUT = Duration.ofSeconds(5);

  private DeadLetterPolicy() {}

  /** The policy's definition: its limits, drop-head, and the exchange of dropped letters. */
  static ObjectNode definition(DeadLetterLimits limits) {
    ObjectNode definition = JSON.createObjectNode();
    definition.put("max-length", limits.maxLength());
    definition.put("max-length-bytes", limits.maxBytes());
    definition.put("message-ttl", limits.ttl().toMillis());
    definition.put("overflow", "drop-head");
    definition.put("dead-letter-exchange", DROPPED);
    return definition;
  }

  /**
   * Sets the policy on a queue of the broker that the AMQP URI names.
   *
   * @return whether the broker took it
   */
  static boolean apply(URI amqp, String queue, DeadLetterLimits limits) {
    String vhost = vhost(amqp);
    URI management = limits.management().orElseGet(() -> management(amqp));
    ObjectNode policy = JSON.createObjectNode();
    policy.put("pattern", "^" + queue.replaceAll("([^A-Za-z0-9_])", "\\\\$1") + "$");
    policy.put("apply-to", "queues");
    policy.put("priority", PRIORITY);
    policy.set("definition", definition(limits));
    URI target = management.resolve("/api/policies/" + encode(vhost) + "/" + encode(queue));
    HttpRequest.Builder request =
        HttpRequest.newBuilder(target)
            .timeout(TIMEOUT)
            .header("Content-Type", "application/json")
            .PUT(HttpRequest.BodyPublishers.ofString(policy.toString()));
    request.header("Authorization", "Basic " + credentials(amqp));
    String command =
        "rabbitmqctl set_policy --vhost '"
            + vhost
            + "' --apply-to queues --priority "
            + PRIORITY
            + " '"
            + queue
            + "' '"
            + policy.get("pattern").asString()
            + "' '"
            + definition(limits)
            + "'";
    try (HttpClient http =
        HttpClient.newBuilder()
            .version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(TIMEOUT)
            .build()) {
      HttpResponse<String> response =
          http.send(request.build(), HttpResponse.BodyHandlers.ofString());
      if (response.statusCode() / 100 == 2) {
        LOG.debug("Set the dead-letter limits on queue '{}': {}", queue, definition(limits));
        return true;
      }
      LOG.warn(
          "Could not set the limits of dead-letter queue '{}' (the management API at {} answered"
              + " {}); it stays as it is. Set them with: {}",
          queue,
          management,
          response.statusCode(),
          command);
    } catch (IOException e) {
      LOG.warn(
          "Could not set the limits of dead-letter queue '{}' (no management API at {}: {}); it"
              + " stays as it is. Enable the management plugin, or set them with: {}",
          queue,
          management,
          e.getMessage() == null ? e.getClass().getSimpleName() : e.getMessage(),
          command);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    return false;
  }

  // The management API of the broker: its host, port 15672 (15671 over TLS).
  private static URI management(URI amqp) {
    boolean tls = "amqps".equals(amqp.getScheme());
    return URI.create(
        (tls ? "https://" : "http://") + amqp.getHost() + ":" + (tls ? 15671 : 15672) + "/");
  }

  // The bus's own login: the AMQP URI's user and password, or guest:guest as amqp-client uses when
  // the URI names nobody.
  private static String credentials(URI amqp) {
    String userInfo = amqp.getUserInfo();
    return encodeBasic(
        userInfo == null ? "guest:guest" : userInfo.contains(":") ? userInfo : userInfo + ":");
  }

  private static String encodeBasic(String userInfo) {
    return Base64.getEncoder().encodeToString(userInfo.getBytes(StandardCharsets.UTF_8));
  }

  private static String vhost(URI amqp) {
    String path = amqp.getPath();
    return path == null || path.isEmpty() || path.equals("/") ? "/" : path.substring(1);
  }

  private static String encode(String text) {
    return URLEncoder.encode(text, StandardCharsets.UTF_8).replace("+", "%20");
  }
}
