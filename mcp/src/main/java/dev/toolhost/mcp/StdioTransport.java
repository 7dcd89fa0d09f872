package dev.toolhost.mcp;

import dev.toolhost.core.spi.ChildProcesses;
import io.modelcontextprotocol.json.McpJsonMapper;
import io.modelcontextprotocol.json.TypeRef;
import io.modelcontextprotocol.spec.McpClientTransport;
import io.modelcontextprotocol.spec.McpSchema;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.io.Reader;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;

/**
 * A stdio transport runs an MCP server as a child process and exchanges newline-delimited JSON-RPC
 * messages with it over the child's standard input and output.
 *
 * <p>It replaces the SDK's {@code StdioClientTransport} (MCP Java SDK 2.1.0) for three reasons:
 * that transport starts the child with the host's whole environment ({@code ProcessBuilder}
 * inherits it and {@code ServerParameters} only adds to it), so the host's token and keys reached
 * every server; when a message exceeds its size limit it stops reading and says nothing to the
 * client, so every later call timed out on a connection that still looked connected; and its sends
 * from two threads at once could fail. Here the child's environment is exactly {@link
 * McpServerConfig.Stdio#childEnvironment}; a message over the limit is read through and dropped,
 * and the one call it answered gets an error of its own ({@link #ANSWER_TOO_LARGE}) while the
 * connection and every other call go on; only a message over the limit that names no call ends the
 * connection ({@link MessageTooLarge}: the owner reconnects). The end of the child's output,
 * however it comes, is reported once through the loss handler. The child is started through {@link
 * ChildProcesses}, so it dies with the host, {@code kill -9} included.
 *
 * <p>Sends are written one at a time, in order, on a thread of their own, so a child that stops
 * reading never blocks a caller. Closing stops the child (its standard input closed, then
 * terminated, then killed) and every thread of the transport.
 */
final class StdioTransport implements McpClientTransport {

  private static final Logger LOG = LoggerFactory.getLogger(StdioTransport.class);
  private static final Duration EXIT_WAIT = Duration.ofSeconds(2);

  /** The largest message, in characters, read from a server unless the bridge says otherwise. */
  static final int DEFAULT_MAX_MESSAGE_CHARS = 16 * 1024 * 1024;

  /**
   * The JSON-RPC error code of the answer that stands in for one dropped for its size (in the range
   * JSON-RPC leaves to implementations): the call it answered fails alone.
   */
  static final int ANSWER_TOO_LARGE = -32090;

  /** How much of an oversize message's start and end is kept to find the call it answers. */
  private static final int KEPT_ENDS = 4096;

  /**
   * The id of a JSON-RPC message, from the start or the end of its text only, where a response's
   * own id stands: first ({"jsonrpc":"2.0","id":...}, or {"id":...}) or last (...,"id":...}, as the
   * TypeScript SDK writes it after the result). An id nested in the result is never taken: these
   * are anchored to the message's own braces.
   */
  private static final java.util.regex.Pattern ID_FIRST =
      java.util.regex.Pattern.compile(
          "^\\s*\\{\\s*(?:\"jsonrpc\"\\s*:\\s*\"2\\.0\"\\s*,\\s*)?\"id\"\\s*:\\s*"
              + "(\"(?:[^\"\\\\]|\\\\.){0,256}\"|-?\\d{1,19})");

  private static final java.util.regex.Pattern ID_LAST =
      java.util.regex.Pattern.compile(
          ",\\s*\"id\"\\s*:\\s*(\"(?:[^\"\\\\]|\\\\.){0,256}\"|-?\\d{1,19})"
              + "\\s*(?:,\\s*\"jsonrpc\"\\s*:\\s*\"2\\.0\"\\s*)?\\}\\s*$");

