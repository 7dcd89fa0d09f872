package dev.toolhost.web;

import java.net.Inet4Address;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.Arrays;
import java.util.Objects;

/**
 * A CIDR range is a block of IPv4 or IPv6 addresses: a network address and the number of leading
 * bits every address of the block shares with it, such as {@code 10.0.0.0/8} or {@code fc00::/7}.
 *
 * <p>Written here rather than taken from a library: the JDK has none, the ones that exist are IPv4
 * only or come with a large library, and a prefix comparison of two byte arrays is all it is.
 *
 * @param network the network address, with every bit past the prefix cleared
 * @param prefix how many leading bits the block's addresses share, 0 to 32 or 0 to 128
 */
public record Cidr(byte[] network, int prefix) {

  public Cidr {
    Objects.requireNonNull(network, "network");
    if (network.length != 4 && network.length != 16) {
      throw new IllegalArgumentException("A network address has 4 or 16 bytes.");
    }
    if (prefix < 0 || prefix > network.length * 8) {
      throw new IllegalArgumentException(
          "A prefix of an " + (network.length * 8) + "-bit address is 0 to " + network.length * 8);
    }
    network = masked(network.clone(), prefix);
  }

  /**
   * Parses {@code address/prefix}, or an address alone (a block of one); the address must be a
   * literal IPv4 address in four decimal parts or an IPv6 address, never a name.
   *
   * @throws IllegalArgumentException when the text is not such a range, saying why
   */
  public static Cidr parse(String text) {
    String trimmed = text.strip();
    int slash = trimmed.indexOf('/');
    String address = slash < 0 ? trimmed : trimmed.substring(0, slash);
    byte[] bytes = literal(address);
    if (bytes == null) {
      throw new IllegalArgumentException(
          "'" + text + "' is not an IP address or CIDR range (such as 10.0.0.0/8 or fd00::/8)");
    }
    int prefix = bytes.length * 8;
    if (slash >= 0) {
      String digits = trimmed.substring(slash + 1);
      if (!digits.matches("[0-9]{1,3}") || Integer.parseInt(digits) > bytes.length * 8) {
        throw new IllegalArgumentException(
            "'"
                + text
                + "' has a prefix length that is not 0 to "
                + bytes.length * 8
                + " (such as 10.0.0.0/8 or fd00::/8)");
      }
      prefix = Integer.parseInt(digits);
    }
    return new Cidr(bytes, prefix);
  }

  /** Whether the address lies in this block; an IPv4 address never lies in an IPv6 block. */
  public boolean contains(InetAddress address) {
    return contains(address.getAddress());
  }

  /** Whether the address, as its 4 or 16 bytes, lies in this block. */
  public boolean contains(byte[] address) {
    if (address.length != network.length) {
      return false;
    }
    return Arrays.equals(masked(address.clone(), prefix), network);
  }

  /** The bytes of a literal IPv4 (four decimal parts) or IPv6 address, or null when not one. */
  static byte[] literal(String address) {
    String bare =
        address.startsWith("[") && address.endsWith("]")
            ? address.substring(1, address.length() - 1)
            : address;
    boolean v4 = Addresses.isCanonicalIpv4(bare);
    boolean v6 = bare.contains(":") && bare.matches("[0-9A-Fa-f:.%a-zA-Z0-9]+");
    if (!v4 && !v6) {
      return null;
    }
    try {
      // A literal: InetAddress parses it without a lookup.
      InetAddress parsed = InetAddress.getByName(bare);
      byte[] bytes = parsed.getAddress();
      if (v6 && parsed instanceof Inet4Address) {
        // ::ffff:a.b.c.d comes back as IPv4; a range written in IPv6 stays IPv6.
        byte[] mapped = new byte[16];
        mapped[10] = (byte) 0xff;
        mapped[11] = (byte) 0xff;
        System.arraycopy(bytes, 0, mapped, 12, 4);
        return mapped;
      }
      return bytes;
    } catch (UnknownHostException e) {
      return null;
    }
  }

  private static byte[] masked(byte[] bytes, int prefix) {
    for (int i = 0; i < bytes.length; i++) {
      int keep = Math.clamp(prefix - i * 8L, 0, 8);
      bytes[i] = (byte) (bytes[i] & (0xff00 >> keep));
    }
    return bytes;
  }

  @Override
  public boolean equals(Object other) {
    return other instanceof Cidr that
        && prefix == that.prefix
        && Arrays.equals(network, that.network);
  }

  @Override
  public int hashCode() {
    return 31 * Arrays.hashCode(network) + prefix;
  }

  @Override
  public String toString() {
    return Addresses.shown(network) + "/" + prefix;
  }
}
