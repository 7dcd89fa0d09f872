package dev.toolhost.web;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.net.InetAddress;
import java.util.List;
import org.junit.jupiter.api.Test;

class OutboundPolicyTest {

  private static InetAddress ip(String literal) throws Exception {
    return InetAddress.getByName(literal);
  }

  @Test
  void publicAddressesAreAllowedAndInternalOnesRefused() throws Exception {
    OutboundPolicy policy = OutboundPolicy.defaults();

    assertThat(policy.refusal("example.com", ip("93.184.216.34"))).isEmpty();
    assertThat(policy.refusal("example.com", ip("2606:2800:220:1::1"))).isEmpty();
    assertThat(policy.refusal("a.example", ip("172.20.1.1")))
        .contains(
            "'a.example' resolves to 172.20.1.1, which lies in a private range 172.16.0.0/12;"
                + " internal addresses are refused unless the config's web.outbound.allow opens"
                + " them");
    assertThat(policy.refusal("224.0.0.1", ip("224.0.0.1"))).get().asString().contains("multicast");
    assertThat(policy.refusal("255.255.255.255", ip("255.255.255.255")))
        .get()
        .asString()
        .contains("reserved range (and broadcast)");
    assertThat(policy.refusal("x", ip("::"))).get().asString().contains("unspecified IPv6");
  }

  @Test
  void anAllowedRangeOpensItsAddressesButNeverAMetadataService() throws Exception {
    OutboundPolicy policy =
        OutboundPolicy.defaults()
            .allowingRanges(List.of(Cidr.parse("169.254.0.0/16"), Cidr.parse("10.0.0.0/8")));

    assertThat(policy.refusal("10.1.2.3", ip("10.1.2.3"))).isEmpty();
    assertThat(policy.refusal("169.254.1.1", ip("169.254.1.1"))).isEmpty();
    assertThat(policy.refusal("169.254.169.254", ip("169.254.169.254")))
        .contains(
            "169.254.169.254, which is a cloud metadata address; it is never fetched, whatever the"
                + " allow-list says");
    assertThat(policy.refusal("x", ip("::ffff:169.254.170.2")))
        .get()
        .asString()
        .contains("cloud metadata");
    assertThat(
            policy
                .allowingHost("metadata.google.internal")
                .refusal("metadata.google.internal", ip("169.254.169.254")))
        .isPresent();
  }

  @Test
  void anAllowedHostNameOpensWhatItResolvesToAndAWildcardItsSubdomains() throws Exception {
    OutboundPolicy policy =
        OutboundPolicy.defaults().allowingHost("wiki.internal").allowingHost("*.corp.example");

    assertThat(policy.refusal("wiki.internal", ip("10.9.9.9"))).isEmpty();
    assertThat(policy.refusal("WIKI.internal.", ip("10.9.9.9"))).isEmpty();
    assertThat(policy.refusal("git.corp.example", ip("192.168.4.4"))).isEmpty();
    assertThat(policy.refusal("corp.example", ip("192.168.4.4"))).isPresent();
    assertThat(policy.refusal("evilcorp.example", ip("192.168.4.4"))).isPresent();
    assertThat(policy.refusal("other.internal", ip("10.9.9.9"))).isPresent();
  }

  @Test
  void anIpv4AddressInsideAnIpv6FormIsJudgedAsItself() throws Exception {
    OutboundPolicy policy = OutboundPolicy.defaults();

    assertThat(policy.refusal("x", ip("::127.0.0.1"))).get().asString().contains("loopback");
    assertThat(policy.refusal("x", ip("64:ff9b::a00:1"))).get().asString().contains("private");
    assertThat(policy.refusal("x", ip("2002:c0a8:101::1"))).get().asString().contains("private");
    assertThat(policy.refusal("x", ip("64:ff9b::5db8:d822"))).isEmpty();
    assertThat(policy.refusal("x", ip("2001:0:4136:e378::1"))).get().asString().contains("Teredo");
  }

  @Test
  void cidrRangesParseBothFamiliesAndRefuseNames() {
    assertThat(Cidr.parse("10.0.0.0/8").toString()).isEqualTo("10.0.0.0/8");
    assertThat(Cidr.parse("10.1.2.3/8").toString()).isEqualTo("10.0.0.0/8");
    assertThat(Cidr.parse("fd00::1/8").toString()).isEqualTo("fd00::/8");
    assertThat(Cidr.parse("2001:db8:0:0:1:0:0:1").toString()).isEqualTo("2001:db8::1:0:0:1/128");
    assertThatThrownBy(() -> Cidr.parse("example.com/8"))
        .hasMessage(
            "'example.com/8' is not an IP address or CIDR range (such as 10.0.0.0/8 or fd00::/8)");
    assertThatThrownBy(() -> Cidr.parse("127.1/8")).hasMessageContaining("is not an IP address");
  }
}
