package dev.toolhost.agent;

import dev.toolhost.core.ExecutableTool;
import dev.toolhost.core.MethodTools;
import dev.toolhost.core.Param;
import dev.toolhost.core.Tool;
import dev.toolhost.core.ToolCall;
import dev.toolhost.core.ToolException;
import dev.toolhost.memory.MemoryEntry;
import dev.toolhost.memory.WorkingMemory;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Function;
import java.util.regex.Pattern;

/**
 * The whiteboard is a scratch space shared by a conversation and the subagents it spawned: {@code
 * whiteboard_write(key, text)}, {@code whiteboard_read(key?)} and {@code whiteboard_clear(key)},
 * source {@code builtin:whiteboard}, kept in working memory.
 *
 * <p>A board belongs to one session of one user. A call from a running subagent reaches the board
 * of the session that spawned it; any other call reaches its own session's board, and never
 * another's (a key of another board does not exist for it), nor another user's board of the same
 * session id. The board's entries live under their own namespace, {@code whiteboard/{session}/}
 * ({@code whiteboard/{user}@{session}/} for a call that acts for a user), which the working memory
 * tools do not reach, and expire with the session: every write renews the whole board for {@link
 * #TTL}, so a board is gone once its session has been idle that long. At most {@link #MAX_KEYS}
 * keys of at most {@link #MAX_BYTES} bytes each. Thread-safe: the writes and clears of one board
 * are taken one at a time in this process, so that renewing a board never puts back a value another
 * call has just replaced or cleared.
 */
public final class Whiteboard {

  /** The source of the whiteboard tools. */
  public static final String SOURCE = "builtin:whiteboard";

  /** How long a board outlives its session's last write. */
  public static final Duration TTL = Duration.ofHours(2);

  /** The most keys one board holds. */
  public static final int MAX_KEYS = 64;

  /** The largest entry, in UTF-8 bytes. */
  public static final int MAX_BYTES = 32_768;

  private static final Pattern KEY = Pattern.compile("[A-Za-z0-9_.-]{1,64}");
  private static final String CATEGORY = "whiteboard";
  private static final int STRIPES = 64;

  private final WorkingMemory memory;
  private final Function<String, Optional<String>> parentSession;
  // Striped, so that the locks stay bounded however many sessions come; ReentrantLock, not
  // synchronized, so that a virtual thread waiting on a Redis write does not pin its carrier.
  private final ReentrantLock[] locks = new ReentrantLock[STRIPES];

  /**
   * A whiteboard in the working memory; {@code parentSession} gives, for the session of a running
   * subagent, the session that spawned it.
   */
  public Whiteboard(WorkingMemory memory, Function<String, Optional<String>> parentSession) {
    this.memory = Objects.requireNonNull(memory, "memory");
    this.parentSession = Objects.requireNonNull(parentSession, "parentSession");
    for (int i = 0; i < STRIPES; i++) {
      locks[i] = new ReentrantLock();
    }
  }

  /** The three tools. */
  public List<ExecutableTool> tools() {
    return MethodTools.of(this, SOURCE);
  }

  @Tool(
      name = "whiteboard_write",
      description =
          "Writes a note under a key on the whiteboard this conversation shares with its"
              + " subagents (findings, a plan, partial results), replacing what the key held.",
      destructive = false,
      idempotent = true,
      openWorld = false)
  public String write(
      ToolCall call,
      @Param(description = "The key: letters, digits, _ . or -, such as findings.") String key,
      @Param(description = "The text to keep under it.") String text) {
    String prefix = board(call);
    String checked = checkedKey(key);
    int bytes = text.getBytes(StandardCharsets.UTF_8).length;
    if (bytes > MAX_BYTES) {
      throw ToolException.invalidArguments(
          "text is " + bytes + " bytes; a whiteboard entry holds at most " + MAX_BYTES + ".");
    }
    ReentrantLock lock = lock(prefix);
    lock.lock();
    try {
      List<MemoryEntry> entries = memory.list(prefix);
      boolean known = entries.stream().anyMatch(entry -> entry.key().equals(prefix + checked));
      if (!known && entries.size() >= MAX_KEYS) {
        throw ToolException.invalidArguments(
            "the whiteboard holds "
                + MAX_KEYS
                + " keys already; clear one first (whiteboard_read lists them).");
      }
      memory.put(prefix + checked, text, TTL, CATEGORY);
      // The board lives as long as its session: the other entries are renewed with this one.
      for (MemoryEntry entry : entries) {
        if (!entry.key().equals(prefix + checked)) {
          memory.put(entry.key(), entry.value(), TTL, CATEGORY);
        }
      }
    } finally {
      lock.unlock();
    }
    return "Wrote '" + checked + "' on the whiteboard.";
  }

