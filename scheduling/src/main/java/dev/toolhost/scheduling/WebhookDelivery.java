package dev.toolhost.scheduling;

import dev.toolhost.web.OutboundException;
import dev.toolhost.web.OutboundHttp;
import dev.toolhost.web.OutboundPolicy;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.Objects;
import tools.jackson.databind.json.JsonMapper;
import tools.jackson.databind.node.ObjectNode;

/**
 * A webhook delivery posts a scheduled task's runs to the URL the task names ({@code delivery:
 * {webhook: URL}}), through the web module's {@link OutboundHttp}: the URL's text is checked as a
 * fetch's is; its host must be one the config's {@code scheduling.webhooks.allow} lists, when the
 * task is scheduled and again at each post (a host taken off the list is posted to no more); the
 * addresses it resolves to are vetted where the connection is made (a listed host is reached
 * wherever it resolves, a cloud metadata address never); and a redirect is not followed.
 *
 * <p>The body is JSON: {@code task} (its name), {@code due}, {@code started}, {@code ended}, {@code
 * status} and {@code result}. What became of a post is said with the URL's origin only, never its
 * path or query, where a webhook's secret often is. Thread-safe; close it to stop its client.
 */
final class WebhookDelivery implements AutoCloseable {

  /** The most of an answer read: a webhook's answer is a status, not content. */
  private static final long ANSWER_BYTES = 64 * 1024;

  private static final JsonMapper JSON = JsonMapper.shared();

  private final OutboundPolicy policy;
  private final OutboundHttp client;

  /** A delivery to the hosts the config allows, its client started. */
  WebhookDelivery(SchedulingConfig.Webhooks webhooks) {
    OutboundPolicy allowed =
        OutboundPolicy.defaults().withCaps(0, ANSWER_BYTES, webhooks.timeout());
    for (String host : webhooks.allow()) {
      allowed = allowed.allowingHost(host);
    }
    this.policy = allowed;
    this.client = OutboundHttp.start(allowed);
  }

  /**
   * The URL a task's results may be posted to.
   *
   * @throws IllegalArgumentException naming what is wrong: not an http or https URL, or a host the
   *     config does not list
   */
  URI checked(String text) {
    URI url;
    try {
      url = OutboundHttp.checkedUrl(text);
    } catch (OutboundException e) {
      throw new IllegalArgumentException("the webhook is refused: " + e.getMessage());
    }
    if (!allowed(url)) {
      throw new IllegalArgumentException(
          "the webhook's host '"
              + url.getHost()
              + "' is not one this host posts to (scheduling.webhooks.allow lists them).");
    }
    return url;
  }

  private boolean allowed(URI url) {
    String host = url.getHost();
    String bare =
        host.startsWith("[") && host.endsWith("]") ? host.substring(1, host.length() - 1) : host;
    return policy.hostAllowed(bare);
  }

  /**
   * Posts the run to the task's webhook.
   *
   * @return what became of it, naming the URL's origin
   * @throws InterruptedException when the host stops meanwhile
   */
  String post(URI url, ScheduledTask task, TaskRun run) throws InterruptedException {
    String origin = origin(url);
    if (!allowed(url)) {
      return "webhook: not posted to "
          + origin
          + ": its host is no longer one scheduling.webhooks.allow lists";
    }
    ObjectNode body = JSON.createObjectNode();
    body.put("task", task.name());
    body.put("due", run.due().toString());
    run.started().ifPresent(at -> body.put("started", at.toString()));
    run.ended().ifPresent(at -> body.put("ended", at.toString()));
    body.put("status", run.status().wireName());
    body.put("result", run.output());
    try {
      OutboundHttp.Response answer =
          client.post(
              url, Map.of(), "application/json", body.toString().getBytes(StandardCharsets.UTF_8));
      return answer.ok()
          ? "webhook: posted to " + origin + " (HTTP " + answer.status() + ")"
          : "webhook: " + origin + " answered HTTP " + answer.status();
    } catch (OutboundException e) {
      String message = Objects.requireNonNullElse(e.getMessage(), e.reason().name());
      return "webhook: not posted to " + origin + ": " + message.replace(url.toString(), origin);
    }
  }

  /** The URL's scheme, host and port: what may be said of it. */
  static String origin(URI url) {
    return url.getScheme() + "://" + url.getRawAuthority();
  }

  @Override
  public void close() {
    client.close();
  }
}
