package dev.toolhost.server;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Every command builds the same host from the config: {@code tools} and {@code call} see the tool
 * services the file configures, and {@code call} reaches one over RabbitMQ (the Python example
 * service of {@code examples/python}, with Debian's pika, serving the configured queue).
 */
@Timeout(90)
class CommandToolServicesTest {

  private static final String BROKER = "amqp://guest:guest@127.0.0.1:5672/";

  @TempDir Path dir;
  private Process service;

  @AfterEach
  void stopService() throws Exception {
    if (service != null) {
      service.destroy();
      service.waitFor(10, TimeUnit.SECONDS);
    }
  }

  private Path config(String queue) throws Exception {
    Path file = dir.resolve("toolhost.yaml");
    Files.writeString(
        file,
        """
        tool_services:
          services:
            restyle:
              topic: %s
              config-params: [{name: style, required: true}]
          tools:
            title-case:
              type: tool-service
              description: Puts text in title case.
              service: restyle
              style: title
              arguments: [{name: text, type: string, description: The text.}]
        """
            .formatted(queue));
    return file;
  }

  @Test
  void toolsListsAToolServiceTheConfigDescribes() throws Exception {
    Path file = config("restyle-" + UUID.randomUUID());

    CommandRun tools = CommandRun.of("tools", "--config", file.toString());

    assertThat(tools.exitCode()).as(tools.err()).isZero();
    assertThat(tools.out()).contains("title-case").contains("service:restyle");
  }

  @Test
  void callReachesAToolServiceTheConfigDescribesOverTheBus() throws Exception {
    String queue = "restyle-" + UUID.randomUUID();
    Path file = config(queue);
    service =
        new ProcessBuilder(
                "/usr/bin/python3",
                Path.of("..", "examples", "python", "tool_service.py").toString(),
                "--url",
                BROKER,
                "--service",
                "text-style-" + queue,
                "--queue",
                queue,
                "--tool",
                "shout-" + queue)
            .redirectErrorStream(true)
            .start();
    BufferedReader serviceOut =
        new BufferedReader(new InputStreamReader(service.getInputStream(), StandardCharsets.UTF_8));
    // It prints one line once it consumes its queue.
    assertThat(serviceOut.readLine()).contains("serving " + queue);

    CommandRun call =
        CommandRun.of(
            "call",
            "title-case",
            "{\"text\": \"late deliveries\"}",
            "--config",
            file.toString(),
            "--bus",
            BROKER);

    assertThat(call.exitCode()).as(call.err()).isZero();
    assertThat(call.out()).contains("Late Deliveries");
  }
}
