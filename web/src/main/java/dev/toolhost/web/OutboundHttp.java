package dev.toolhost.web;

import java.io.IOException;
import java.io.InputStream;
import java.io.InterruptedIOException;
import java.net.IDN;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.URISyntaxException;
import java.net.UnknownHostException;
import java.nio.charset.Charset;
import java.nio.charset.IllegalCharsetNameException;
import java.nio.charset.UnsupportedCharsetException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.eclipse.jetty.client.HttpClient;
import org.eclipse.jetty.client.InputStreamResponseListener;
import org.eclipse.jetty.client.ProxyAuthenticationProtocolHandler;
import org.eclipse.jetty.client.Request;
import org.eclipse.jetty.client.Response;
import org.eclipse.jetty.client.WWWAuthenticationProtocolHandler;
import org.eclipse.jetty.http.HttpField;
import org.eclipse.jetty.http.HttpFields;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.http.HttpMethod;
import org.eclipse.jetty.http.MimeTypes;
import org.eclipse.jetty.util.Promise;
import org.eclipse.jetty.util.SocketAddressResolver;
import org.eclipse.jetty.util.thread.QueuedThreadPool;

/**
 * Outbound HTTP is the one client through which every fetch made on a model's behalf goes (web
 * pages, search APIs, GitHub, OpenRouter): it fetches a URL only when its {@link OutboundPolicy}
 * allows every address the URL's host resolves to, and it connects only to those addresses.
 *
 * <p>The check runs where the connection is made, in the client's resolver, for the first request
 * and for every redirect hop, so there is no window between the check and the connection for a name
 * to resolve elsewhere (DNS rebinding), and a redirect to an internal address is refused as a
 * direct request to it is. Before that, a URL is refused by its text when its scheme is not {@code
 * http} or {@code https}, it holds a user name or password, or its host is an IPv4 address in a
 * form other than four decimal parts ({@code 127.1}, {@code 0x7f000001}, {@code 0177.0.0.1}: Java
 * and curl read those differently, so none is taken). A name that resolves to any refused address
 * is refused whole. Redirects are followed here, not by Jetty, up to the policy's count; bodies are
 * read up to its cap after decompression, and a fetch, redirects included, takes at most its
 * timeout.
 *
 * <p>Thread-safe; one instance serves a host. Close it to stop its threads.
 */
public final class OutboundHttp implements AutoCloseable {

  /** How a host name becomes addresses: the JDK's resolver, or a test's. */
  @FunctionalInterface
  public interface Lookup {
    /**
     * The addresses of the host.
     *
     * @throws UnknownHostException when the name does not resolve
     */
    List<InetAddress> addresses(String host) throws UnknownHostException;

    /** The JDK's resolver: {@link InetAddress#getAllByName}. */
    static Lookup system() {
      return host -> Arrays.asList(InetAddress.getAllByName(host));
    }
  }

  /**
   * A response is what a fetch answered, after its redirects.
   *
   * @param uri the URL that answered, after redirects
   * @param status the HTTP status
   * @param headers the response's headers
   * @param body the body, decompressed
   */
  public record Response(URI uri, int status, HttpFields headers, byte[] body) {

    public Response {
      Objects.requireNonNull(uri, "uri");
      Objects.requireNonNull(headers, "headers");
      Objects.requireNonNull(body, "body");
    }

    /** The media type, lower case and without parameters; empty when the server sent none. */
    public Optional<String> mediaType() {
      String type = headers.get(HttpHeader.CONTENT_TYPE);
      if (type == null || type.isBlank()) {
        return Optional.empty();
      }
      return Optional.of(
          MimeTypes.getContentTypeWithoutCharset(type).strip().toLowerCase(Locale.ROOT));
    }

    /** The charset the Content-Type header names, when it names one the JDK knows. */
    public Optional<Charset> charset() {
      String type = headers.get(HttpHeader.CONTENT_TYPE);
      String name = type == null ? null : MimeTypes.getCharsetFromContentType(type);
      if (name == null) {
        return Optional.empty();
      }
      try {
        return Optional.of(Charset.forName(name));
      } catch (IllegalCharsetNameException | UnsupportedCharsetException e) {
        return Optional.empty();
      }
    }

