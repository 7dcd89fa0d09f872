package dev.toolhost.agent;

import dev.toolhost.core.ToolSet;
import dev.toolhost.core.spi.Principal;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.function.Consumer;
import java.util.function.Supplier;

/**
 * A conversation is one session with an agent: its id, the user its tool calls are made as, its
 * history in the wire format, the tool set its process sees, and the notices (a subagent's result,
 * a scheduled task's) and status updates waiting for it.
 *
 * <p>The history holds what was said after the instructions: user messages, assistant messages with
 * their tool calls, and one tool message per call. Notices are added to the history as user
 * messages at the start of the next run. Status updates never block their sender: when the buffer
 * is full an update is dropped. Thread-safe.
 */
public final class Conversation {

  /** How many status updates wait before new ones are dropped. */
  public static final int STATUS_BUFFER = 32;

  private final String sessionId;
  private final ToolSet tools;
  private final List<ChatMessage> history = new ArrayList<>();
  private final List<String> notices = new ArrayList<>();
  private final List<String> followUps = new ArrayList<>();
  private final BlockingQueue<String> status = new ArrayBlockingQueue<>(STATUS_BUFFER);
  private volatile Consumer<String> noticeListener = notice -> {};
  private volatile Supplier<Runnable> runScope = () -> () -> {};
  private volatile Optional<String> user = Optional.empty();
  private volatile Optional<String> principal = Optional.empty();
  // What the loop sends in place of the history's oldest turns; the history stays whole.
  private final ContextState context = new ContextState();

  private Conversation(String sessionId, ToolSet tools) {
    this.sessionId = Objects.requireNonNull(sessionId, "sessionId");
    this.tools = Objects.requireNonNull(tools, "tools");
  }

  /** A new conversation in the given session over the given tool set. */
  public static Conversation of(String sessionId, ToolSet tools) {
    return new Conversation(sessionId, tools);
  }

  /** The session id every tool call of this conversation carries. */
  public String sessionId() {
    return sessionId;
  }

  /** The user every tool call of this conversation is made as; empty for the host's default. */
  public Optional<String> user() {
    return user;
  }

  /** The name of the principal whose credential started this conversation, when one did. */
  public Optional<String> principal() {
    return principal;
  }

  /**
   * Makes every tool call of this conversation as the principal's (the conversation API's or an A2A
   * caller's): as its user, so that what its tools keep or schedule is that user's, and in its
   * name, for the audit journal. Set once, before the first run.
   *
   * @throws IllegalStateException when the conversation is another principal's already
   */
  public synchronized void actAs(Principal caller) {
    Objects.requireNonNull(caller, "caller");
    if (principal.isPresent() && !principal.get().equals(caller.name())) {
      throw new IllegalStateException(
          "Conversation '" + sessionId + "' is principal '" + principal.get() + "''s already.");
    }
    principal = Optional.of(caller.name());
    user = caller.callUser(Optional.empty());
  }

  /**
   * This conversation, its calls made as the given user and principal: for an agent run on behalf
   * of a call or another conversation (a subagent, a wisp, an agent called as a tool), whose tools
   * must keep and reach what that caller's would.
   */
  synchronized Conversation madeFor(Optional<String> asUser, Optional<String> asPrincipal) {
    user = Objects.requireNonNull(asUser, "asUser");
    principal = Objects.requireNonNull(asPrincipal, "asPrincipal");
    return this;
  }

  /** The tools this conversation's process sees. */
  public ToolSet tools() {
    return tools;
  }

  /** A snapshot of the history. */
  public synchronized List<ChatMessage> history() {
    return List.copyOf(history);
  }

  /**
   * Leaves a notice for the model, such as a subagent's result; it joins the history as a user
   * message when the next run starts, and the notice listener hears it now.
   */
  public void deliver(String notice) {
    synchronized (this) {
      notices.add(notice);
    }
    noticeListener.accept(notice);
  }

  /** Sets what hears notices as they are delivered (on the deliverer's thread). */
  public void onNotice(Consumer<String> listener) {
    this.noticeListener = Objects.requireNonNull(listener, "listener");
  }

  /**
   * Offers a status update without blocking.
   *
   * @return whether it was kept; false when the buffer was full and it was dropped
   */
  public boolean offerStatus(String update) {
    return status.offer(update);
  }

  /** Takes every waiting status update, oldest first. */
  public List<String> drainStatus() {
    List<String> updates = new ArrayList<>();
    status.drainTo(updates);
    return updates;
  }

  /**
   * Leaves a follow-up message for the model (a {@code route} from the conversation that started
   * this one): a run going on takes it as a user message before its next model request; otherwise
   * the next run starts with it.
   */
  public synchronized void followUp(String message) {
    followUps.add(Objects.requireNonNull(message, "message"));
  }

  synchronized List<String> takeFollowUps() {
    List<String> taken = List.copyOf(followUps);
    followUps.clear();
    return taken;
  }

  synchronized List<String> takeNotices() {
    List<String> taken = List.copyOf(notices);
    notices.clear();
    return taken;
  }

  /**
   * Sets what happens when a run of this conversation starts: the supplier runs then, and the
   * {@code Runnable} it returns runs when the run ends, however it ends.
   */
  void runScope(Supplier<Runnable> scope) {
    this.runScope = Objects.requireNonNull(scope, "scope");
  }

  Runnable enterRun() {
    return runScope.get();
  }

  ContextState context() {
    return context;
  }

  synchronized void append(List<ChatMessage> messages) {
    history.addAll(messages);
  }

  /**
   * Takes a stored conversation's history and context state, in place of its own: for a
   * conversation read back from its {@link ConversationStore} before its first run here.
   */
  void restore(List<ChatMessage> messages, ContextState.Saved saved) {
    synchronized (this) {
      history.clear();
      history.addAll(messages);
    }
    context.restore(saved);
  }
}
