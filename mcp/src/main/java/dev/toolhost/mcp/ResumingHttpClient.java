package dev.toolhost.mcp;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.net.Authenticator;
import java.net.CookieHandler;
import java.net.InetAddress;
import java.net.ProxySelector;
import java.net.http.HttpClient;
import java.net.http.HttpHeaders;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Executor;
import java.util.concurrent.Flow;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLParameters;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import tools.jackson.core.JacksonException;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * A resuming HTTP client is the bridge's HTTP client for Streamable HTTP servers: it makes an event
 * stream that answers a POSTed request survive the server closing it before the answer (SEP-1699).
 * When such a stream ends, cleanly or not, after an event with an id and before a JSON-RPC answer,
 * it waits the stream's {@code retry} (one second when none was given), reconnects with a GET that
 * carries {@code Last-Event-ID} and the request's own headers (the session id, the credentials),
 * and feeds the resumed stream to the same reader, so that the SDK reads one stream that ends with
 * the answer. It gives up, failing the stream, when a GET is refused or fails, or after ten resumes
 * in a row that bring no new event; it stops when the reader cancels.
 *
 * <p>MCP Java SDK 2.1.0's {@code HttpClientStreamableHttpTransport} takes a clean end of a POST's
 * stream as the end of the call and never reconnects: its priming event (an id, {@code retry}, no
 * data) is dropped before any stream remembers its id. This client sits under that transport
 * ({@code clientBuilder}) instead of a fork of it; every other request passes straight through.
 * Thread-safe.
 */
final class ResumingHttpClient extends HttpClient {

  private static final Logger LOG = LoggerFactory.getLogger(ResumingHttpClient.class);
  private static final JsonMapper JSON = JsonMapper.shared();
  private static final Duration DEFAULT_RETRY = Duration.ofSeconds(1);
  private static final int MAX_EMPTY_RESUMES = 10;
  // Headers of the POST that the GET must not repeat: it has no body, and asks for a stream.
  private static final Set<String> NOT_REPEATED =
      Set.of("content-type", "content-length", "accept", "last-event-id");

  private final HttpClient delegate;

  private ResumingHttpClient(HttpClient delegate) {
    this.delegate = delegate;
  }

  /** A builder of a resuming client over the client the given builder builds. */
  static HttpClient.Builder over(HttpClient.Builder builder) {
    return new Builder(builder);
  }

  @Override
  public <T> CompletableFuture<HttpResponse<T>> sendAsync(
      HttpRequest request, HttpResponse.BodyHandler<T> handler) {
    if (!request.method().equals("POST")) {
      return delegate.sendAsync(request, handler);
    }
    return delegate.sendAsync(
        request,
        info ->
            info.statusCode() / 100 == 2 && eventStream(info.headers())
                ? new Resuming<>(request, handler.apply(info))
                : handler.apply(info));
  }

  private static boolean eventStream(HttpHeaders headers) {
    return headers
        .firstValue("Content-Type")
        .map(type -> type.toLowerCase(Locale.ROOT).contains("text/event-stream"))
        .orElse(false);
  }

  /**
   * The body of one POST's event stream as its reader sees it: the bytes of the first response,
   * then of each resumed one, under one subscription.
   */
  private final class Resuming<T> implements HttpResponse.BodySubscriber<T> {
    private final HttpRequest request;
    private final HttpResponse.BodySubscriber<T> reader;
    private final ByteArrayOutputStream line = new ByteArrayOutputStream();
    private final StringBuilder data = new StringBuilder();

    // Guarded by this.
    private Flow.Subscription upstream;
    private long demand;
    private boolean subscribed;
    private boolean cancelled;
    private boolean resumed;
    private boolean finished;
    // Only the thread delivering the current response's body reads and writes these.
    private String lastEventId;
    private String seenAtLastResume;
    private Duration retry = DEFAULT_RETRY;
    private boolean answered;
    private int emptyResumes;

    Resuming(HttpRequest request, HttpResponse.BodySubscriber<T> reader) {
      this.request = request;
      this.reader = reader;
    }

    @Override
    public CompletionStage<T> getBody() {
      return reader.getBody();
    }

    @Override
    public void onSubscribe(Flow.Subscription subscription) {
      boolean first;
      long wanted;
      synchronized (this) {
        if (cancelled) {
          subscription.cancel();
          return;
        }
        upstream = subscription;
        first = !subscribed;
        subscribed = true;
        wanted = demand;
      }
      if (first) {
        reader.onSubscribe(
            new Flow.Subscription() {
              @Override
              public void request(long n) {
                Flow.Subscription current;
                synchronized (Resuming.this) {
                  demand = demand + n < 0 ? Long.MAX_VALUE : demand + n;
                  current = upstream;
                }
                current.request(n);
              }

              @Override
              public void cancel() {
                Flow.Subscription current;
                synchronized (Resuming.this) {
                  cancelled = true;
                  current = upstream;
                }
                current.cancel();
              }
            });
      } else if (wanted > 0) {
        subscription.request(wanted);
      }
    }