    /** The body as text, in the charset the response names, else UTF-8. */
    public String text() {
      return new String(body, charset().orElse(java.nio.charset.StandardCharsets.UTF_8));
    }

    /** Whether the status is 2xx. */
    public boolean ok() {
      return status >= 200 && status < 300;
    }
  }

  private final OutboundPolicy policy;
  private final HttpClient client;
  private final ExecutorService lookups;
  private final VettingResolver resolver;

  private OutboundHttp(OutboundPolicy policy, Lookup lookup) {
    this.policy = Objects.requireNonNull(policy, "policy");
    this.lookups = Executors.newVirtualThreadPerTaskExecutor();
    this.client = new HttpClient();
    QueuedThreadPool threads = new QueuedThreadPool();
    threads.setName("toolhost-outbound");
    threads.setDaemon(true);
    client.setExecutor(threads);
    // Redirects are followed in fetch(), so that each hop's URL is checked as the first one is.
    client.setFollowRedirects(false);
    client.setUserAgentField(new HttpField(HttpHeader.USER_AGENT, policy.userAgent()));
    client.setConnectTimeout(Math.min(policy.timeout().toMillis(), 10_000));
    client.setIdleTimeout(policy.timeout().toMillis());
    this.resolver = new VettingResolver(policy, Objects.requireNonNull(lookup));
    client.setSocketAddressResolver(resolver);
    try {
      client.start();
    } catch (Exception e) {
      lookups.close();
      throw new IllegalStateException("The outbound HTTP client did not start: " + e, e);
    }
    // A 401 or 407 is an answer for the caller to read, not a challenge for Jetty to take up (it
    // fails a 401 without WWW-Authenticate, as Brave sends). Start adds them, so they go after.
    client.getProtocolHandlers().remove(WWWAuthenticationProtocolHandler.NAME);
    client.getProtocolHandlers().remove(ProxyAuthenticationProtocolHandler.NAME);
  }

  /** A client under the policy, resolving names with the JDK. */
  public static OutboundHttp start(OutboundPolicy policy) {
    return new OutboundHttp(policy, Lookup.system());
  }

  /** A client under the policy, resolving names with the given lookup (tests use their own). */
  public static OutboundHttp start(OutboundPolicy policy, Lookup lookup) {
    return new OutboundHttp(policy, lookup);
  }

  /** The policy this client enforces. */
  public OutboundPolicy policy() {
    return policy;
  }

  /**
   * Checks a URL's text: it must be {@code http} or {@code https}, have a host, hold no user name
   * or password, and write an IPv4 host as four decimal parts. Addresses are checked later, where
   * the connection is made.
   *
   * @throws OutboundException with reason {@link OutboundException.Reason#BAD_URL} saying why not
   */
  public static URI checkedUrl(String text) {
    URI uri;
    try {
      uri = new URI(text.strip());
    } catch (URISyntaxException e) {
      throw bad("'" + text + "' is not a valid URL (" + e.getReason() + ")");
    }
    return checkedUrl(uri);
  }

