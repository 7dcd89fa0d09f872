package dev.toolhost.web;

import java.net.InetAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;

/**
 * An outbound policy says what a fetch made on a model's behalf may reach and how much of it: the
 * internal ranges it opens (CIDR ranges, and host names whose addresses are all opened), how many
 * redirects it follows, the largest body it reads and how long it waits.
 *
 * <p>By default it refuses every internal address ({@link Addresses#INTERNAL}: loopback, private,
 * link-local, carrier-grade NAT, multicast, reserved, unspecified, IPv6 unique-local and
 * link-local, and the IPv4 address inside mapped, compatible, NAT64 and 6to4 forms) and always the
 * cloud metadata addresses ({@link Addresses#METADATA}), which no allow entry opens.
 *
 * @param allowedRanges internal ranges opened
 * @param allowedHosts host names opened whatever they resolve to (but metadata), lower case; an
 *     entry {@code *.example.com} opens every name under example.com
 * @param maxRedirects how many redirects one fetch follows (5)
 * @param maxBodyBytes the longest body read, after decompression (10 MiB)
 * @param timeout how long one fetch may take, redirects included (30 seconds)
 * @param userAgent the User-Agent header sent
 */
public record OutboundPolicy(
    List<Cidr> allowedRanges,
    Set<String> allowedHosts,
    int maxRedirects,
    long maxBodyBytes,
    Duration timeout,
    String userAgent) {

  /** The most redirects followed by default. */
  public static final int MAX_REDIRECTS = 5;

  /** The longest body read by default: 10 MiB. */
  public static final long MAX_BODY_BYTES = 10L << 20;

  /** How long a fetch may take by default. */
  public static final Duration TIMEOUT = Duration.ofSeconds(30);

  /** The User-Agent header sent by default. */
  public static final String USER_AGENT = "Toolhost/0.1 (+https://github.com/toolhost)";

  public OutboundPolicy {
    allowedRanges = List.copyOf(allowedRanges);
    Set<String> lower = new LinkedHashSet<>();
    allowedHosts.forEach(host -> lower.add(host.toLowerCase(Locale.ROOT)));
    allowedHosts = Set.copyOf(lower);
    Objects.requireNonNull(timeout, "timeout");
    Objects.requireNonNull(userAgent, "userAgent");
    if (maxRedirects < 0 || maxBodyBytes < 1 || timeout.isNegative() || timeout.isZero()) {
      throw new IllegalArgumentException(
          "maxRedirects must not be negative, maxBodyBytes and timeout must be positive.");
    }
  }

  /** The default policy: nothing internal opened, the default caps. */
  public static OutboundPolicy defaults() {
    return new OutboundPolicy(
        List.of(), Set.of(), MAX_REDIRECTS, MAX_BODY_BYTES, TIMEOUT, USER_AGENT);
  }

  /** This policy with the given CIDR ranges opened as well. */
  public OutboundPolicy allowingRanges(List<Cidr> ranges) {
    List<Cidr> all = new ArrayList<>(allowedRanges);
    all.addAll(ranges);
    return new OutboundPolicy(all, allowedHosts, maxRedirects, maxBodyBytes, timeout, userAgent);
  }

  /**
   * This policy with the given host name opened as well: how a service an operator configured (a
   * search API, an API base URL) is reached wherever it runs.
   */
  public OutboundPolicy allowingHost(String host) {
    Set<String> all = new LinkedHashSet<>(allowedHosts);
    all.add(host.toLowerCase(Locale.ROOT));
    return new OutboundPolicy(allowedRanges, all, maxRedirects, maxBodyBytes, timeout, userAgent);
  }

  /** This policy with other caps. */
  public OutboundPolicy withCaps(int redirects, long bodyBytes, Duration fetchTimeout) {
    return new OutboundPolicy(
        allowedRanges, allowedHosts, redirects, bodyBytes, fetchTimeout, userAgent);
  }

  /**
   * Whether the host name is opened by name: listed, or under a listed {@code *.} domain. For a
   * capability that posts only to hosts an operator listed (scheduled tasks' webhooks).
   */
  public boolean hostAllowed(String host) {
    String name = host.toLowerCase(Locale.ROOT);
    if (name.endsWith(".")) {
      name = name.substring(0, name.length() - 1);
    }
    for (String allowed : allowedHosts) {
      if (allowed.startsWith("*.")
          ? name.endsWith(allowed.substring(1)) && name.length() > allowed.length() - 1
          : allowed.equals(name)) {
        return true;
      }
    }
    return false;
  }

  /**
   * Why a connection to the address, which the host name resolved to, is refused; empty when it is
   * allowed.
   */
  public Optional<String> refusal(String host, InetAddress address) {
    byte[] bytes = address.getAddress();
    String shown = Addresses.shown(address);
    String subject =
        shown.equals(host) ? shown + ", which" : "'" + host + "' resolves to " + shown + ", which";
    if (Addresses.isMetadata(bytes)) {
      return Optional.of(
          subject
              + " is a cloud metadata address; it is never fetched, whatever the allow-list says");
    }
    if (hostAllowed(host)) {
      return Optional.empty();
    }
    for (Cidr range : allowedRanges) {
      if (range.contains(bytes)
          || Addresses.embeddedIpv4(bytes).map(range::contains).orElse(false)) {
        return Optional.empty();
      }
    }
    return Addresses.internalRange(bytes)
        .map(
            what ->
                subject
                    + " lies in "
                    + what
                    + "; internal addresses are refused unless the config's web.outbound.allow"
                    + " opens them");
  }
}