    @Override
    public void onNext(List<ByteBuffer> items) {
      synchronized (this) {
        if (demand != Long.MAX_VALUE) {
          demand--;
        }
      }
      for (ByteBuffer item : items) {
        ByteBuffer bytes = item.duplicate();
        while (bytes.hasRemaining()) {
          byte b = bytes.get();
          if (b == '\n') {
            field(line.toString(StandardCharsets.UTF_8));
            line.reset();
          } else {
            line.write(b);
          }
        }
      }
      reader.onNext(items);
      boolean done;
      Flow.Subscription current;
      synchronized (this) {
        done = answered && resumed;
        current = upstream;
      }
      if (done) {
        // A resumed GET stream may stay open after the answer; this call needs no more of it.
        current.cancel();
        finish(null);
      }
    }

    /** One line of the event stream. */
    private void field(String text) {
      String field = text.endsWith("\r") ? text.substring(0, text.length() - 1) : text;
      if (field.isEmpty()) {
        dispatch();
        return;
      }
      int colon = field.indexOf(':');
      String name = colon < 0 ? field : field.substring(0, colon);
      String value = colon < 0 ? "" : field.substring(colon + 1);
      if (value.startsWith(" ")) {
        value = value.substring(1);
      }
      switch (name) {
        case "id" -> lastEventId = value;
        case "retry" -> {
          if (!value.isEmpty() && value.chars().allMatch(Character::isDigit)) {
            retry = Duration.ofMillis(Long.parseLong(value));
          }
        }
        case "data" -> data.append(value).append('\n');
        default -> {}
      }
    }

    /** The end of one event: whether it is the answer. */
    private void dispatch() {
      if (data.isEmpty()) {
        return;
      }
      try {
        JsonNode message = JSON.readTree(data.toString());
        if (message.has("id") && (message.has("result") || message.has("error"))) {
          synchronized (this) {
            answered = true;
          }
        }
      } catch (JacksonException e) {
        // Not JSON: the reader says so.
      }
      data.setLength(0);
    }

    @Override
    public void onError(Throwable failure) {
      if (!resume("the event stream broke: " + failure.getMessage())) {
        finish(failure);
      }
    }

    @Override
    public void onComplete() {
      if (!resume("the server closed the event stream before the answer")) {
        finish(null);
      }
    }

    /** Ends the reader's stream once: completed with no failure, or failed. */
    private void finish(Throwable failure) {
      synchronized (this) {
        if (finished) {
          return;
        }
        finished = true;
      }
      if (failure == null) {
        reader.onComplete();
      } else {
        reader.onError(failure);
      }
    }

    /** Reconnects after the retry, when the stream can and should go on; whether it will. */
    private boolean resume(String why) {
      synchronized (this) {
        if (finished || answered || cancelled || lastEventId == null) {
          return false;
        }
        resumed = true;
      }
      if (lastEventId.equals(seenAtLastResume)) {
        emptyResumes++;
      } else {
        emptyResumes = 0;
        seenAtLastResume = lastEventId;
      }
      if (emptyResumes >= MAX_EMPTY_RESUMES) {
        finish(
            new IOException(
                "The MCP server closed the event stream "
                    + MAX_EMPTY_RESUMES
                    + " times in a row without sending anything new; the call is given up."));
        return true;
      }
      LOG.debug(
          "MCP event stream of {}: {}; resuming after {} ms from event {}",
          request.uri(),
          why,
          retry.toMillis(),
          lastEventId);
      HttpRequest.Builder get =
          HttpRequest.newBuilder(request.uri())
              .GET()
              .header("Accept", "text/event-stream")
              .header("Last-Event-ID", lastEventId);
      request.timeout().ifPresent(get::timeout);
      request
          .headers()
          .map()
          .forEach(
              (name, values) -> {
                if (!NOT_REPEATED.contains(name.toLowerCase(Locale.ROOT))) {
                  values.forEach(value -> get.header(name, value));
                }
              });
      Executor later = CompletableFuture.delayedExecutor(retry.toMillis(), TimeUnit.MILLISECONDS);
      CompletableFuture.runAsync(
          () ->
              delegate
                  .sendAsync(get.build(), this::resumed)
                  .whenComplete(
                      (response, failure) -> {
                        if (failure != null) {
                          finish(failure);
                        }
                      }),
          later);
      return true;
    }

