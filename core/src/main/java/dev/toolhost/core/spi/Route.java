package dev.toolhost.core.spi;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;

/**
 * A route is one HTTP endpoint an extension adds to its host: a method, an exact path, and the
 * handler that answers it. The host serves it behind its request guard, on a virtual thread, so a
 * handler may block.
 *
 * <p>Requests and answers are plain records rather than a web server's types, so that an extension
 * depends on core alone.
 *
 * @param method the HTTP method, such as {@code GET}
 * @param path the exact path, such as {@code /v1/weather}
 * @param handler what answers it
 */
public record Route(String method, String path, Handler handler) {

  public Route {
    Objects.requireNonNull(method, "method");
    Objects.requireNonNull(path, "path");
    Objects.requireNonNull(handler, "handler");
    if (!path.startsWith("/")) {
      throw new IllegalArgumentException("A route's path must start with '/': " + path);
    }
  }

  /** A handler answers the requests of one route. */
  @FunctionalInterface
  public interface Handler {
    /**
     * Answers a request. A thrown exception is answered 500 with a message that says nothing of it;
     * the exception goes to the host's log.
     */
    Answer answer(Request request) throws Exception;
  }

  /**
   * One request to a route.
   *
   * @param method the HTTP method
   * @param path the decoded path
   * @param query the query parameters, each with its values in order
   * @param body the body, empty when there is none (at most the host's size limit)
   */
  public record Request(String method, String path, Map<String, List<String>> query, byte[] body) {
    public Request {
      Objects.requireNonNull(method, "method");
      Objects.requireNonNull(path, "path");
      query = Map.copyOf(query);
      Objects.requireNonNull(body, "body");
    }

    /** The first value of a query parameter, if given. */
    public Optional<String> parameter(String name) {
      List<String> values = query.get(name);
      return values == null || values.isEmpty() ? Optional.empty() : Optional.of(values.get(0));
    }

    /** The body as UTF-8 text. */
    public String text() {
      return new String(body, StandardCharsets.UTF_8);
    }
  }

  /**
   * One answer: a status, a content type and a body.
   *
   * @param status the HTTP status
   * @param contentType the body's media type
   * @param body the body
   */
  public record Answer(int status, String contentType, byte[] body) {
    public Answer {
      Objects.requireNonNull(contentType, "contentType");
      Objects.requireNonNull(body, "body");
    }

    /** A 200 answer of JSON text. */
    public static Answer json(String json) {
      return new Answer(200, "application/json", json.getBytes(StandardCharsets.UTF_8));
    }
  }
}
