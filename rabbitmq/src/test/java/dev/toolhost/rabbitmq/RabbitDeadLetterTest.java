package dev.toolhost.rabbitmq;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import com.rabbitmq.client.ConnectionFactory;
import com.rabbitmq.client.GetResponse;
import dev.toolhost.bus.LogCapture;
import dev.toolhost.bus.MessageBus;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The bounds of the dead-letter queue on the RabbitMQ at 127.0.0.1:5672, as {@code rabbitmqctl}
 * shows them. Needs the broker's management plugin (the library sets the bounds over its API).
 */
@Timeout(60)
class RabbitDeadLetterTest {

  @Test
  void aConnectingBusPutsItsLimitsOnTheDeadLetterQueueAsAPolicyThatRabbitmqctlShows()
      throws Exception {
    try (RabbitBus bus = RabbitBus.connect(RabbitBusTest.BROKER)) {
      await()
          .atMost(Duration.ofSeconds(20))
          .untilAsserted(
              () ->
                  assertThat(rabbitmqctl("list_queues", "name", "policy"))
                      .contains(
                          MessageBus.DEAD_LETTER_QUEUE + "\t" + MessageBus.DEAD_LETTER_QUEUE));
      String policies = rabbitmqctl("list_policies");
      String ours =
          policies
              .lines()
              .filter(line -> line.contains("\t" + MessageBus.DEAD_LETTER_QUEUE + "\t"))
              .findFirst()
              .orElseThrow();
      assertThat(ours)
          .contains("^toolhost\\.dead_letter$")
          .contains("\"max-length\":10000")
          .contains("\"max-length-bytes\":268435456")
          .contains("\"message-ttl\":604800000")
          .contains("\"overflow\":\"drop-head\"")
          .contains("\"dead-letter-exchange\":\"toolhost.dead_letter.dropped\"");
    }
  }

  @Test
  void aQueueThatExistedWithoutLimitsTakesThemAndALetterItDropsIsLoggedWithItsCallIdAndSize()
      throws Exception {
    // A queue of this test's own, declared plainly as every earlier version declared the shared
    // one, so that the shared dead-letter queue keeps everyone's letters.
    String queue = "test.dead_letter." + UUID.randomUUID();
    ConnectionFactory factory = new ConnectionFactory();
    factory.setUri(RabbitBusTest.BROKER);
    factory.setVirtualHost("/");
    try (LogCapture log = LogCapture.start();
        RabbitBus bus = RabbitBus.connect(RabbitBusTest.BROKER);
        Connection raw = factory.newConnection("dead-letter-test");
        Channel channel = raw.createChannel()) {
      channel.queueDeclare(queue, true, false, false, null);
      String copies = channel.queueDeclare().getQueue();
      channel.queueBind(copies, DeadLetterPolicy.DROPPED, "");
      try {
        DeadLetterLimits oneLetter =
            new DeadLetterLimits(1, 1024 * 1024, Duration.ofMinutes(5), Optional.empty());
        assertThat(DeadLetterPolicy.apply(RabbitBusTest.BROKER, queue, oneLetter)).isTrue();
        await()
            .atMost(Duration.ofSeconds(20))
            .untilAsserted(
                () ->
                    assertThat(rabbitmqctl("list_queues", "name", "policy"))
                        .contains(queue + "\t" + queue));
        // A plain declare of the queue still passes: the limits are no arguments of it.
        channel.queueDeclare(queue, true, false, false, null);

        String first =
            "{\"tool_call_id\":\"call_0\",\"tool_name\":\"work\",\"arguments\":{\"tag\":\"alice-order\"}}";
        channel.basicPublish("", queue, null, first.getBytes(StandardCharsets.UTF_8));
        channel.basicPublish(
            "", queue, null, "{\"tool_call_id\":\"call_1\"}".getBytes(StandardCharsets.UTF_8));

        // Every host on the broker competes for the dropped letters, one logging each: this test
        // takes its own copy from the fanout and logs it as the host that got it would.
        GetResponse dropped =
            await()
                .atMost(Duration.ofSeconds(20))
                .until(() -> channel.basicGet(copies, true), java.util.Objects::nonNull);
        RabbitBus.logDropped(dropped.getProps(), dropped.getBody());
        assertThat(log.messages(RabbitBus.class, "WARN"))
            .anySatisfy(
                line ->
                    assertThat(line)
                        .contains("'" + queue + "' (maxlen)")
                        .contains("tool_call_id call_0")
                        .contains(first.length() + " bytes"));
        assertThat(channel.queueDeclarePassive(queue).getMessageCount()).isEqualTo(1);
      } finally {
        channel.queueDelete(queue);
        rabbitmqctl("clear_policy", queue);
      }
    }
  }

  private static String rabbitmqctl(String... arguments) throws IOException, InterruptedException {
    List<String> command =
        new java.util.ArrayList<>(List.of("rabbitmqctl", "-q", "--no-table-headers"));
    if (arguments[0].equals("clear_policy")) {
      command.remove("--no-table-headers");
    }
    command.addAll(List.of(arguments));
    Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
    String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertThat(process.waitFor(30, TimeUnit.SECONDS)).isTrue();
    return output;
  }
}