  /** Checks a URL as {@link #checkedUrl(String)} does. */
  public static URI checkedUrl(URI uri) {
    String scheme = uri.getScheme() == null ? "" : uri.getScheme().toLowerCase(Locale.ROOT);
    if (!scheme.equals("http") && !scheme.equals("https")) {
      throw bad(
          "only http and https URLs are fetched, and '"
              + uri
              + "' is "
              + (scheme.isEmpty() ? "not an absolute URL" : "a " + scheme + " URL"));
    }
    String authority = uri.getRawAuthority();
    if (authority == null || authority.isEmpty()) {
      throw bad("'" + uri + "' has no host");
    }
    if (authority.contains("@")) {
      throw bad(
          "'"
              + uri
              + "' holds a user name or password before '@'; such URLs are refused, for the host"
              + " is what follows the '@'");
    }
    String host = hostOf(authority);
    if (!host.startsWith("[") && Addresses.looksNumeric(host)) {
      if (!Addresses.isCanonicalIpv4(host)) {
        throw bad(
            "the host '"
                + host
                + "' is an IPv4 address in a short, octal, hex or single-number form, which"
                + " clients read differently; write it as four decimal numbers");
      }
    }
    if (uri.getHost() == null && !host.chars().allMatch(c -> c < 0x80)) {
      // An internationalised name: java.net.URI takes only ASCII hosts, so it goes as punycode.
      String ascii;
      try {
        ascii = IDN.toASCII(host, IDN.ALLOW_UNASSIGNED).toLowerCase(Locale.ROOT);
      } catch (IllegalArgumentException e) {
        throw bad("'" + uri + "' has a host name that cannot be written in ASCII ('" + host + "')");
      }
      int colon = authority.lastIndexOf(':');
      String rest = colon < 0 ? "" : authority.substring(colon);
      try {
        return checkedUrl(
            new URI(
                scheme
                    + "://"
                    + ascii
                    + rest
                    + (uri.getRawPath() == null ? "" : uri.getRawPath())
                    + (uri.getRawQuery() == null ? "" : "?" + uri.getRawQuery())
                    + (uri.getRawFragment() == null ? "" : "#" + uri.getRawFragment())));
      } catch (URISyntaxException e) {
        throw bad("'" + uri + "' is not a valid URL (" + e.getReason() + ")");
      }
    }
    if (uri.getHost() == null) {
      throw bad("'" + uri + "' has no valid host name ('" + host + "')");
    }
    return uri;
  }

  private static String hostOf(String authority) {
    if (authority.startsWith("[")) {
      int close = authority.indexOf(']');
      return close < 0 ? authority : authority.substring(0, close + 1);
    }
    int colon = authority.lastIndexOf(':');
    return (colon < 0 ? authority : authority.substring(0, colon)).toLowerCase(Locale.ROOT);
  }

  private static OutboundException bad(String message) {
    return new OutboundException(OutboundException.Reason.BAD_URL, message);
  }

  /**
   * Checks a URL as a fetch would, without fetching it: its text, then every address its host
   * resolves to. For a client that connects by other means (a browser's navigation) and must refuse
   * what this client refuses; it does not pin the addresses, so such a client should connect
   * through a proxy that checks again ({@link #checkedAddresses}), or accept the window between
   * this check and its own lookup.
   *
   * @throws OutboundException when the URL or an address is refused, or the host does not resolve
   */
  public void vet(URI url) {
    URI checked = checkedUrl(url);
    String host = checked.getHost();
    try {
      resolver.vetted(host, port(checked));
    } catch (UnknownHostException e) {
      throw new OutboundException(
          OutboundException.Reason.UNREACHABLE, "the host '" + host + "' does not resolve", e);
    }
  }

  /**
   * Resolves a host and checks every address it resolves to, as a fetch does where it connects: the
   * addresses to connect to, all allowed. For a proxy that connects on a browser's behalf: it
   * connects only to what this returns, so there is no second lookup for a name to answer
   * differently to (DNS rebinding).
   *
   * @param host a host name or address literal (an IPv6 literal with or without brackets)
   * @param port the port, to name in a refusal
   * @throws OutboundException REFUSED when the policy refuses an address (the whole name is
   *     refused), UNREACHABLE when the host does not resolve
   */
  public List<InetAddress> checkedAddresses(String host, int port) {
    try {
      return resolver.vetted(host, port).stream().map(InetSocketAddress::getAddress).toList();
    } catch (UnknownHostException e) {
      throw new OutboundException(
          OutboundException.Reason.UNREACHABLE, "the host '" + host + "' does not resolve", e);
    }
  }

