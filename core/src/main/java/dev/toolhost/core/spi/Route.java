package dev.toolhost.core.spi;

import dev.toolhost.core.ApiError;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.regex.Pattern;

/**
 * A route is one HTTP endpoint an extension adds to its host: a method, a path, and the handler
 * that answers it. The host serves it behind its request guard, on a virtual thread, so a handler
 * may block.
 *
 * <p>A path is exact ({@code /v1/schedules}), or a template with one variable segment in braces
 * ({@code /v1/schedules/{name}/runs}), which matches any one non-empty segment there; the handler
 * reads it with {@link #variable}. An exact route wins over a template that matches the same path.
 *
 * <p>Requests and answers are plain records rather than a web server's types, so that an extension
 * depends on core alone.
 *
 * @param method the HTTP method, such as {@code GET}
 * @param path the exact path, such as {@code /v1/weather}, or a template with one variable segment,
 *     such as {@code /v1/weather/{city}}
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
    long variables = path.chars().filter(c -> c == '{').count();
    if (variables > 1
        || variables != path.chars().filter(c -> c == '}').count()
        || variables == 1 && !VARIABLE.matcher(path).matches()) {
      throw new IllegalArgumentException(
          "A route's path may hold one variable, a whole segment such as {name}: " + path);
    }
  }

  private static final Pattern VARIABLE = Pattern.compile("(/[^{}]*)*/\\{[a-z_]+\\}(/[^{}]*)*");

  /** Whether the path is a template with a variable segment. */
  public boolean templated() {
    return path.indexOf('{') >= 0;
  }

  /** Whether a request's path is this route's: equal to it, or matching its template. */
  public boolean matches(String requestPath) {
    return templated() ? variable(requestPath).isPresent() : path.equals(requestPath);
  }

  /**
   * The value of the template's variable segment in a request's path ({@code paris} for {@code
   * /v1/weather/paris} on {@code /v1/weather/{city}}); empty when the path does not match, or the
   * route is exact.
   */
  public Optional<String> variable(String requestPath) {
    int open = path.indexOf('{');
    if (open < 0) {
      return Optional.empty();
    }
    String prefix = path.substring(0, open);
    String suffix = path.substring(path.indexOf('}') + 1);
    if (requestPath.length() <= prefix.length() + suffix.length()
        || !requestPath.startsWith(prefix)
        || !requestPath.endsWith(suffix)) {
      return Optional.empty();
    }
    String value = requestPath.substring(prefix.length(), requestPath.length() - suffix.length());
    return value.contains("/") ? Optional.empty() : Optional.of(value);
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
   * @param headers the request's headers, names in lower case, each with its values in order
   * @param principal who the request comes from, as the front's check of its credential found
   */
  public record Request(
      String method,
      String path,
      Map<String, List<String>> query,
      byte[] body,
      Map<String, List<String>> headers,
      Principal principal) {
    public Request {
      Objects.requireNonNull(method, "method");
      Objects.requireNonNull(principal, "principal");
      Objects.requireNonNull(path, "path");
      query = Map.copyOf(query);
      Objects.requireNonNull(body, "body");
      Map<String, List<String>> lower = new java.util.LinkedHashMap<>();
      headers.forEach(
          (name, values) ->
              lower
                  .computeIfAbsent(
                      name.toLowerCase(java.util.Locale.ROOT), n -> new java.util.ArrayList<>())
                  .addAll(values));
      headers = Map.copyOf(lower);
    }

    /** A request without headers, from the operator (a test's, or one made in code). */
    public Request(String method, String path, Map<String, List<String>> query, byte[] body) {
      this(method, path, query, body, Map.of());
    }

    /** A request from the operator (a test's, or one made in code). */
    public Request(
        String method,
        String path,
        Map<String, List<String>> query,
        byte[] body,
        Map<String, List<String>> headers) {
      this(method, path, query, body, headers, Principal.operator("local"));
    }

    /** The first value of a query parameter, if given. */
    public Optional<String> parameter(String name) {
      List<String> values = query.get(name);
      return values == null || values.isEmpty() ? Optional.empty() : Optional.of(values.get(0));
    }

    /** The first value of a header, by its name in any case, if sent. */
    public Optional<String> header(String name) {
      List<String> values = headers.get(name.toLowerCase(java.util.Locale.ROOT));
      return values == null || values.isEmpty() ? Optional.empty() : Optional.of(values.get(0));
    }

    /** The body as UTF-8 text. */
    public String text() {
      return new String(body, StandardCharsets.UTF_8);
    }
  }

  /**
   * One answer: a status, a content type and a body, written whole; or, for a streamed answer
   * (server-sent events), a writer that writes the body as it comes.
   *
   * @param status the HTTP status
   * @param contentType the body's media type
   * @param body the body (empty for a streamed answer)
   * @param stream the writer of a streamed body, which the host runs after sending the status and
   *     headers, on the request's thread, flushing what it writes as it goes
   */
  public record Answer(int status, String contentType, byte[] body, Optional<BodyWriter> stream) {
    public Answer {
      Objects.requireNonNull(contentType, "contentType");
      Objects.requireNonNull(body, "body");
      Objects.requireNonNull(stream, "stream");
    }

    /** An answer written whole. */
    public Answer(int status, String contentType, byte[] body) {
      this(status, contentType, body, Optional.empty());
    }

    /** A 200 answer of JSON text. */
    public static Answer json(String json) {
      return new Answer(200, "application/json", json.getBytes(StandardCharsets.UTF_8));
    }

    /**
     * An error answer: the error's status and its JSON body, {@code {"error": {"code",
     * "message"}}}, the same as every other error of the host.
     */
    public static Answer error(ApiError error, String message) {
      return new Answer(error.status(), "application/json", error.bytes(message));
    }

    /** A 200 answer of server-sent events, written by the given writer. */
    public static Answer eventStream(BodyWriter writer) {
      return new Answer(200, "text/event-stream", new byte[0], Optional.of(writer));
    }
  }

  /** Writes a streamed answer's body; each {@code flush} sends what was written so far. */
  @FunctionalInterface
  public interface BodyWriter {
    /**
     * Writes the body. An exception ends the answer where it is (its status was already sent); it
     * goes to the host's log.
     */
    void write(java.io.OutputStream out) throws Exception;
  }
}