    /** The body of a resumed stream: fed to this subscriber, or a refusal that fails the call. */
    private HttpResponse.BodySubscriber<Void> resumed(HttpResponse.ResponseInfo info) {
      if (info.statusCode() / 100 == 2 && eventStream(info.headers())) {
        return new HttpResponse.BodySubscriber<>() {
          @Override
          public CompletionStage<Void> getBody() {
            return reader.getBody().thenApply(ignored -> null);
          }

          @Override
          public void onSubscribe(Flow.Subscription subscription) {
            Resuming.this.onSubscribe(subscription);
          }

          @Override
          public void onNext(List<ByteBuffer> items) {
            Resuming.this.onNext(items);
          }

          @Override
          public void onError(Throwable failure) {
            Resuming.this.onError(failure);
          }

          @Override
          public void onComplete() {
            Resuming.this.onComplete();
          }
        };
      }
      finish(
          new IOException(
              "The MCP server answered "
                  + info.statusCode()
                  + " to resuming its event stream (GET with Last-Event-ID), so the call's answer"
                  + " is lost."));
      return HttpResponse.BodySubscribers.replacing(null);
    }
  }

  @Override
  public <T> HttpResponse<T> send(HttpRequest request, HttpResponse.BodyHandler<T> handler)
      throws IOException, InterruptedException {
    return delegate.send(request, handler);
  }

  @Override
  public <T> CompletableFuture<HttpResponse<T>> sendAsync(
      HttpRequest request,
      HttpResponse.BodyHandler<T> handler,
      HttpResponse.PushPromiseHandler<T> pushes) {
    return delegate.sendAsync(request, handler, pushes);
  }

  @Override
  public Optional<CookieHandler> cookieHandler() {
    return delegate.cookieHandler();
  }

  @Override
  public Optional<Duration> connectTimeout() {
    return delegate.connectTimeout();
  }

  @Override
  public Redirect followRedirects() {
    return delegate.followRedirects();
  }

  @Override
  public Optional<ProxySelector> proxy() {
    return delegate.proxy();
  }

  @Override
  public SSLContext sslContext() {
    return delegate.sslContext();
  }

  @Override
  public SSLParameters sslParameters() {
    return delegate.sslParameters();
  }

  @Override
  public Optional<Authenticator> authenticator() {
    return delegate.authenticator();
  }

  @Override
  public Version version() {
    return delegate.version();
  }

  @Override
  public Optional<Executor> executor() {
    return delegate.executor();
  }

  @Override
  public void shutdown() {
    delegate.shutdown();
  }

  @Override
  public void shutdownNow() {
    delegate.shutdownNow();
  }

  @Override
  public boolean awaitTermination(Duration duration) throws InterruptedException {
    return delegate.awaitTermination(duration);
  }

  @Override
  public boolean isTerminated() {
    return delegate.isTerminated();
  }

  @Override
  public void close() {
    delegate.close();
  }

  /** A builder that builds the wrapped builder's client, resuming. */
  private static final class Builder implements HttpClient.Builder {
    private final HttpClient.Builder delegate;

    Builder(HttpClient.Builder delegate) {
      this.delegate = delegate;
    }

    @Override
    public HttpClient.Builder cookieHandler(CookieHandler handler) {
      delegate.cookieHandler(handler);
      return this;
    }

    @Override
    public HttpClient.Builder connectTimeout(Duration duration) {
      delegate.connectTimeout(duration);
      return this;
    }

    @Override
    public HttpClient.Builder sslContext(SSLContext context) {
      delegate.sslContext(context);
      return this;
    }

    @Override
    public HttpClient.Builder sslParameters(SSLParameters parameters) {
      delegate.sslParameters(parameters);
      return this;
    }

    @Override
    public HttpClient.Builder executor(Executor executor) {
      delegate.executor(executor);
      return this;
    }

    @Override
    public HttpClient.Builder followRedirects(Redirect policy) {
      delegate.followRedirects(policy);
      return this;
    }

    @Override
    public HttpClient.Builder version(Version version) {
      delegate.version(version);
      return this;
    }

    @Override
    public HttpClient.Builder priority(int priority) {
      delegate.priority(priority);
      return this;
    }

    @Override
    public HttpClient.Builder proxy(ProxySelector selector) {
      delegate.proxy(selector);
      return this;
    }

    @Override
    public HttpClient.Builder authenticator(Authenticator authenticator) {
      delegate.authenticator(authenticator);
      return this;
    }

    @Override
    public HttpClient.Builder localAddress(InetAddress address) {
      delegate.localAddress(address);
      return this;
    }

    @Override
    public HttpClient build() {
      return new ResumingHttpClient(delegate.build());
    }
  }
}
