package dev.toolhost.rabbitmq;

import java.io.IOException;
import java.net.URI;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.TimeUnit;

/**
 * A test vhost is a RabbitMQ virtual host that one test class has to itself, made with {@code
 * rabbitmqctl} and deleted with everything in it on close. A test that has the broker close every
 * connection closes only the ones on its vhost: not those of the other tests, nor of another build
 * on the same broker.
 */
final class TestVhost implements AutoCloseable {

  private final String name;

  private TestVhost(String name) {
    this.name = name;
  }

  /** A new vhost that the broker's {@code guest} may use wholly. */
  static TestVhost create() throws InterruptedException {
    TestVhost vhost =
        new TestVhost("toolhost-test-" + UUID.randomUUID().toString().substring(0, 8));
    vhost.rabbitmqctl("add_vhost", vhost.name);
    vhost.rabbitmqctl("set_permissions", "-p", vhost.name, "guest", ".*", ".*", ".*");
    return vhost;
  }

  /** The broker's address on this vhost. */
  URI uri() {
    return RabbitBusTest.BROKER.resolve(name);
  }

  /**
   * Has the broker close every connection on this vhost, as an operator's {@code rabbitmqctl
   * close_all_connections} does; returns once it has.
   */
  void closeAllConnections(String why) throws InterruptedException {
    rabbitmqctl("close_all_connections", "--vhost", name, why);
  }

  @Override
  public void close() throws InterruptedException {
    rabbitmqctl("delete_vhost", name);
  }

  // rabbitmqctl starts an Erlang VM: seconds on a busy machine (20 s seen with two busy loops on
  // two
  // cores), so a minute before it counts as hung.
  private void rabbitmqctl(String... args) throws InterruptedException {
    List<String> command = new ArrayList<>(List.of("rabbitmqctl", "-q"));
    command.addAll(List.of(args));
    try {
      Process process =
          new ProcessBuilder(command)
              .redirectErrorStream(true)
              .redirectOutput(ProcessBuilder.Redirect.DISCARD)
              .start();
      if (!process.waitFor(60, TimeUnit.SECONDS)) {
        process.destroyForcibly();
        throw new AssertionError(String.join(" ", command) + " did not end within 60 s");
      }
      if (process.exitValue() != 0) {
        throw new AssertionError(
            String.join(" ", command) + " failed with exit code " + process.exitValue());
      }
    } catch (IOException e) {
      throw new AssertionError("rabbitmqctl did not start: " + e.getMessage(), e);
    }
  }
}