  /** The id (as JSON text) of an oversize message, from its kept start and end. */
  static java.util.Optional<String> idOf(String head, String tail) {
    java.util.regex.Matcher first = ID_FIRST.matcher(head);
    if (first.find()) {
      return java.util.Optional.of(first.group(1));
    }
    java.util.regex.Matcher last = ID_LAST.matcher(tail);
    return last.find() ? java.util.Optional.of(last.group(1)) : java.util.Optional.empty();
  }

  /** Thrown into the loss handler when the server sent a message longer than the limit. */
  static final class MessageTooLarge extends IOException {
    private static final long serialVersionUID = 1L;

    MessageTooLarge(int limit) {
      super("the server sent a message longer than " + limit + " characters");
    }
  }

  private final String serverName;
  private final McpServerConfig.Stdio stdio;
  private final Map<String, String> environment;
  private final McpJsonMapper json;
  private final int maxMessageChars;
  private final ChildProcesses children;
  private final ExecutorService writer;
  private final Scheduler writes;
  private final Object lossLock = new Object();
  private volatile Process process;
  private volatile boolean closing;
  // Guarded by lossLock: the cause is kept until a handler is set, then handed over once.
  private Consumer<Throwable> lossHandler;
  private Throwable loss;
  private boolean lossReported;

  StdioTransport(
      String serverName,
      McpServerConfig.Stdio stdio,
      Map<String, String> hostEnvironment,
      McpJsonMapper json,
      int maxMessageChars,
      ChildProcesses children) {
    this.children = Objects.requireNonNull(children, "children");
    this.serverName = Objects.requireNonNull(serverName, "serverName");
    this.stdio = Objects.requireNonNull(stdio, "stdio");
    this.environment = stdio.childEnvironment(hostEnvironment);
    this.json = Objects.requireNonNull(json, "json");
    this.maxMessageChars = maxMessageChars;
    this.writer =
        Executors.newSingleThreadExecutor(
            Thread.ofVirtual().name("toolhost-mcp-stdin-" + serverName).factory());
    this.writes = Schedulers.fromExecutorService(writer, "toolhost-mcp-stdin");
  }

  /**
   * Tells the handler, once, why the connection ended: the child's output closed (it exited or was
   * killed), or it sent a message over the limit ({@link MessageTooLarge}). A loss before the
   * handler is set is handed to it when it is.
   */
  void onLoss(Consumer<Throwable> handler) {
    Throwable already;
    synchronized (lossLock) {
      lossHandler = handler;
      already = lossReported ? null : loss;
      if (already != null) {
        lossReported = true;
      }
    }
    if (already != null) {
      handler.accept(already);
    }
  }

  private void lost(Throwable cause) {
    Consumer<Throwable> handler;
    synchronized (lossLock) {
      if (loss != null) {
        return;
      }
      loss = cause;
      handler = lossHandler;
      if (handler != null) {
        lossReported = true;
      }
    }
    if (handler != null) {
      handler.accept(cause);
    }
  }

  @Override
  public Mono<Void> connect(
      Function<Mono<McpSchema.JSONRPCMessage>, Mono<McpSchema.JSONRPCMessage>> handler) {
    return Mono.fromRunnable(
        () -> {
          List<String> command = new ArrayList<>();
          command.add(stdio.command());
          command.addAll(stdio.arguments());
          ProcessBuilder builder = new ProcessBuilder(command);
          // ProcessBuilder starts from the host's whole environment: clear it first.
          builder.environment().clear();
          builder.environment().putAll(environment);
          Process started;
          try {
            started = children.start(builder);
          } catch (IOException e) {
            // The command only: its arguments and environment may hold secrets.
            throw new IllegalStateException(
                "cannot start '" + stdio.command() + "': " + e.getMessage());
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("cannot start '" + stdio.command() + "': interrupted");
          }
          process = started;
          Thread.ofVirtual()
              .name("toolhost-mcp-stdout-" + serverName)
              .start(() -> readMessages(started, handler));
          Thread.ofVirtual()
              .name("toolhost-mcp-stderr-" + serverName)
              .start(() -> readErrors(started));
        });
  }

