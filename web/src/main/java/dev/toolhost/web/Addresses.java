package dev.toolhost.web;

import java.net.InetAddress;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.regex.Pattern;

/**
 * Addresses are the facts the outbound policy decides by: which IP ranges a fetch made on a model's
 * behalf never reaches unless an operator opens them, which addresses are cloud metadata services
 * (never reached at all), how an IPv4 address hides inside an IPv6 one, and which host texts are
 * IPv4 addresses written in a form that clients read differently.
 */
public final class Addresses {

  // First: the ranges below are parsed with them as the class initializes.
  private static final Pattern DECIMAL_PART = Pattern.compile("0|[1-9][0-9]{0,2}");
  private static final Pattern NUMERIC_LABEL = Pattern.compile("[0-9]+|0[xX][0-9A-Fa-f]*");

  /** A range refused by default, with what it is, for the error a refusal gives. */
  record Range(Cidr cidr, String what) {}

  /** The ranges a fetch never reaches unless the allow-list opens them. */
  static final List<Range> INTERNAL =
      List.of(
          range("0.0.0.0/8", "the unspecified 'this network' range"),
          range("10.0.0.0/8", "a private range"),
          range("100.64.0.0/10", "the carrier-grade NAT range"),
          range("127.0.0.0/8", "the loopback range"),
          range("169.254.0.0/16", "the link-local range"),
          range("172.16.0.0/12", "a private range"),
          range("192.0.0.0/24", "the IETF protocol assignments range"),
          range("192.0.2.0/24", "a documentation range"),
          range("192.88.99.0/24", "the 6to4 relay range"),
          range("192.168.0.0/16", "a private range"),
          range("198.18.0.0/15", "the benchmarking range"),
          range("198.51.100.0/24", "a documentation range"),
          range("203.0.113.0/24", "a documentation range"),
          range("224.0.0.0/4", "the multicast range"),
          range("240.0.0.0/4", "the reserved range (and broadcast)"),
          range("::/128", "the unspecified IPv6 address"),
          range("::1/128", "the IPv6 loopback address"),
          range("64:ff9b:1::/48", "the local-use NAT64 range"),
          range("100::/64", "the IPv6 discard range"),
          range("2001::/32", "the Teredo range (an IPv4 address hides in it)"),
          range("2001:db8::/32", "the IPv6 documentation range"),
          range("fc00::/7", "the IPv6 unique-local range"),
          range("fe80::/10", "the IPv6 link-local range"),
          range("fec0::/10", "the deprecated IPv6 site-local range"),
          range("ff00::/8", "the IPv6 multicast range"));

  /**
   * Cloud metadata services: refused even when the allow-list opens the range they lie in, for they
   * hand out the machine's credentials (AWS, GCP, Azure, OCI at 169.254.169.254; AWS ECS at
   * 169.254.170.2; Alibaba at 100.100.100.200; AWS over IPv6 at fd00:ec2::254).
   */
  static final List<Cidr> METADATA =
      List.of(
          Cidr.parse("169.254.169.254/32"),
          Cidr.parse("169.254.170.2/32"),
          Cidr.parse("100.100.100.200/32"),
          Cidr.parse("fd00:ec2::254/128"));

  private static final Cidr MAPPED = Cidr.parse("::ffff:0:0/96");
  private static final Cidr COMPATIBLE = Cidr.parse("::/96");
  private static final Cidr NAT64 = Cidr.parse("64:ff9b::/96");
  private static final Cidr SIX_TO_FOUR = Cidr.parse("2002::/16");

  private Addresses() {}

  private static Range range(String cidr, String what) {
    return new Range(Cidr.parse(cidr), what);
  }

  /**
   * The IPv4 address an IPv6 address carries, when it is one of the forms that hide one:
   * IPv4-mapped ({@code ::ffff:a.b.c.d}), IPv4-compatible ({@code ::a.b.c.d}), NAT64 ({@code
   * 64:ff9b::a.b.c.d}) or 6to4 ({@code 2002:AABB:CCDD::}).
   */
  static Optional<byte[]> embeddedIpv4(byte[] address) {
    if (address.length != 16) {
      return Optional.empty();
    }
    if (MAPPED.contains(address) || NAT64.contains(address)) {
      return Optional.of(slice(address, 12));
    }
    if (COMPATIBLE.contains(address)) {
      byte[] v4 = slice(address, 12);
      // :: and ::1 are themselves, not IPv4 addresses.
      return v4[0] == 0 && v4[1] == 0 && v4[2] == 0 && (v4[3] == 0 || v4[3] == 1)
          ? Optional.empty()
          : Optional.of(v4);
    }
    if (SIX_TO_FOUR.contains(address)) {
      return Optional.of(slice(address, 2));
    }
    return Optional.empty();
  }

