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
 * <p>A path is exact ({@code /v1/schedules}), or a template with variable segments in braces
 * ({@code /v1/schedules/{name}/runs}), each of which matches any one non-empty segment there; the
 * handler reads them with {@link #variable} (the first) or {@link #variables} (each by name). An
 * exact route wins over a template that matches the same path.
 *
 * <p>Requests and answers are plain records rather than a web server's types, so that an extension
 * depends on core alone.
 *
 * @param method the HTTP method, such as {@code GET}
 * @param path the exact path, such as {@code /v1/weather}, or a template with variable segments,
 *     such as {@code /v1/weather/{city}} or {@code /v1/agents/{name}/sessions/{id}}
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
    List<String> names = new java.util.ArrayList<>();
    for (String segment : path.split("/", -1)) {
      boolean braces = segment.indexOf('{') >= 0 || segment.indexOf('}') >= 0;
      if (braces && !VARIABLE.matcher(segment).matches()) {
        throw new IllegalArgumentException(
            "A route's variable is a whole segment such as {name}: " + path);
      }
      if (braces && names.contains(segment)) {
        throw new IllegalArgumentException("A route's variables have distinct names: " + path);
      }
      if (braces) {
        names.add(segment);
      }
    }
  }

  private static final Pattern VARIABLE = Pattern.compile("\\{[a-z_]+\\}");

  /** Whether the path is a template with a variable segment. */
  public boolean templated() {
    return path.indexOf('{') >= 0;
  }

  /** Whether a request's path is this route's: equal to it, or matching its template. */
  public boolean matches(String requestPath) {
    return templated() ? variables(requestPath).isPresent() : path.equals(requestPath);
  }

  /**
   * The value of the template's first variable segment in a request's path ({@code paris} for
   * {@code /v1/weather/paris} on {@code /v1/weather/{city}}); empty when the path does not match,
   * or the route is exact.
   */
  public Optional<String> variable(String requestPath) {
    return variables(requestPath).map(values -> values.values().iterator().next());
  }

  /**
   * The values of the template's variable segments in a request's path, by name without braces, in
   * the path's order ({@code name=helper, id=s-1} for {@code /v1/agents/helper/sessions/s-1} on
   * {@code /v1/agents/{name}/sessions/{id}}); empty when the path does not match, or the route is
   * exact.
   */
  public Optional<Map<String, String>> variables(String requestPath) {
    if (!templated()) {
      return Optional.empty();
    }
    String[] template = path.split("/", -1);
    String[] actual = requestPath.split("/", -1);
    if (template.length != actual.length) {
      return Optional.empty();
    }
    Map<String, String> values = new java.util.LinkedHashMap<>();
    for (int i = 0; i < template.length; i++) {
      if (template[i].startsWith("{")) {
        if (actual[i].isEmpty()) {
          return Optional.empty();
        }
        values.put(template[i].substring(1, template[i].length() - 1), actual[i]);
      } else if (!template[i].equals(actual[i])) {
        return Optional.empty();
      }
    }
    return Optional.of(java.util.Collections.unmodifiableMap(values));
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