  private void readMessages(
      Process from,
      Function<Mono<McpSchema.JSONRPCMessage>, Mono<McpSchema.JSONRPCMessage>> handler) {
    Throwable cause;
    try (Reader reader = new InputStreamReader(from.getInputStream(), StandardCharsets.UTF_8)) {
      LineReader lines = new LineReader(reader, maxMessageChars);
      String line;
      while ((line = lines.next()) != null) {
        if (lines.dropped()) {
          answerDropped(lines, handler);
          continue;
        }
        if (line.isBlank()) {
          continue;
        }
        McpSchema.JSONRPCMessage message;
        try {
          message = McpSchema.deserializeJsonRpcMessage(json, line);
        } catch (RuntimeException | IOException e) {
          // Servers that log to standard output are common; a line that is not a message is
          // skipped, not fatal. Its text is not logged: it may be anything.
          LOG.debug("MCP server '{}' wrote a line that is not a JSON-RPC message", serverName);
          continue;
        }
        handler.apply(Mono.just(message)).subscribe(null, e -> {});
      }
      cause = new IllegalStateException("the server process exited" + exitCode(from));
    } catch (MessageTooLarge e) {
      cause = e;
    } catch (IOException e) {
      cause = new IllegalStateException("reading from the server failed: " + e.getMessage());
    }
    if (!closing) {
      lost(cause);
    }
    // A server that sent too much is stopped: nothing it says from now on can be read.
    from.destroyForcibly();
  }

  /**
   * Stands in for a message dropped for its size: an error answer to the call it answered, so that
   * call fails alone; a message that names no call cannot be answered, and ends the connection.
   */
  private void answerDropped(
      LineReader lines,
      Function<Mono<McpSchema.JSONRPCMessage>, Mono<McpSchema.JSONRPCMessage>> handler)
      throws IOException {
    java.util.Optional<String> id = idOf(lines.head(), lines.tail());
    if (id.isEmpty()) {
      throw new MessageTooLarge(maxMessageChars);
    }
    LOG.warn(
        "MCP server '{}' answered call {} with {} characters, more than the {} the host reads;"
            + " the answer was dropped and that call failed",
        serverName,
        id.get(),
        lines.length(),
        maxMessageChars);
    String error =
        "{\"jsonrpc\":\"2.0\",\"id\":"
            + id.get()
            + ",\"error\":{\"code\":"
            + ANSWER_TOO_LARGE
            + ",\"message\":\"the answer was "
            + lines.length()
            + " characters, more than the "
            + maxMessageChars
            + " the host reads\"}}";
    handler
        .apply(Mono.just(McpSchema.deserializeJsonRpcMessage(json, error)))
        .subscribe(null, e -> {});
  }