  /**
   * Fetches a URL with GET, following redirects as the policy allows.
   *
   * @param url the URL, as the model gave it
   * @param headers request headers to send (on every hop to the first URL's origin; only User-Agent
   *     and Accept on hops to another origin, so that credentials never follow a redirect)
   * @throws OutboundException when the URL or an address is refused, or the fetch fails
   * @throws InterruptedException when the calling thread is interrupted
   */
  public Response get(String url, Map<String, String> headers) throws InterruptedException {
    return get(checkedUrl(url), headers);
  }

  /** Fetches a URL as {@link #get(String, Map)} does. */
  public Response get(URI url, Map<String, String> headers) throws InterruptedException {
    URI first = checkedUrl(url);
    long deadline = System.nanoTime() + policy.timeout().toNanos();
    URI current = first;
    for (int hop = 0; ; hop++) {
      boolean sameOrigin = sameOrigin(first, current);
      Response response = once(current, sameOrigin ? headers : safeHeaders(headers), deadline);
      String location = response.headers().get(HttpHeader.LOCATION);
      if (!isRedirect(response.status()) || location == null) {
        return response;
      }
      if (hop == policy.maxRedirects()) {
        throw new OutboundException(
            OutboundException.Reason.TOO_MANY_REDIRECTS,
            "'"
                + first
                + "' redirected more than "
                + policy.maxRedirects()
                + " times (the last to '"
                + location
                + "'); no more are followed");
      }
      URI next;
      try {
        next = current.resolve(new URI(location.strip()));
      } catch (URISyntaxException | IllegalArgumentException e) {
        throw bad("'" + current + "' redirected to '" + location + "', which is not a valid URL");
      }
      try {
        current = checkedUrl(next);
      } catch (OutboundException e) {
        throw new OutboundException(
            e.reason(), "'" + current + "' redirected to a refused URL: " + e.getMessage());
      }
    }
  }

  /**
   * Sends a body with POST and reads the answer, under the same checks as {@link #get(URI, Map)}.
   * Redirects are not followed: a POST is answered where it was sent, and a redirect comes back as
   * it is.
   *
   * @param url the URL, which an operator configured or a caller checked
   * @param headers request headers to send
   * @param contentType the body's media type
   * @param body the body
   * @throws OutboundException when the URL or an address is refused, or the exchange fails
   * @throws InterruptedException when the calling thread is interrupted
   */
  public Response post(URI url, Map<String, String> headers, String contentType, byte[] body)
      throws InterruptedException {
    URI checked = checkedUrl(url);
    long deadline = System.nanoTime() + policy.timeout().toNanos();
    Request request = postRequest(checked, headers, contentType, body, policy.timeout());
    InputStreamResponseListener listener = new InputStreamResponseListener();
    request.send(listener);
    org.eclipse.jetty.client.Response head = head(checked, request, listener, deadline);
    return new Response(
        checked, head.getStatus(), head.getHeaders(), body(checked, head, listener));
  }

  /**
   * A streamed answer: the status and headers of a POST's answer, and its body to read as it
   * arrives (server-sent events). Close it to stop reading; closing aborts the exchange.
   *
   * @param uri the URL that answered
   * @param status the HTTP status
   * @param headers the answer's headers
   * @param body the body as it arrives, with no cap: the caller reads it line by line and stops
   */
  public record Streamed(URI uri, int status, HttpFields headers, InputStream body)
      implements AutoCloseable {
    @Override
    public void close() {
      try {
        body.close();
      } catch (IOException e) {
        // Closing a stream that broke: nothing more to read either way.
      }
    }
  }

