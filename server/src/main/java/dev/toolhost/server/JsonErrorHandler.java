package dev.toolhost.server;

import java.nio.ByteBuffer;
import java.util.Map;
import org.eclipse.jetty.http.HttpFields;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.http.HttpStatus;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.server.handler.ErrorHandler;
import org.eclipse.jetty.util.Callback;
import tools.jackson.databind.json.JsonMapper;
import tools.jackson.databind.node.ObjectNode;

/**
 * The JSON error handler answers the errors Jetty raises itself (a malformed request line, an
 * ambiguous path, headers too large, a body over the size limit) as every other error of the host
 * is answered: one JSON object {@code {"error": {"code", "message"}}}, never an HTML page, never a
 * stack trace, never an echo of the request.
 *
 * <p>It also writes the host's own error answers ({@link #write}), so that there is one shape and
 * one writer of them. Thread-safe.
 */
final class JsonErrorHandler extends ErrorHandler {

  private static final JsonMapper MAPPER = JsonMapper.shared();

  @Override
  public boolean handle(Request request, Response response, Callback callback) {
    int status = response.getStatus();
    Object reason = request.getAttribute(ERROR_MESSAGE);
    write(
        response,
        callback,
        status,
        code(status),
        message(status, reason instanceof String text ? text : null),
        Map.of());
    return true;
  }

  /** Writes one JSON error as the whole response. */
  static void write(
      Response response,
      Callback callback,
      int status,
      String code,
      String message,
      Map<String, String> headers) {
    byte[] body = body(code, message);
    response.setStatus(status);
    HttpFields.Mutable fields = response.getHeaders();
    fields.put(HttpHeader.CONTENT_TYPE, ApiHandler.JSON);
    fields.put(HttpHeader.CONTENT_LENGTH, body.length);
    headers.forEach(fields::put);
    response.write(true, ByteBuffer.wrap(body), callback);
  }

  /** {@code {"error": {"code", "message"}}} as UTF-8 JSON. */
  static byte[] body(String code, String message) {
    ObjectNode document = MAPPER.createObjectNode();
    ObjectNode error = document.putObject("error");
    error.put("code", code);
    error.put("message", message);
    return MAPPER.writeValueAsBytes(document);
  }

  /** The error code for a status Jetty or a library chose. */
  static String code(int status) {
    return switch (status) {
      case 400 -> "invalid_request";
      case 401 -> "unauthorized";
      case 403 -> "forbidden";
      case 404 -> "not_found";
      case 405 -> "method_not_allowed";
      case 406 -> "not_acceptable";
      case 408 -> "request_timeout";
      case 413 -> "payload_too_large";
      case 414 -> "uri_too_long";
      case 415 -> "unsupported_media_type";
      case 431 -> "headers_too_large";
      case 503 -> "unavailable";
      default -> status >= 500 ? "internal_error" : "invalid_request";
    };
  }

  private static String message(int status, String reason) {
    String standard = HttpStatus.getMessage(status);
    if (status >= 500) {
      // A server fault's own text is for the log, not the caller.
      return "The host failed to answer this request (" + standard + ").";
    }
    String said = reason == null || reason.isBlank() ? standard : reason;
    // Jetty's reasons are short; cut anything longer so that no request is ever echoed back.
    return "The request was refused: " + (said.length() > 200 ? said.substring(0, 200) : said);
  }

  /** The message this handler gives for a status, for answers that replace a library's own. */
  static String messageFor(int status) {
    return message(status, null);
  }
}
