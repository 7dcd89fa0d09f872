package dev.toolhost.mcp;

import dev.toolhost.core.ToolException;
import java.net.Inet4Address;
import java.net.Inet6Address;
import java.net.InetAddress;
import java.net.URI;
import java.net.UnknownHostException;
import java.util.Locale;
import java.util.Objects;

/**
 * A registration policy is which MCP servers a model may add at run time with {@code
 * mcp_register_server}. Registering a stdio server runs a program the model names on the host, so
 * it is code execution; registering an HTTP server makes the host send requests wherever the model
 * points it. Both are off unless the operator opts in.
 *
 * <p>{@link Allowed#NONE} (the default): the bridge offers neither {@code mcp_register_server} nor
 * {@code mcp_unregister_server}. {@link Allowed#HTTP}: http(s) URLs only. {@link Allowed#STDIO}:
 * commands too, and URLs (running any program is a superset of reaching any address). An http(s)
 * URL whose host resolves to any loopback, private, link-local (cloud metadata), unique-local,
 * carrier-grade NAT, multicast or unspecified address is refused unless {@code privateAddresses} is
 * true. The name is resolved when the model registers it; a DNS answer that changes later is not
 * checked again.
 *
 * @param allowed which kinds of server a model may register
 * @param privateAddresses whether an HTTP server may be on a private, loopback or link-local
 *     address
 */
public record RegistrationPolicy(Allowed allowed, boolean privateAddresses) {

  /** Which kinds of server a model may register. */
  public enum Allowed {
    /** None: the register and unregister tools are not offered. */
    NONE,
    /** Streamable HTTP and SSE servers by URL, on public addresses unless allowed otherwise. */
    HTTP,
    /** Stdio servers by command (running any program on the host), and HTTP servers. */
    STDIO
  }

  public RegistrationPolicy {
    Objects.requireNonNull(allowed, "allowed");
  }

  /** No registration at run time: the default. */
  public static RegistrationPolicy none() {
    return new RegistrationPolicy(Allowed.NONE, false);
  }

  /** Whether the register and unregister tools are offered at all. */
  public boolean offered() {
    return allowed != Allowed.NONE;
  }

  /**
   * Checks a stdio command a model asked to register.
   *
   * @throws ToolException {@code invalid_arguments} when this policy allows no stdio servers
   */
  void checkCommand() {
    if (allowed != Allowed.STDIO) {
      throw ToolException.invalidArguments(
          "This host does not let a model start programs as MCP servers (mcp.allow_register is "
              + allowed.name().toLowerCase(Locale.ROOT)
              + "). Register an http(s) URL instead, or ask the operator to add the server to the"
              + " config.");
    }
  }

  /**
   * Checks an http(s) URL a model asked to register, resolving its host.
   *
   * @throws ToolException {@code invalid_arguments} when the URL is refused
   */
  void checkUrl(URI url) {
    String host = url.getHost();
    if (host == null || host.isEmpty()) {
      throw ToolException.invalidArguments(
          "'"
              + Redaction.url(url)
              + "' has no host. Send an http(s) URL such as"
              + " https://mcp.example.com/mcp.");
    }
    if (privateAddresses) {
      return;
    }
    InetAddress[] addresses;
    try {
      addresses = InetAddress.getAllByName(host);
    } catch (UnknownHostException e) {
      throw ToolException.invalidArguments(
          "The host '" + host + "' does not resolve. Check the URL.");
    }
    for (InetAddress address : addresses) {
      if (internal(address)) {
        throw ToolException.invalidArguments(
            "The host '"
                + host
                + "' is a loopback, private or link-local address, and this host registers only"
                + " MCP servers on public addresses. Ask the operator to add the server to the"
                + " config.");
      }
    }
  }

  /** Whether an address is one a model must not reach through the host without the operator. */
  static boolean internal(InetAddress address) {
    if (address.isLoopbackAddress()
        || address.isSiteLocalAddress()
        || address.isLinkLocalAddress()
        || address.isAnyLocalAddress()
        || address.isMulticastAddress()) {
      return true;
    }
    byte[] bytes = address.getAddress();
    if (address instanceof Inet4Address) {
      int first = bytes[0] & 0xff;
      int second = bytes[1] & 0xff;
      // 0.0.0.0/8, 100.64.0.0/10 (carrier-grade NAT), 192.0.0.0/24, 198.18.0.0/15, 240.0.0.0/4.
      return first == 0
          || (first == 100 && second >= 64 && second < 128)
          || (first == 192 && second == 0 && (bytes[2] & 0xff) == 0)
          || (first == 198 && (second == 18 || second == 19))
          || first >= 240;
    }
    if (address instanceof Inet6Address) {
      // fc00::/7, unique local; and IPv4 mapped or embedded (::ffff:a.b.c.d, 64:ff9b::a.b.c.d).
      if ((bytes[0] & 0xfe) == 0xfc) {
        return true;
      }
      boolean mapped = true;
      for (int i = 0; i < 10; i++) {
        mapped &= bytes[i] == 0;
      }
      mapped &= (bytes[10] & 0xff) == 0xff && (bytes[11] & 0xff) == 0xff;
      boolean nat64 =
          (bytes[0] & 0xff) == 0x00
              && (bytes[1] & 0xff) == 0x64
              && (bytes[2] & 0xff) == 0xff
              && (bytes[3] & 0xff) == 0x9b;
      if (mapped || nat64) {
        try {
          return internal(
              InetAddress.getByAddress(new byte[] {bytes[12], bytes[13], bytes[14], bytes[15]}));
        } catch (UnknownHostException e) {
          return true;
        }
      }
    }
    return false;
  }
}