  /**
   * Sends a body with POST and answers as soon as the status and headers arrive, with the body to
   * read as it streams in. The policy's timeout bounds the wait for the head and each silence
   * between parts of the body (the client's idle timeout); the whole stream may last up to {@code
   * maxDuration}.
   *
   * @throws OutboundException when the URL or an address is refused, or the exchange fails
   * @throws InterruptedException when the calling thread is interrupted
   */
  public Streamed postStreaming(
      URI url, Map<String, String> headers, String contentType, byte[] body, Duration maxDuration)
      throws InterruptedException {
    URI checked = checkedUrl(url);
    long deadline = System.nanoTime() + policy.timeout().toNanos();
    Request request = postRequest(checked, headers, contentType, body, maxDuration);
    InputStreamResponseListener listener = new InputStreamResponseListener();
    request.send(listener);
    org.eclipse.jetty.client.Response head = head(checked, request, listener, deadline);
    return new Streamed(checked, head.getStatus(), head.getHeaders(), listener.getInputStream());
  }

  private Request postRequest(
      URI uri, Map<String, String> headers, String contentType, byte[] body, Duration total) {
    return client
        .newRequest(uri)
        .method(HttpMethod.POST)
        .timeout(total.toNanos(), TimeUnit.NANOSECONDS)
        .headers(h -> headers.forEach(h::put))
        .body(new org.eclipse.jetty.client.BytesRequestContent(contentType, body));
  }

  private org.eclipse.jetty.client.Response head(
      URI uri, Request request, InputStreamResponseListener listener, long deadline)
      throws InterruptedException {
    long left = deadline - System.nanoTime();
    try {
      return listener.get(Math.max(1, left), TimeUnit.NANOSECONDS);
    } catch (TimeoutException e) {
      request.abort(e);
      throw timedOut(uri);
    } catch (ExecutionException e) {
      throw failure(uri, e.getCause());
    } catch (InterruptedException e) {
      request.abort(e);
      throw e;
    }
  }

  private static boolean isRedirect(int status) {
    return status == 301 || status == 302 || status == 303 || status == 307 || status == 308;
  }

  /**
   * Whether the two addresses have one origin: the same scheme, host and port (a missing port is
   * the scheme's own), so that what is sent to one may be sent to the other.
   */
  public static boolean sameOrigin(URI a, URI b) {
    return a.getScheme().equalsIgnoreCase(b.getScheme())
        && a.getHost().equalsIgnoreCase(b.getHost())
        && port(a) == port(b);
  }

  private static int port(URI uri) {
    return uri.getPort() >= 0
        ? uri.getPort()
        : uri.getScheme().equalsIgnoreCase("https") ? 443 : 80;
  }

  private static Map<String, String> safeHeaders(Map<String, String> headers) {
    Map<String, String> safe = new java.util.LinkedHashMap<>();
    headers.forEach(
        (name, value) -> {
          if (name.equalsIgnoreCase("Accept") || name.equalsIgnoreCase("User-Agent")) {
            safe.put(name, value);
          }
        });
    return safe;
  }

  private Response once(URI uri, Map<String, String> headers, long deadline)
      throws InterruptedException {
    long left = deadline - System.nanoTime();
    if (left <= 0) {
      throw timedOut(uri);
    }
    Request request =
        client
            .newRequest(uri)
            .method(HttpMethod.GET)
            .timeout(left, TimeUnit.NANOSECONDS)
            .headers(h -> headers.forEach(h::put));
    InputStreamResponseListener listener = new InputStreamResponseListener();
    request.send(listener);
    org.eclipse.jetty.client.Response head = head(uri, request, listener, deadline);
    if (isRedirect(head.getStatus())) {
      // The body of a redirect is not read: the next hop is all that matters.
      head.abort(new IOException("redirect followed"));
      return new Response(uri, head.getStatus(), head.getHeaders(), new byte[0]);
    }
    return new Response(uri, head.getStatus(), head.getHeaders(), body(uri, head, listener));
  }