  @Tool(
      name = "whiteboard_read",
      description =
          "Reads the whiteboard shared with this conversation's subagents: one key, or every key"
              + " with its text when no key is given.",
      readOnly = true,
      destructive = false,
      idempotent = true,
      openWorld = false)
  public String read(
      ToolCall call,
      @Param(description = "The key; every key when omitted.") Optional<String> key) {
    String prefix = board(call);
    if (key.isPresent() && !key.get().isBlank()) {
      String checked = checkedKey(key.get());
      return memory
          .get(prefix + checked)
          .map(MemoryEntry::value)
          .orElseThrow(
              () ->
                  ToolException.invalidArguments(
                      "the whiteboard has no key '"
                          + checked
                          + "'; read it without a key to list"
                          + " them."));
    }
    List<MemoryEntry> entries = memory.list(prefix);
    if (entries.isEmpty()) {
      return "The whiteboard is empty.";
    }
    StringBuilder text = new StringBuilder("The whiteboard (" + entries.size() + " keys):");
    for (MemoryEntry entry : entries) {
      text.append("\n\n## ").append(entry.key().substring(prefix.length())).append('\n');
      text.append(entry.value());
    }
    return text.toString();
  }

  @Tool(
      name = "whiteboard_clear",
      description = "Removes one key from the whiteboard.",
      destructive = true,
      idempotent = true,
      openWorld = false)
  public String clear(ToolCall call, @Param(description = "The key to remove.") String key) {
    String checked = checkedKey(key);
    String prefix = board(call);
    ReentrantLock lock = lock(prefix);
    lock.lock();
    try {
      return memory.remove(prefix + checked)
          ? "Cleared '" + checked + "'."
          : "The whiteboard had no key '" + checked + "'.";
    } finally {
      lock.unlock();
    }
  }

  private ReentrantLock lock(String prefix) {
    return locks[Math.floorMod(prefix.hashCode(), STRIPES)];
  }

  /** The key prefix of the board the call reaches: its parent's, from a running subagent. */
  String board(ToolCall call) {
    String session =
        call.sessionId()
            .filter(id -> !id.isBlank())
            .orElseThrow(
                () ->
                    ToolException.invalidArguments(
                        "the whiteboard is kept per conversation, and this call has none."));
    String owner = parentSession.apply(session).orElse(session);
    // Encoded, so that no session's prefix is the start of another's; a user's board is its
    // user's and its session's, joined by '@', which no encoded name holds, so that two users who
    // send one session id never reach one board, and no board of a call without a user is theirs.
    String board = URLEncoder.encode(owner, StandardCharsets.UTF_8);
    return "whiteboard/"
        + call.user()
            .filter(user -> !user.isBlank())
            .map(user -> URLEncoder.encode(user, StandardCharsets.UTF_8) + "@" + board)
            .orElse(board)
        + "/";
  }

  private static String checkedKey(String key) {
    String stripped = key.strip();
    if (!KEY.matcher(stripped).matches()) {
      throw ToolException.invalidArguments(
          "key '"
              + key
              + "' is not a whiteboard key: use 1 to 64 letters, digits, '_', '.' or '-'.");
    }
    return stripped;
  }
}
