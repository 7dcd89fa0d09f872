package dev.toolhost.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.toolhost.bus.BusException;
import dev.toolhost.bus.BusOption;
import dev.toolhost.bus.InMemoryBus;
import dev.toolhost.bus.MessageBus;
import dev.toolhost.core.spi.ConfigException;
import dev.toolhost.rabbitmq.RabbitBus;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;

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
  void aWorkerOnAnUnreachableBrokerFailsSayingWhereWithoutThePassword() {
    StringWriter err = new StringWriter();
    CommandLine commandLine = Main.commandLine();
    commandLine.setOut(new PrintWriter(new StringWriter(), true));
    commandLine.setErr(new PrintWriter(err, true));

    int exitCode = commandLine.execute("worker", "--bus", "amqp://guest:s3cret@127.0.0.1:1/");

    assertThat(exitCode).isEqualTo(CommandLine.ExitCode.SOFTWARE);
    assertThat(err.toString())
        .contains("Cannot connect to the message bus at amqp://guest:***@127.0.0.1:1/")
        .doesNotContain("s3cret");
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
  void aWorkerWithABadUriFailsWithoutConnectingOrShowingThePassword() {
    StringWriter out = new StringWriter();
    StringWriter err = new StringWriter();
    CommandLine commandLine = Main.commandLine();
    commandLine.setOut(new PrintWriter(out, true));
    commandLine.setErr(new PrintWriter(err, true));

    int exitCode = commandLine.execute("worker", "--bus", "amqp://u:pw-s3cret@127.0.0.1:notaport/");

    assertThat(exitCode).isNotEqualTo(CommandLine.ExitCode.OK);
    assertThat(err.toString()).contains("amqp://u:***@127.0.0.1:notaport/");
    assertThat(out.toString() + err).doesNotContain("pw-s3cret").doesNotContain("Toolhost worker");
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
