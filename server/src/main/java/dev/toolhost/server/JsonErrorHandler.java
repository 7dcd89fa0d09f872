package dev.toolhost.server;

import dev.toolhost.core.ApiError;
import java.nio.ByteBuffer;
import java.util.Map;
import org.eclipse.jetty.http.HttpFields;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.http.HttpStatus;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.server.handler.ErrorHandler;
import org.eclipse.jetty.util.Callback;

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

  @Override
  public boolean handle(Request request, Response response, Callback callback) {
    int status = response.getStatus();
    Object reason = request.getAttribute(ERROR_MESSAGE);
    write(
        response,
        callback,
        status,
        ApiError.forStatus(status),
        message(status, reason instanceof String text ? text : null),
        Map.of());
    return true;
  }

  /** Writes one JSON error as the whole response, with the error's status. */
  static void write(
      Response response,
      Callback callback,
      ApiError error,
      String message,
      Map<String, String> headers) {
    write(response, callback, error.status(), error, message, headers);
  }

  /**
   * Writes one JSON error as the whole response, with the status Jetty or a library chose (which
   * may be one the table has no code of its own for, such as 402).
   */
  private static void write(
      Response response,
      Callback callback,
      int status,
      ApiError error,
      String message,
      Map<String, String> headers) {
    byte[] body = error.bytes(message);
    response.setStatus(status);
    HttpFields.Mutable fields = response.getHeaders();
    fields.put(HttpHeader.CONTENT_TYPE, ApiHandler.JSON);
    fields.put(HttpHeader.CONTENT_LENGTH, body.length);
    headers.forEach(fields::put);
    response.write(true, ByteBuffer.wrap(body), callback);
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
}
