package dev.toolhost.a2a;

import java.util.Locale;
import java.util.Optional;

/**
 * An A2A version is one of the two protocol versions spoken both ways: 0.3, with its {@code
 * message/send} methods and {@code kind}-tagged objects, and 1.0, with its {@code SendMessage}
 * methods, {@code TASK_STATE_*} enums and wrapped results. A request says which by its {@code
 * A2A-Version} header; no header means 0.3.
 */
public enum A2aVersion {
  V0_3("0.3", "message/send", "message/stream", "tasks/get", "tasks/cancel"),
  V1_0("1.0", "SendMessage", "SendStreamingMessage", "GetTask", "CancelTask");

  /** The request header that names the version. */
  public static final String HEADER = "A2A-Version";

  private final String wireName;
  private final String send;
  private final String stream;
  private final String get;
  private final String cancel;

  A2aVersion(String wireName, String send, String stream, String get, String cancel) {
    this.wireName = wireName;
    this.send = send;
    this.stream = stream;
    this.get = get;
    this.cancel = cancel;
  }

  /** The operations both versions have, each a JSON-RPC method of its own name per version. */
  public enum Operation {
    SEND,
    STREAM,
    GET,
    CANCEL
  }

  /** The version as the header writes it: {@code 0.3} or {@code 1.0}. */
  public String wireName() {
    return wireName;
  }

  /** This version's JSON-RPC method for the operation. */
  public String method(Operation operation) {
    return switch (operation) {
      case SEND -> send;
      case STREAM -> stream;
      case GET -> get;
      case CANCEL -> cancel;
    };
  }

  /** The operation a JSON-RPC method of this version names; empty for any other method. */
  public Optional<Operation> operation(String method) {
    for (Operation operation : Operation.values()) {
      if (method(operation).equals(method)) {
        return Optional.of(operation);
      }
    }
    return Optional.empty();
  }

  /**
   * The version a request's {@code A2A-Version} header asks for: 0.3 when it sends none or an empty
   * one; empty when it names a version spoken here by neither ({@code 0.5}).
   */
  public static Optional<A2aVersion> fromHeader(Optional<String> header) {
    String value = header.map(String::strip).orElse("");
    if (value.isEmpty()) {
      return Optional.of(V0_3);
    }
    String lower = value.toLowerCase(Locale.ROOT);
    if (lower.equals("1") || lower.equals("1.0") || lower.startsWith("1.0.")) {
      return Optional.of(V1_0);
    }
    if (lower.equals("0.3") || lower.startsWith("0.3.")) {
      return Optional.of(V0_3);
    }
    return Optional.empty();
  }
}