  private static String exitCode(Process process) {
    try {
      if (process.waitFor(1, TimeUnit.SECONDS)) {
        return " with code " + process.exitValue();
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    return "";
  }

  private void readErrors(Process from) {
    try (BufferedReader reader =
        new BufferedReader(new InputStreamReader(from.getErrorStream(), StandardCharsets.UTF_8))) {
      String line;
      while ((line = reader.readLine()) != null) {
        LOG.debug("MCP server '{}' stderr: {}", serverName, line);
      }
    } catch (IOException e) {
      // The process is gone; its standard output's reader reports that.
    }
  }

  @Override
  public Mono<Void> sendMessage(McpSchema.JSONRPCMessage message) {
    return Mono.<Void>fromRunnable(
            () -> {
              Process current = process;
              if (current == null || closing) {
                throw new IllegalStateException("the server process is not running");
              }
              try {
                // The spec's stdio framing: one message a line; JSON escapes newlines in strings.
                String text = json.writeValueAsString(message);
                OutputStream out = current.getOutputStream();
                out.write(text.getBytes(StandardCharsets.UTF_8));
                out.write('\n');
                out.flush();
              } catch (IOException e) {
                throw new IllegalStateException("writing to the server failed: " + e.getMessage());
              }
            })
        .subscribeOn(writes);
  }

  @Override
  public <T> T unmarshalFrom(Object data, TypeRef<T> typeRef) {
    return json.convertValue(data, typeRef);
  }

  @Override
  public Mono<Void> closeGracefully() {
    return Mono.fromRunnable(this::close);
  }

  /** Stops the child: standard input closed, then terminated, then killed; the writer stops. */
  @Override
  public void close() {
    closing = true;
    Process current = process;
    if (current != null) {
      try {
        current.getOutputStream().close();
        if (!current.waitFor(EXIT_WAIT.toMillis(), TimeUnit.MILLISECONDS)) {
          current.destroy();
          if (!current.waitFor(EXIT_WAIT.toMillis(), TimeUnit.MILLISECONDS)) {
            current.destroyForcibly();
            current.waitFor(EXIT_WAIT.toMillis(), TimeUnit.MILLISECONDS);
          }
        }
      } catch (IOException e) {
        current.destroyForcibly();
      } catch (InterruptedException e) {
        current.destroyForcibly();
        Thread.currentThread().interrupt();
      }
      // Its children too: npx and shells start the real server as a grandchild.
      current.descendants().forEach(ProcessHandle::destroyForcibly);
    }
    writes.dispose();
    writer.shutdownNow();
  }

  /**
   * Reads lines of at most a given length, in chunks, without holding more than one line. A line
   * over the length is read through and dropped: {@link #next} then answers an empty line with
   * {@link #dropped} true, and only its first and last {@value #KEPT_ENDS} characters are kept.
   */
  private static final class LineReader {
    private final Reader reader;
    private final int max;
    private final char[] buffer = new char[8192];
    private final StringBuilder line = new StringBuilder();
    private int position;
    private int limit;
    private boolean dropping;
    private boolean dropped;
    private String head = "";
    private final StringBuilder tail = new StringBuilder();
    private long length;

    LineReader(Reader reader, int max) {
      this.reader = reader;
      this.max = max;
    }

    /** Whether the line {@link #next} answered last was over the length, and dropped. */
    boolean dropped() {
      return dropped;
    }

    /** The first characters of the dropped line. */
    String head() {
      return head;
    }

    /** The last characters of the dropped line. */
    String tail() {
      return tail.toString();
    }

    /** The dropped line's length. */
    long length() {
      return length;
    }

    /** The next line without its terminator ("" for a dropped one), or null at the end. */
    String next() throws IOException {
      dropped = false;
      while (true) {
        for (int i = position; i < limit; i++) {
          if (buffer[i] == '\n') {
            append(position, i);
            position = i + 1;
            return finish();
          }
        }
        append(position, limit);
        position = 0;
        limit = reader.read(buffer);
        if (limit < 0) {
          limit = 0;
          if (line.isEmpty() && !dropping) {
            return null;
          }
          return finish();
        }
      }
    }

    private String finish() {
      if (dropping) {
        dropping = false;
        dropped = true;
        return "";
      }
      String done = line.toString();
      line.setLength(0);
      return done.endsWith("\r") ? done.substring(0, done.length() - 1) : done;
    }

    private void append(int from, int to) {
      if (!dropping && line.length() + (to - from) > max) {
        // Over the length: from here on only its ends are kept.
        dropping = true;
        length = line.length();
        head = line.substring(0, Math.min(KEPT_ENDS, line.length()));
        tail.setLength(0);
        tail.append(line, Math.max(0, line.length() - KEPT_ENDS), line.length());
        line.setLength(0);
      }
      if (dropping) {
        length += to - from;
        tail.append(buffer, Math.max(from, to - KEPT_ENDS), Math.min(to - from, KEPT_ENDS));
        if (tail.length() > KEPT_ENDS) {
          tail.delete(0, tail.length() - KEPT_ENDS);
        }
        return;
      }
      line.append(buffer, from, to - from);
    }
  }
}
