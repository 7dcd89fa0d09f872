package dev.toolhost.mcp;

import dev.toolhost.core.ApiError;
import jakarta.servlet.AsyncContext;
import jakarta.servlet.AsyncEvent;
import jakarta.servlet.AsyncListener;
import jakarta.servlet.ServletContext;
import jakarta.servlet.ServletException;
import jakarta.servlet.ServletRequest;
import jakarta.servlet.ServletResponse;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletRequestWrapper;
import jakarta.servlet.http.HttpServletResponse;
import jakarta.servlet.http.HttpServletResponseWrapper;
import java.io.IOException;
import java.io.OutputStream;
import java.io.PrintWriter;
import java.io.Writer;
import java.nio.charset.Charset;
import java.nio.charset.StandardCharsets;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Gateway streams are the event streams an HTTP gateway answers requests with, made resumable: each
 * event gets an id {@code {stream}-{n}}, the stream's events are held in a bounded {@link Window},
 * and a client whose connection dropped resumes with a GET that carries {@code Last-Event-ID}: it
 * gets the events after that id and then the stream live, up to the call's answer.
 *
 * <p>MCP Java SDK 2.1.0 gives every event of a session the same id, replays nothing, and fails a
 * call whose stream it cannot write. So the SDK writes a POST's event stream into one of ours
 * ({@link #answer}): a writer that never fails, whose events are held and forwarded, by a thread of
 * the stream's own, to the client connected now. The SDK neither sees a dropped client nor drops
 * the session; the call runs on, and its answer waits in the window. A servlet response is written
 * by one thread only: the forwarding thread of the connection it belongs to.
 *
 * <p>A resume ({@link #resume}) is answered only for a stream of the same session and principal;
 * any other {@code Last-Event-ID} (another session's, one never given, one whose following events
 * are no longer held, or a stream forgotten) is answered 400 with the host's JSON error, never 404,
 * which in MCP tells a client its session is gone. A session's listening stream (a GET without
 * {@code Last-Event-ID}) carries no event ids ({@link #listening}), for it does not resume: its
 * client reconnects with a plain GET. A stream that has sent nothing for a second, to a client of
 * protocol 2025-11-25 or later, is primed (SEP-1699): an event with an id and empty data, so that a
 * client cut off before the first message still has an id to resume from. Thread-safe.
 */
final class GatewayStreams implements AutoCloseable {

  /** The request attribute under which a refusal's message goes to the gateway's error answer. */
  static final String REFUSAL = "toolhost/mcp-stream-refusal";

  private static final Logger LOG = LoggerFactory.getLogger(GatewayStreams.class);
  private static final SecureRandom RANDOM = new SecureRandom();
  private static final String EVENT_STREAM = "text/event-stream";
  private static final Charset UTF_8 = StandardCharsets.UTF_8;
  // The first protocol version whose clients expect a priming event (SEP-1699).
  private static final String PRIMING_VERSION = "2025-11-25";
  private static final byte[] PRIMER = "data: \n".getBytes(StandardCharsets.UTF_8);

  /**
   * A window is how much of each stream is held for a client to resume from: at most {@code
   * maxEvents} events and {@code maxBytes} bytes of a stream (its newest, and always its last
   * event, however large), for {@code keepAfterEnd} after the stream ends, and at most {@code
   * maxHeldBytes} over all ended streams, the oldest forgotten first. A stream is held for its time
   * even when all its events went out, for a write that succeeded may still not have reached a
   * client whose connection was dropping.
   *
   * <p>With {@code primeAfter}, a stream that has sent nothing for that long, to a client of
   * protocol 2025-11-25 or later, is primed (SEP-1699): an event with an id and empty data, so that
   * a client cut off before the first message still has an id to resume from. It is off by default:
   * MCP Java SDK 2.1.0's client takes a primer as its call answered in part, so that a failure to
   * read what follows (an answer over its size limit) is no longer the call's, and the call waits
   * until its deadline instead of failing at once.
   */
  record Window(
      int maxEvents,
      long maxBytes,
      Duration keepAfterEnd,
      long maxHeldBytes,
      Optional<Duration> primeAfter) {

    Window {
      Objects.requireNonNull(keepAfterEnd, "keepAfterEnd");
      Objects.requireNonNull(primeAfter, "primeAfter");
      if (maxEvents <= 0 || maxBytes <= 0 || maxHeldBytes <= 0 || !keepAfterEnd.isPositive()) {
        throw new IllegalArgumentException("The bounds of an event window must be positive.");
      }
    }

    /**
     * 1,000 events and 4 MiB a stream, 5 minutes after it ends, 64 MiB over ended streams, no
     * primer.
     */
    static Window defaults() {
      return new Window(1_000, 4L << 20, Duration.ofMinutes(5), 64L << 20, Optional.empty());
    }
  }

  private final Window window;
  // Guarded by this; in the order the streams opened.
  private final Map<String, Stream> streams = new LinkedHashMap<>();
  // Guarded by this: the ended streams in the order they ended, and the bytes they hold, so that a
  // sweep looks only at the oldest (one pass over every stream per new stream was quadratic under
  // load: thousands of calls a second keep hundreds of thousands of ended streams).
  private final ArrayDeque<Ended> endedOrder = new ArrayDeque<>();
  private long endedBytes;
  private boolean closed;

  /** A stream that ended, when, and the bytes it holds. */
  private record Ended(Stream stream, long at, long bytes) {}

  GatewayStreams(Window window) {
    this.window = Objects.requireNonNull(window, "window");
  }

  /** How many streams are held now. */
  synchronized int held() {
    return streams.size();
  }

  /** Whether the stream with this id is held and has ended: all of it is in the window. */
  boolean ended(String stream) {
    Stream held;
    synchronized (this) {
      held = streams.get(stream);
    }
    return held != null && held.endedAt() != 0;
  }

  /**
   * The request and response a POSTed request goes to the SDK with: when the SDK answers it with an
   * event stream, that stream is one of ours, of this session and principal; any other answer
   * passes through untouched.
   */
  Exchange answer(
      HttpServletRequest request, HttpServletResponse response, String session, String principal) {
    String version = request.getHeader("MCP-Protocol-Version");
    Optional<Duration> priming =
        version != null && version.compareTo(PRIMING_VERSION) >= 0
            ? window.primeAfter()
            : Optional.empty();
    Answer answer = new Answer(response, session, principal, priming);
    return new Exchange(new Answering(request, answer), answer);
  }

  /** A request and its response, as the SDK is to see them. */
  record Exchange(HttpServletRequest request, HttpServletResponse response) {}

  /** The response of a session's listening stream, with the SDK's event ids taken out. */
  HttpServletResponse listening(HttpServletResponse response) {
    return new Listening(response);
  }

  /**
   * Answers a GET that carries {@code Last-Event-ID}: the events of the named stream after that id,
   * then the stream live until it ends; or 400 with the host's JSON error when the id names no
   * stream of this session and principal whose following events are all held.
   */
  void resume(
      HttpServletRequest request,
      HttpServletResponse response,
      String session,
      String principal,
      String lastEventId)
      throws IOException {
    sweep();
    int dash = lastEventId.lastIndexOf('-');
    Stream stream = null;
    long number = -1;
    if (dash > 0) {
      try {
        number = Long.parseLong(lastEventId.substring(dash + 1));
      } catch (NumberFormatException e) {
        number = -1;
      }
      synchronized (this) {
        stream = streams.get(lastEventId.substring(0, dash));
      }
    }
    if (stream == null
        || number < 1
        || !stream.session.equals(session)
        || !stream.principal.equals(principal)) {
      refuse(
          request,
          response,
          "Last-Event-ID '"
              + printable(lastEventId)
              + "' names no event stream of this session that the MCP gateway holds: it holds a"
              + " stream for "
              + window.keepAfterEnd().toSeconds()
              + " s after it ends. Send the request again.");
      return;
    }
    synchronized (stream) {
      if (number >= stream.next || number + 1 < stream.first()) {
        String reason =
            number >= stream.next
                ? "names no event the stream has sent."
                : "is older than the events the gateway still holds of that stream (at most "
                    + window.maxEvents()
                    + " events and "
                    + window.maxBytes()
                    + " bytes): what followed it is lost. Send the request again.";
        refuse(request, response, "Last-Event-ID '" + printable(lastEventId) + "' " + reason);
        return;
      }
      response.setContentType(EVENT_STREAM);
      response.setCharacterEncoding(UTF_8.name());
      response.setHeader("Cache-Control", "no-cache");
      AsyncContext context = request.startAsync();
      context.setTimeout(0);
      stream.attach(new Connection(stream, context, response, number + 1));
    }
    LOG.debug(
        "MCP gateway: session {} resumed stream {} after event {}", session, stream.id, number);
  }

  /** Forgets the streams of a session, which has closed: their clients' connections end. */
  void forget(String session) {
    List<Stream> gone = new ArrayList<>();
    synchronized (this) {
      for (Iterator<Stream> all = streams.values().iterator(); all.hasNext(); ) {
        Stream stream = all.next();
        if (stream.session.equals(session)) {
          gone.add(stream);
          all.remove();
        }
      }
    }
    gone.forEach(Stream::abandon);
  }

  /** Ends every stream and its client's connection; streams opened later are not held. */
  @Override
  public void close() {
    List<Stream> all;
    synchronized (this) {
      closed = true;
      all = List.copyOf(streams.values());
      streams.clear();
    }
    all.forEach(Stream::abandon);
  }

  /** Opens a stream of ours for the SDK's answer, with its first connection. */
  private Stream open(String session, String principal, Optional<Duration> priming) {
    sweep();
    Stream stream =
        new Stream(HexFormat.of().formatHex(randomBytes()), session, principal, priming);
    synchronized (this) {
      if (!closed) {
        streams.put(stream.id, stream);
      }
    }
    return stream;
  }

  private static byte[] randomBytes() {
    byte[] bytes = new byte[16];
    RANDOM.nextBytes(bytes);
    return bytes;
  }

  /**
   * Forgets streams ended longer than the window ago, then the oldest ended past the byte bound.
   */
  private void sweep() {
    long now = System.nanoTime();
    long keep = window.keepAfterEnd().toNanos();
    List<Stream> gone = new ArrayList<>();
    synchronized (this) {
      while (!endedOrder.isEmpty()) {
        Ended oldest = endedOrder.peekFirst();
        if (now - oldest.at() < keep && endedBytes <= window.maxHeldBytes()) {
          break;
        }
        endedOrder.removeFirst();
        endedBytes -= oldest.bytes();
        if (streams.remove(oldest.stream().id, oldest.stream())) {
          gone.add(oldest.stream());
        }
      }
    }
    gone.forEach(Stream::abandon);
  }

  /** Notes a stream that ended, for {@link #sweep}. */
  private synchronized void ended(Stream stream, long at, long bytes) {
    endedOrder.addLast(new Ended(stream, at, bytes));
    endedBytes += bytes;
  }

  private static void refuse(HttpServletRequest request, HttpServletResponse response, String why)
      throws IOException {
    request.setAttribute(REFUSAL, why);
    byte[] body = ApiError.INVALID_REQUEST.bytes(why);
    response.setStatus(HttpServletResponse.SC_BAD_REQUEST);
    response.setContentType("application/json");
    response.setContentLength(body.length);
    response.getOutputStream().write(body);
  }

  /** A header value as it may go into a message: printable ASCII, at most 100 characters. */
  private static String printable(String value) {
    String kept = value.replaceAll("[^\\x20-\\x7e]", "?");
    return kept.length() > 100 ? kept.substring(0, 100) + "..." : kept;
  }

  /** One event: its number in its stream and its lines other than the id. */
  private record Event(long number, byte[] body) {}

  /**
   * One stream: its events in the window, whether it has ended, and the connection its events go to
   * now. Guarded by itself.
   */
  private final class Stream {
    final String id;
    final String session;
    final String principal;
    private final ArrayDeque<Event> held = new ArrayDeque<>();
    private long heldBytes;
    // The number the next event gets; the first is 1.
    private long next = 1;
    private long endedAt;
    private Connection live;
    // When the stream is primed if no event has come by then (SEP-1699: an id with empty data, so
    // that a client cut off before any message has an id to resume from); 0 for never.
    private long primeAt;

    Stream(String id, String session, String principal, Optional<Duration> priming) {
      this.id = id;
      this.session = session;
      this.principal = principal;
      this.primeAt =
          priming.map(after -> Math.max(1, System.nanoTime() + after.toNanos())).orElse(0L);
    }

    /** The number of the oldest event held; {@link #next} when none is. */
    synchronized long first() {
      return held.isEmpty() ? next : held.peekFirst().number();
    }

    synchronized long endedAt() {
      return endedAt;
    }

    synchronized long endedBytes() {
      return endedAt == 0 ? 0 : heldBytes;
    }

    synchronized void append(byte[] body) {
      if (endedAt != 0) {
        return;
      }
      primeAt = 0;
      held.addLast(new Event(next++, body));
      heldBytes += body.length;
      while (held.size() > 1
          && (held.size() > window.maxEvents() || heldBytes > window.maxBytes())) {
        heldBytes -= held.removeFirst().body().length;
      }
      notifyAll();
    }

    /** Ends the stream: the SDK has written all of it. */
    void end() {
      long at;
      long bytes;
      synchronized (this) {
        if (endedAt != 0) {
          return;
        }
        endedAt = Math.max(1, System.nanoTime());
        at = endedAt;
        bytes = heldBytes;
        notifyAll();
      }
      // Outside this stream's lock: a sweep takes the streams' lock, then a stream's.
      ended(this, at, bytes);
    }

    /** Ends the stream and its connection, the stream forgotten. */
    synchronized void abandon() {
      end();
      live = null;
      notifyAll();
    }

    /** Makes the connection the one the stream's events go to; the previous one ends. */
    synchronized void attach(Connection connection) {
      live = connection;
      notifyAll();
      Thread.ofVirtual().name("toolhost-mcp-stream-" + id).start(connection::forward);
    }

    synchronized void detach(Connection connection) {
      if (live == connection) {
        live = null;
      }
      notifyAll();
    }

    /**
     * The events from the given number on, waiting until there is one, the stream has ended or the
     * connection is no longer live; empty when the connection is to end (the list is then null).
     */
    synchronized List<Event> await(Connection connection, long from) throws InterruptedException {
      while (live == connection && endedAt == 0 && next <= from) {
        if (primeAt == 0) {
          wait();
          continue;
        }
        long left = primeAt - System.nanoTime();
        if (left > 0) {
          TimeUnit.NANOSECONDS.timedWait(this, left);
        } else {
          append(PRIMER);
        }
      }
      if (live != connection || from < first()) {
        // Replaced, abandoned or gone; or events it had not sent yet fell out of the window.
        if (live == connection) {
          live = null;
        }
        return null;
      }
      List<Event> events = new ArrayList<>();
      for (Event event : held) {
        if (event.number() >= from) {
          events.add(event);
        }
      }
      return events;
    }

    synchronized boolean endsAt(long from) {
      return endedAt != 0 && next <= from;
    }
  }

  /**
   * One client's connection to a stream: the thread of {@link #forward} alone writes its response,
   * from event {@code from} on, and completes it.
   */
  private final class Connection implements AsyncListener {
    private final Stream stream;
    private final AsyncContext context;
    private final HttpServletResponse response;
    private long from;

    Connection(Stream stream, AsyncContext context, HttpServletResponse response, long from) {
      this.stream = stream;
      this.context = context;
      this.response = response;
      this.from = from;
      context.addListener(this);
    }

    void forward() {
      try {
        OutputStream out = response.getOutputStream();
        response.flushBuffer();
        while (true) {
          List<Event> events = stream.await(this, from);
          if (events == null) {
            break;
          }
          for (Event event : events) {
            out.write(("id: " + stream.id + "-" + event.number() + "\n").getBytes(UTF_8));
            out.write(event.body());
            out.write('\n');
            from = event.number() + 1;
          }
          out.flush();
          if (stream.endsAt(from)) {
            stream.detach(this);
            break;
          }
        }
      } catch (IOException e) {
        // The client went away: what it missed waits in the window.
        LOG.debug("MCP gateway: client of stream {} went away: {}", stream.id, e.getMessage());
        stream.detach(this);
      } catch (InterruptedException e) {
        stream.detach(this);
      } finally {
        complete();
      }
    }

    private void complete() {
      try {
        context.complete();
      } catch (IllegalStateException e) {
        // Completed already, by the container on an error.
      }
    }

    @Override
    public void onComplete(AsyncEvent event) {
      stream.detach(this);
    }

    @Override
    public void onTimeout(AsyncEvent event) {
      stream.detach(this);
    }

    @Override
    public void onError(AsyncEvent event) {
      stream.detach(this);
    }

    @Override
    public void onStartAsync(AsyncEvent event) {}
  }

  /**
   * The response the SDK answers a POST with: once it says the answer is an event stream, its
   * writer is the stream's, which never fails.
   */
  private final class Answer extends HttpServletResponseWrapper {
    private final String session;
    private final String principal;
    private final Optional<Duration> priming;
    private volatile boolean events;
    private Stream stream;
    private PrintWriter writer;

    Answer(
        HttpServletResponse response,
        String session,
        String principal,
        Optional<Duration> priming) {
      super(response);
      this.session = session;
      this.principal = principal;
      this.priming = priming;
    }

    @Override
    public void setContentType(String type) {
      events = type != null && type.startsWith(EVENT_STREAM);
      super.setContentType(type);
    }

    /** Opens the stream when the SDK starts its answer as one; null when it is not. */
    synchronized Stream start(AsyncContext context) {
      if (!events || stream != null) {
        return stream;
      }
      stream = open(session, principal, priming);
      writer = new PrintWriter(new EventWriter(stream));
      stream.attach(new Connection(stream, context, unwrapped(), 1));
      return stream;
    }

    private HttpServletResponse unwrapped() {
      return (HttpServletResponse) getResponse();
    }

    @Override
    public synchronized PrintWriter getWriter() throws IOException {
      return writer != null ? writer : super.getWriter();
    }
  }

  /** The POSTed request, whose async context is the stream's when the answer is one. */
  private static final class Answering extends HttpServletRequestWrapper {
    private final Answer answer;
    private AsyncContext context;

    Answering(HttpServletRequest request, Answer answer) {
      super(request);
      this.answer = answer;
    }

    @Override
    public synchronized AsyncContext startAsync() {
      AsyncContext real = super.startAsync();
      Stream stream = answer.start(real);
      context = stream == null ? real : new StreamContext(real, stream, this, answer);
      return context;
    }

    @Override
    public synchronized AsyncContext getAsyncContext() {
      return context != null ? context : super.getAsyncContext();
    }
  }

  /**
   * The async context the SDK gets for a stream of ours: completing it ends the stream (the
   * stream's own thread completes the real one once its client has it all), and the SDK's listeners
   * hear of that end only, never of the client's connection.
   */
  private static final class StreamContext implements AsyncContext {
    private final AsyncContext real;
    private final Stream stream;
    private final ServletRequest request;
    private final ServletResponse response;
    private final List<AsyncListener> listeners = new ArrayList<>();
    private final AtomicBoolean completed = new AtomicBoolean();

    StreamContext(
        AsyncContext real, Stream stream, ServletRequest request, ServletResponse response) {
      this.real = real;
      this.stream = stream;
      this.request = request;
      this.response = response;
    }

    @Override
    public void complete() {
      if (!completed.compareAndSet(false, true)) {
        return;
      }
      stream.end();
      List<AsyncListener> heard;
      synchronized (listeners) {
        heard = List.copyOf(listeners);
      }
      AsyncEvent event = new AsyncEvent(this, request, response);
      for (AsyncListener listener : heard) {
        try {
          listener.onComplete(event);
        } catch (IOException | RuntimeException e) {
          LOG.debug("MCP gateway: a listener of stream {} failed: {}", stream.id, e.getMessage());
        }
      }
    }

    @Override
    public void addListener(AsyncListener listener) {
      synchronized (listeners) {
        listeners.add(listener);
      }
    }

    @Override
    public void addListener(
        AsyncListener listener, ServletRequest request, ServletResponse response) {
      addListener(listener);
    }

    @Override
    public ServletRequest getRequest() {
      return request;
    }

    @Override
    public ServletResponse getResponse() {
      return response;
    }

    @Override
    public boolean hasOriginalRequestAndResponse() {
      return false;
    }

    @Override
    public void dispatch() {
      throw new IllegalStateException("An MCP gateway stream is not dispatched.");
    }

    @Override
    public void dispatch(String path) {
      dispatch();
    }

    @Override
    public void dispatch(ServletContext context, String path) {
      dispatch();
    }

    @Override
    public void start(Runnable run) {
      real.start(run);
    }

    @Override
    public <T extends AsyncListener> T createListener(Class<T> type) throws ServletException {
      return real.createListener(type);
    }

    @Override
    public void setTimeout(long timeout) {
      real.setTimeout(timeout);
    }

    @Override
    public long getTimeout() {
      return real.getTimeout();
    }
  }

  /**
   * The writer the SDK writes a stream's events with: it cuts them at their blank line, drops the
   * SDK's id line and appends the rest to the stream. It never fails.
   */
  private static final class EventWriter extends Writer {
    private final Stream stream;
    private final StringBuilder pending = new StringBuilder();

    EventWriter(Stream stream) {
      this.stream = stream;
    }

    @Override
    public synchronized void write(char[] chars, int offset, int length) {
      pending.append(chars, offset, length);
      int end;
      while ((end = pending.indexOf("\n\n")) >= 0) {
        String event = pending.substring(0, end + 1);
        pending.delete(0, end + 2);
        stream.append(withoutId(event).getBytes(UTF_8));
      }
    }

    @Override
    public void flush() {}

    @Override
    public void close() {}
  }

  /** An event's lines, each ending in a newline, without its id line. */
  private static String withoutId(String event) {
    StringBuilder kept = new StringBuilder(event.length());
    for (String line : event.split("\n")) {
      if (!line.startsWith("id:")) {
        kept.append(line).append('\n');
      }
    }
    return kept.toString();
  }

  /** A listening stream's response, whose events go out as the SDK writes them, without ids. */
  private static final class Listening extends HttpServletResponseWrapper {
    private PrintWriter writer;

    Listening(HttpServletResponse response) {
      super(response);
    }

    @Override
    public synchronized PrintWriter getWriter() throws IOException {
      if (writer == null) {
        PrintWriter real = super.getWriter();
        writer = new PrintWriter(new IdDropping(real));
      }
      return writer;
    }
  }

  /**
   * A writer that drops the id line of each event on its way to the real writer, and fails when the
   * real one has (so that the SDK still notices a listening client gone).
   */
  private static final class IdDropping extends Writer {
    private final PrintWriter real;
    private final StringBuilder pending = new StringBuilder();

    IdDropping(PrintWriter real) {
      this.real = real;
    }

    @Override
    public synchronized void write(char[] chars, int offset, int length) {
      pending.append(chars, offset, length);
      int end;
      while ((end = pending.indexOf("\n\n")) >= 0) {
        real.write(withoutId(pending.substring(0, end + 1)) + "\n");
        pending.delete(0, end + 2);
      }
    }

    @Override
    public synchronized void flush() throws IOException {
      real.flush();
      if (real.checkError()) {
        throw new IOException("The client of a listening stream went away.");
      }
    }

    @Override
    public void close() {}
  }
}
