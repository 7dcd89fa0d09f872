package dev.toolhost.core;

import tools.jackson.databind.json.JsonMapper;
import tools.jackson.databind.node.JsonNodeFactory;
import tools.jackson.databind.node.ObjectNode;

/**
 * An API error is the closed set of ways the host's HTTP API refuses or fails a request itself, as
 * opposed to a tool failing ({@link ErrorCode}): each with a stable wire code, its HTTP status, and
 * a safe default message for the caller.
 *
 * <p>Every HTTP error answer of the host, its extensions' routes included, is the one JSON object
 * {@link #body(String)} builds: {@code {"error": {"code", "message"}}}. Wire codes never change
 * once released; the table of HTTP errors in docs/http-api.md lists exactly these, and a test holds
 * it to that. A message is written for the caller and never holds a stack trace, an exception class
 * name or an echo of the request.
 */
public enum ApiError {
  INVALID_REQUEST("invalid_request", 400, "The request is malformed."),
  UNAUTHORIZED(
      "unauthorized",
      401,
      "This host requires a bearer token: send the header 'Authorization: Bearer <token>'."),
  FORBIDDEN("forbidden", 403, "The request was refused."),
  ORIGIN_NOT_ALLOWED(
      "origin_not_allowed",
      403,
      "Cross-origin requests are refused: the Origin header names another site."),
  NOT_FOUND("not_found", 404, "There is nothing at this path."),
  PROFILE_NOT_FOUND("profile_not_found", 404, "No tool profile by that name."),
  METHOD_NOT_ALLOWED("method_not_allowed", 405, "The path exists for another method."),
  NOT_ACCEPTABLE(
      "not_acceptable", 406, "The host cannot answer in a media type the request accepts."),
  REQUEST_TIMEOUT("request_timeout", 408, "The request did not arrive in time."),
  CONFLICT("conflict", 409, "The request conflicts with one still running."),
  PAYLOAD_TOO_LARGE("payload_too_large", 413, "The request body is too large."),
  URI_TOO_LONG("uri_too_long", 414, "The request's URI is too long."),
  UNSUPPORTED_MEDIA_TYPE(
      "unsupported_media_type",
      415,
      "A request body must be JSON: send the header 'Content-Type: application/json'."),
  HOST_NOT_ALLOWED(
      "host_not_allowed",
      421,
      "This server does not answer for the host named in the Host header."),
  HEADERS_TOO_LARGE("headers_too_large", 431, "The request's headers are too large."),
  INTERNAL_ERROR(
      "internal_error", 500, "The host failed to answer this request; the failure was logged."),
  MODEL_ERROR("model_error", 502, "The model could not answer."),
  UNAVAILABLE("unavailable", 503, "The host cannot answer this request yet; try again shortly.");

  private static final JsonMapper MAPPER = JsonMapper.shared();

  private final String wireName;
  private final int status;
  private final String defaultMessage;

  ApiError(String wireName, int status, String defaultMessage) {
    this.wireName = wireName;
    this.status = status;
    this.defaultMessage = defaultMessage;
  }

  /** The lower_snake code used on the wire, such as {@code invalid_request}. */
  public String wireName() {
    return wireName;
  }

  /** The HTTP status this error is answered with. */
  public int status() {
    return status;
  }

  /** A message safe to show the caller when there is nothing more particular to say. */
  public String defaultMessage() {
    return defaultMessage;
  }

  /**
   * The error itself, {@code {"code", "message"}}: what {@link #body(String)} holds under {@code
   * error}, and the data of an {@code error} event in a stream of server-sent events.
   */
  public ObjectNode fields(String message) {
    return JsonNodeFactory.instance.objectNode().put("code", wireName).put("message", message);
  }

  /** The whole answer body, {@code {"error": {"code", "message"}}}. */
  public ObjectNode body(String message) {
    ObjectNode document = JsonNodeFactory.instance.objectNode();
    document.set("error", fields(message));
    return document;
  }

  /** The whole answer body with the {@linkplain #defaultMessage() default message}. */
  public ObjectNode body() {
    return body(defaultMessage);
  }

  /** The whole answer body as UTF-8 JSON. */
  public byte[] bytes(String message) {
    return MAPPER.writeValueAsBytes(body(message));
  }

  /**
   * The error for a status a web server or a library chose rather than the host: the error of that
   * status in the table, {@code invalid_request} for another client error, {@code internal_error}
   * for another server error.
   */
  public static ApiError forStatus(int status) {
    return switch (status) {
      case 400 -> INVALID_REQUEST;
      case 401 -> UNAUTHORIZED;
      case 403 -> FORBIDDEN;
      case 404 -> NOT_FOUND;
      case 405 -> METHOD_NOT_ALLOWED;
      case 406 -> NOT_ACCEPTABLE;
      case 408 -> REQUEST_TIMEOUT;
      case 413 -> PAYLOAD_TOO_LARGE;
      case 414 -> URI_TOO_LONG;
      case 415 -> UNSUPPORTED_MEDIA_TYPE;
      case 431 -> HEADERS_TOO_LARGE;
      case 503 -> UNAVAILABLE;
      default -> status >= 500 ? INTERNAL_ERROR : INVALID_REQUEST;
    };
  }

  /**
   * Returns the error with the given wire code.
   *
   * @throws IllegalArgumentException naming the unknown wire code
   */
  public static ApiError fromWireName(String wireName) {
    for (ApiError error : values()) {
      if (error.wireName.equals(wireName)) {
        return error;
      }
    }
    throw new IllegalArgumentException("Unknown HTTP error code '" + wireName + "'.");
  }
}
