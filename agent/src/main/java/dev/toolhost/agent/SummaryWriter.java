package dev.toolhost.agent;

import dev.toolhost.core.ToolRegistry;
import dev.toolhost.core.ToolSpec;
import dev.toolhost.search.KnownService;
import dev.toolhost.search.ServiceIndex;
import dev.toolhost.search.ServiceKind;
import dev.toolhost.search.ServiceSummaries;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A summary writer has an agent's model write the service index's summaries: for each service (MCP
 * server, tool service, worker group, an agent known by its skills) whose summary is still the
 * derived one ({@link ServiceSummaries}), it asks the model once for one sentence saying what the
 * service is for, from its tools' names and descriptions, and puts it in the index. A summary is
 * written once per set of tools and cached by it, so a server that reconnects with the same tools
 * gets it back without asking again; a summary someone else put there is never replaced, nor is one
 * whose tools changed while it was written.
 *
 * <p>It works on one virtual thread of its own, after the registry has been quiet for {@link
 * #QUIET}, so that a server's tools arrive together; a host's start never waits for it. A model
 * that fails leaves the derived summary and is asked again at the next change. What goes to the
 * model is redacted like every request of the agent's client. {@link #close()} stops the thread and
 * waits for it.
 */
final class SummaryWriter implements ToolRegistry.Listener, AutoCloseable {

  private static final Logger LOG = LoggerFactory.getLogger(SummaryWriter.class);

  /** How long the registry stays quiet before a pass. */
  static final Duration QUIET = Duration.ofMillis(250);

  /** The longest written summary kept, in characters. */
  static final int MAX_SUMMARY = 300;

  static final String INSTRUCTIONS =
      "You write the summary an agent reads to choose which service to route a task to. Given a"
          + " service and its tools, answer with one plain sentence of at most 30 words saying what"
          + " the service is for and what it can do. No preamble, no quotes, no list.";

  private final ServiceIndex index;
  private final ToolRegistry registry;
  private final ModelClient client;
  private final Map<String, String> written = new ConcurrentHashMap<>();
  private final Semaphore changed = new Semaphore(0);
  private final Thread thread;

  private SummaryWriter(ServiceIndex index, ToolRegistry registry, ModelClient client) {
    this.index = Objects.requireNonNull(index, "index");
    this.registry = Objects.requireNonNull(registry, "registry");
    this.client = Objects.requireNonNull(client, "client");
    this.thread = Thread.ofVirtual().name("toolhost-summaries").unstarted(this::work);
  }

  /** Starts writing the summaries of the index's services, now and as the registry changes. */
  static SummaryWriter start(ServiceIndex index, ToolRegistry registry, ModelClient client) {
    SummaryWriter writer = new SummaryWriter(index, registry, client);
    registry.addListener(writer);
    writer.changed.release();
    writer.thread.start();
    return writer;
  }

  @Override
  public void registered(ToolSpec spec) {
    changed.release();
  }

  @Override
  public void replaced(ToolSpec before, ToolSpec after) {
    changed.release();
  }

  private void work() {
    try {
      while (!Thread.currentThread().isInterrupted()) {
        changed.acquire();
        // Wait for the registry to be quiet: a server registers its tools one by one.
        while (changed.tryAcquire(QUIET.toMillis(), TimeUnit.MILLISECONDS)) {
          changed.drainPermits();
        }
        pass();
      }
    } catch (InterruptedException e) {
      // Closed.
    }
  }

  /** Writes the summary of every service that still has the derived one. */
  void pass() throws InterruptedException {
    for (KnownService service : index.all()) {
      // A configured agent's summary is its operator's description, never a derived one; an agent
      // a directory derived from its skills is written like any other service.
      if (!ServiceSummaries.isDerived(service)) {
        continue;
      }
      String key = fingerprint(service);
      Optional<String> summary = Optional.ofNullable(written.get(key));
      if (summary.isEmpty()) {
        summary = write(service);
        summary.ifPresent(text -> written.put(key, text));
      }
      summary.ifPresent(
          text ->
              index.update(
                  service.kind(),
                  service.id(),
                  current ->
                      current.map(
                          now ->
                              ServiceSummaries.isDerived(now) && fingerprint(now).equals(key)
                                  ? now.withSummary(text)
                                  : now)));
    }
  }

  /** How many summaries have been written (and cached). */
  int cached() {
    return written.size();
  }

  private Optional<String> write(KnownService service) throws InterruptedException {
    StringBuilder prompt =
        new StringBuilder(ServiceSummaries.label(service.kind(), service.id()))
            .append(service.kind() == ServiceKind.AGENT ? "\nSkills:" : "\nTools:");
    for (KnownService.Capability capability : service.capabilities()) {
      prompt.append("\n- ").append(capability.name());
      if (!capability.description().isBlank()) {
        prompt.append(": ").append(capability.description().strip());
      }
    }
    ModelRequest request =
        new ModelRequest(
            List.of(
                new ChatMessage.SystemMessage(INSTRUCTIONS),
                new ChatMessage.UserMessage(prompt.toString())),
            List.of(),
            ModelRequest.ToolChoice.NONE,
            true);
    try {
      String text = client.complete(request, ModelListener.NONE).content().orElse("").strip();
      text = text.lines().filter(line -> !line.isBlank()).findFirst().orElse("").strip();
      if (text.startsWith("\"") && text.endsWith("\"") && text.length() > 1) {
        text = text.substring(1, text.length() - 1).strip();
      }
      if (text.isEmpty()) {
        return Optional.empty();
      }
      return Optional.of(
          text.length() > MAX_SUMMARY ? text.substring(0, MAX_SUMMARY - 3) + "..." : text);
    } catch (ModelException e) {
      LOG.warn(
          "The model could not write the summary of {}; it keeps the derived one: {}",
          service.id(),
          e.getMessage());
      return Optional.empty();
    }
  }

  // What a written summary was written from: the service and its tools as described.
  private static String fingerprint(KnownService service) {
    StringBuilder key =
        new StringBuilder(service.kind().wireName()).append('\u0000').append(service.id());
    for (KnownService.Capability capability : service.capabilities()) {
      key.append('\u0000')
          .append(capability.name())
          .append('\u0001')
          .append(capability.description());
    }
    return key.toString();
  }

  @Override
  public void close() {
    registry.removeListener(this);
    thread.interrupt();
    try {
      if (!thread.join(Duration.ofSeconds(30))) {
        throw new IllegalStateException("The summary writer did not stop");
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