  private static byte[] slice(byte[] address, int from) {
    byte[] v4 = new byte[4];
    System.arraycopy(address, from, v4, 0, 4);
    return v4;
  }

  /** Whether the address is a cloud metadata service's, directly or inside an IPv6 form. */
  static boolean isMetadata(byte[] address) {
    for (Cidr metadata : METADATA) {
      if (metadata.contains(address)) {
        return true;
      }
    }
    return embeddedIpv4(address).map(Addresses::isMetadata).orElse(false);
  }

  /**
   * What internal range the address lies in, directly or as the IPv4 address inside an IPv6 form;
   * empty for a public address.
   */
  static Optional<String> internalRange(byte[] address) {
    Optional<byte[]> inner = embeddedIpv4(address);
    if (inner.isPresent()) {
      return internalRange(inner.get())
          .map(what -> what + ", inside an IPv6 address that carries an IPv4 one");
    }
    for (Range range : INTERNAL) {
      if (range.cidr().contains(address)) {
        return Optional.of(range.what() + " " + range.cidr());
      }
    }
    return Optional.empty();
  }

  /**
   * The text of an address for an error: IPv4 as four decimal parts, IPv6 in its short form (RFC
   * 5952: the longest run of two or more zero groups written {@code ::}), which the JDK does not
   * write.
   */
  static String shown(InetAddress address) {
    return shown(address.getAddress());
  }

  /** The text of an address given as its 4 or 16 bytes. */
  static String shown(byte[] bytes) {
    if (bytes.length == 4) {
      return (bytes[0] & 0xff)
          + "."
          + (bytes[1] & 0xff)
          + "."
          + (bytes[2] & 0xff)
          + "."
          + (bytes[3] & 0xff);
    }
    int[] groups = new int[8];
    for (int i = 0; i < 8; i++) {
      groups[i] = ((bytes[2 * i] & 0xff) << 8) | (bytes[2 * i + 1] & 0xff);
    }
    int bestStart = -1;
    int bestLength = 1;
    for (int i = 0; i < 8; ) {
      int j = i;
      while (j < 8 && groups[j] == 0) {
        j++;
      }
      if (j - i > bestLength) {
        bestStart = i;
        bestLength = j - i;
      }
      i = j == i ? i + 1 : j;
    }
    StringBuilder out = new StringBuilder();
    for (int i = 0; i < 8; i++) {
      if (i == bestStart) {
        out.append("::");
        i += bestLength - 1;
        continue;
      }
      if (out.length() > 0 && out.charAt(out.length() - 1) != ':') {
        out.append(':');
      }
      out.append(Integer.toHexString(groups[i]));
    }
    return out.toString();
  }

  /** Whether the text is an IPv4 address in four decimal parts, none over 255, no leading zero. */
  static boolean isCanonicalIpv4(String host) {
    String[] parts = host.split("\\.", -1);
    if (parts.length != 4) {
      return false;
    }
    for (String part : parts) {
      if (!DECIMAL_PART.matcher(part).matches() || Integer.parseInt(part) > 255) {
        return false;
      }
    }
    return true;
  }

  /**
   * Whether a URL's host text is an IPv4 address in some form, as browsers and curl read hosts (the
   * WHATWG URL standard): its last label, less a trailing dot, is a decimal number or {@code 0x}
   * and hex digits. {@code 127.1}, {@code 2130706433}, {@code 0x7f000001} and {@code 0177.0.0.1}
   * all are; Java's {@code InetAddress} reads some of them as curl does and some not ({@code
   * 0177.0.0.1} as 177.0.0.1), so only the canonical form is taken.
   */
  static boolean looksNumeric(String host) {
    String bare = host.endsWith(".") ? host.substring(0, host.length() - 1) : host;
    int dot = bare.lastIndexOf('.');
    String last = bare.substring(dot + 1).toLowerCase(Locale.ROOT);
    return !last.isEmpty() && NUMERIC_LABEL.matcher(last).matches();
  }
}
