package dev.toolhost.bus;

import dev.toolhost.core.ToolCall;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.security.SecureRandom;
import java.util.HexFormat;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A call key is the host's own id for one remote call: what workers deduplicate and store results
 * by, where the caller's {@code tool_call_id} is only a label to answer with (agent stacks number
 * their calls {@code call_0}, {@code call_1}, so two users, or two turns, send the same one).
 *
 * <p>A caller {@linkplain #mint mints} one key per call, the SHA-256 of a secret drawn once per
 * process and a counter (unique to the call and not to be guessed from the keys before it), and
 * sends it as the request's {@code call_key}: every copy of the request (a redelivery, the same
 * request sent again after a lost connection) carries the same key, so the call runs once; a new
 * call, even one with the same {@code tool_call_id} and the same arguments, gets a new key and
 * runs. A request without one (a caller from before call keys) gets a key {@linkplain #derive
 * derived} from its content, so that calls with the same {@code tool_call_id} but another user,
 * session, tool or arguments still never share a result. Both are 64 lowercase hex digits of a
 * SHA-256 (see {@code docs/wire-protocol.md}).
 */
public final class CallKey {

  // A secret per process: the keys are unique (one counter) and, without it, not to be guessed
  // from those seen before. One SecureRandom draw per process, not per call: a draw per call, a
  // second digest of the whole call and a provider lookup per digest were a fifth of the remote
  // executor's Java samples (JFR).
  private static final byte[] SECRET = new byte[32];
  private static final AtomicLong COUNTER = new AtomicLong();
  private static final MessageDigest SHA_256;
  private static final HexFormat HEX = HexFormat.of();

  static {
    new SecureRandom().nextBytes(SECRET);
    try {
      SHA_256 = MessageDigest.getInstance("SHA-256");
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("Every Java runtime has SHA-256", e);
    }
  }

  private CallKey() {}

  /** A new key for a call about to be sent: unique to this call, whatever its content. */
  public static String mint(ToolCall call) {
    MessageDigest digest = sha256();
    digest.update(SECRET);
    long count = COUNTER.incrementAndGet();
    for (int shift = 56; shift >= 0; shift -= 8) {
      digest.update((byte) (count >>> shift));
    }
    return HEX.formatHex(digest.digest());
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
    return sha256().digest(text.getBytes(StandardCharsets.UTF_8));
  }

  // A copy of one digest: cheaper than a provider lookup per call.
  private static MessageDigest sha256() {
    try {
      return (MessageDigest) SHA_256.clone();
    } catch (CloneNotSupportedException e) {
      try {
        return MessageDigest.getInstance("SHA-256");
      } catch (NoSuchAlgorithmException impossible) {
        throw new IllegalStateException("Every Java runtime has SHA-256", impossible);
      }
    }
  }

  private static String hex(byte[] bytes) {
    return HEX.formatHex(bytes);
  }
}