  private byte[] body(
      URI uri, org.eclipse.jetty.client.Response head, InputStreamResponseListener listener)
      throws InterruptedException {
    long cap = policy.maxBodyBytes();
    long declared = head.getHeaders().getLongField(HttpHeader.CONTENT_LENGTH);
    if (declared > cap) {
      head.abort(new IOException("body too large"));
      throw tooLarge(uri, cap);
    }
    try (InputStream in = listener.getInputStream()) {
      byte[] body = in.readNBytes((int) Math.min(cap + 1, Integer.MAX_VALUE - 8));
      if (body.length > cap) {
        head.abort(new IOException("body too large"));
        throw tooLarge(uri, cap);
      }
      return body;
    } catch (InterruptedIOException e) {
      head.abort(e);
      if (Thread.currentThread().isInterrupted()) {
        throw new InterruptedException("interrupted while reading " + uri);
      }
      throw timedOut(uri);
    } catch (IOException e) {
      throw failure(uri, e);
    } catch (RuntimeException e) {
      // Jetty's stream rethrows a failed exchange's own exception, which may be unchecked.
      if (e instanceof OutboundException outbound) {
        throw outbound;
      }
      throw failure(uri, e);
    }
  }

  private OutboundException timedOut(URI uri) {
    return new OutboundException(
        OutboundException.Reason.TIMEOUT,
        "fetching '" + uri + "' took longer than " + policy.timeout().toSeconds() + " s");
  }

  private static OutboundException tooLarge(URI uri, long cap) {
    return new OutboundException(
        OutboundException.Reason.TOO_LARGE,
        "the body of '" + uri + "' is larger than the cap of " + cap + " bytes");
  }

  private OutboundException failure(URI uri, Throwable cause) {
    for (Throwable t = cause; t != null; t = t.getCause()) {
      if (t instanceof OutboundException outbound) {
        return outbound;
      }
      if (t instanceof TimeoutException) {
        return timedOut(uri);
      }
      if (t instanceof UnknownHostException) {
        return new OutboundException(
            OutboundException.Reason.UNREACHABLE,
            "the host of '" + uri + "' does not resolve (" + uri.getHost() + ")",
            cause);
      }
    }
    return new OutboundException(
        OutboundException.Reason.UNREACHABLE,
        "fetching '" + uri + "' failed: " + describe(cause),
        cause);
  }

  private static String describe(Throwable cause) {
    if (cause == null) {
      return "the exchange broke";
    }
    String message = cause.getMessage();
    return cause.getClass().getSimpleName() + (message == null ? "" : ": " + message);
  }

  @Override
  public void close() {
    try {
      client.stop();
    } catch (Exception e) {
      throw new IllegalStateException("The outbound HTTP client did not stop: " + e, e);
    } finally {
      lookups.close();
    }
  }

  /**
   * The resolver that vets: it looks a name up (literals need no lookup), refuses the whole name
   * when the policy refuses any of its addresses, and hands the client exactly the addresses it
   * checked, so the client connects to nothing else.
   */
  private final class VettingResolver implements SocketAddressResolver {
    private final OutboundPolicy policy;
    private final Lookup lookup;

    VettingResolver(OutboundPolicy policy, Lookup lookup) {
      this.policy = policy;
      this.lookup = lookup;
    }

    @Override
    public void resolve(
        String host,
        int port,
        Map<String, Object> context,
        Promise<List<InetSocketAddress>> promise) {
      lookups.execute(
          () -> {
            try {
              promise.succeeded(vetted(host, port));
            } catch (UnknownHostException | RuntimeException e) {
              promise.failed(e);
            }
          });
    }

    private List<InetSocketAddress> vetted(String host, int port) throws UnknownHostException {
      String bare =
          host.startsWith("[") && host.endsWith("]") ? host.substring(1, host.length() - 1) : host;
      List<InetAddress> addresses = lookup.addresses(bare);
      if (addresses.isEmpty()) {
        throw new UnknownHostException(bare);
      }
      List<InetSocketAddress> vetted = new ArrayList<>(addresses.size());
      for (InetAddress address : addresses) {
        Optional<String> refusal = policy.refusal(bare, address);
        if (refusal.isPresent()) {
          throw new OutboundException(OutboundException.Reason.REFUSED, refusal.get());
        }
        vetted.add(new InetSocketAddress(address, port));
      }
      return vetted;
    }
  }
}
