package dev.toolhost.rabbitmq;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.toolhost.bus.BusException;
import dev.toolhost.bus.BusOption;
import dev.toolhost.bus.InMemoryBus;
import dev.toolhost.bus.MessageBus;
import dev.toolhost.core.spi.ConfigException;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;

/**
 * The {@code --bus} option and {@code TOOLHOST_BUS}: the in-memory bus without either, the RabbitMQ
 * at 127.0.0.1:5672 for an amqp URI, and every URI's password hidden from what it says. (A worker's
 * command line given a bad bus: the server module's {@code WorkerCommandTest}.)
 */
@Timeout(30)
class BusOptionTest {

  @Command(name = "test")
  static final class Holder {
    @Mixin BusOption bus;
  }

  private static BusOption parsed(String... args) {
    Holder holder = new Holder();
    new CommandLine(holder).parseArgs(args);
    return holder.bus;
  }

  @Test
  void withNeitherOptionNorEnvironmentTheBusIsInMemory() {
    BusOption option = parsed();

    assertThat(option.uri(Map.of())).isEqualTo("memory:");
    try (MessageBus bus = BusOption.open(option.uri(Map.of()))) {
      assertThat(bus).isInstanceOf(InMemoryBus.class);
    }
  }

  @Test
  void theEnvironmentIsReadWhenTheOptionIsNotGiven() {
    Map<String, String> environment =
        Map.of(BusOption.ENVIRONMENT, "amqp://guest:guest@127.0.0.1:5672/");

    assertThat(parsed().uri(environment)).isEqualTo("amqp://guest:guest@127.0.0.1:5672/");
    assertThat(parsed("--bus", "memory:").uri(environment)).isEqualTo("memory:");
    assertThat(parsed().uri(Map.of(BusOption.ENVIRONMENT, " "))).isEqualTo("memory:");
  }

  @Test
  void anAmqpUriOpensTheRabbitBus() {
    try (MessageBus bus = BusOption.open("amqp://guest:guest@127.0.0.1:5672/")) {
      assertThat(bus).isInstanceOf(RabbitBus.class);
    }
  }

  @Test
  void anUnreachableBrokerIsNamedWithThePasswordHidden() {
    assertThatThrownBy(() -> BusOption.open("amqp://guest:s3cret@127.0.0.1:1/"))
        .isInstanceOf(BusException.class)
        .hasMessageStartingWith(
            "Cannot connect to the message bus at amqp://guest:***@127.0.0.1:1/")
        .hasMessageNotContaining("s3cret");
  }

  @Test
  void anUnknownSchemeIsAConfigError() {
    assertThatThrownBy(() -> BusOption.open("kafka://user:pw@127.0.0.1:9092/"))
        .isInstanceOf(ConfigException.class)
        .hasMessage(
            "--bus: unknown scheme in 'kafka://user:***@127.0.0.1:9092/' (expected memory: or"
                + " amqp://user:pass@host:5672/)");
  }

  @Test
  void aUriWhosePortIsNotANumberIsRefusedWithThePasswordHidden() {
    assertThatThrownBy(() -> BusOption.open("amqp://u:pw-s3cret@127.0.0.1:notaport/"))
        .isInstanceOf(ConfigException.class)
        .hasMessageStartingWith("--bus: 'amqp://u:***@127.0.0.1:notaport/' is not a valid URI")
        .hasMessageNotContaining("pw-s3cret");
  }

  @Test
  void aUriWithAUserAndNoPasswordTakesItFromTheEnvironment() {
    try (MessageBus bus =
        BusOption.open(
            "amqp://guest@127.0.0.1:5672/", Map.of(BusOption.PASSWORD_ENVIRONMENT, "guest"))) {
      assertThat(bus).isInstanceOf(RabbitBus.class);
    }
    assertThatThrownBy(
            () ->
                BusOption.open(
                    "amqp://guest@127.0.0.1:5672/",
                    Map.of(BusOption.PASSWORD_ENVIRONMENT, "not-the-password")))
        .isInstanceOf(BusException.class)
        .hasMessageNotContaining("not-the-password");
  }

  @Test
  void redactionHidesThePasswordOfAnyUriTextParsedOrNot() {
    assertThat(BusOption.redact("amqp://u:pw@host:notaport/vh"))
        .isEqualTo("amqp://u:***@host:notaport/vh");
    assertThat(BusOption.redact("amqp://u:p@ss:w@rd@host:5672/"))
        .isEqualTo("amqp://u:***@host:5672/");
    assertThat(BusOption.redact("amqp://u@host:5672/")).isEqualTo("amqp://u@host:5672/");
    assertThat(BusOption.redact("amqp://host:5672/a:b@c")).isEqualTo("amqp://host:5672/a:b@c");
    assertThat(BusOption.redact("memory:")).isEqualTo("memory:");
  }
}
