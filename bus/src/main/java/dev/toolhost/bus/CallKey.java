package dev.toolhost.bus;

import dev.toolhost.core.ToolCall;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.Optional;
import java.util.UUID;

/**
 * A call key is the host's own id for one remote call: what workers deduplicate and store results
 * by, where the caller's {@code tool_call_id} is only a label to answer with (agent stacks number
 * their calls {@code call_0}, {@code call_1}, so two users, or two turns, send the same one).
 *
 * <p>A caller {@linkplain #mint mints} one key per call, from the user, session, agent and tool of
 * the call, a digest of its arguments and a random nonce, and sends it as the request's {@code
 * call_key}: every copy of the request (a redelivery, the same request sent again after a lost
 * connection) carries the same key, so the call runs once; a new call, even one with the same
 * {@code tool_call_id} and the same arguments, gets a new key and runs. A request without one (a
 * caller from before call keys) gets a key {@linkplain #derive derived} from its content, so that
 * calls with the same {@code tool_call_id} but another user, session, tool or arguments still never
 * share a result. Both are 64 lowercase hex digits of a SHA-256 (see {@code
 * docs/wire-protocol.md}).
 */
public final class CallKey {

  private CallKey() {}

  /** A new key for a call about to be sent: unique to this call, whatever its content. */
  public static String mint(ToolCall call) {
    return digest(
        "toolhost-call-key-1",
        call.user(),
        call.sessionId(),
        call.agent(),
        Optional.of(call.toolName()),
        Optional.of(hex(sha256(call.arguments()))),
        Optional.of(UUID.randomUUID().toString()));
  }

  /**
   * The key of a request that carries none: a digest of its {@code tool_call_id}, user, session,
   * agent, tool and arguments (as the text they were sent in), the same for every copy of the
   * request.
   */
  public static String derive(ToolCall call) {
    return digest(
        "toolhost-call-key-0",
        Optional.of(call.callId()),
        call.user(),
        call.sessionId(),
        call.agent(),
        Optional.of(call.toolName()),
        Optional.of(call.arguments()));
  }

  // Each field as its UTF-8 length, a colon, its bytes and a newline ("-" and a newline when
  // absent), so that no two lists of fields give the same text.
  @SafeVarargs
  private static String digest(String version, Optional<String>... fields) {
    StringBuilder text = new StringBuilder(version).append('\n');
    for (Optional<String> field : fields) {
      if (field.isEmpty()) {
        text.append("-\n");
      } else {
        String value = field.get();
        text.append(value.getBytes(StandardCharsets.UTF_8).length)
            .append(':')
            .append(value)
            .append('\n');
      }
    }
    return hex(sha256(text.toString()));
  }

  private static byte[] sha256(String text) {
    try {
      return MessageDigest.getInstance("SHA-256").digest(text.getBytes(StandardCharsets.UTF_8));
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("Every Java runtime has SHA-256", e);
    }
  }

  private static String hex(byte[] bytes) {
    return HexFormat.of().formatHex(bytes);
  }
}
