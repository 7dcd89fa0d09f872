package dev.toolhost.server;

import dev.toolhost.bus.BusOption;
import dev.toolhost.core.spi.Signals;
import dev.toolhost.host.HostConfig;
import java.net.URI;
import java.util.Optional;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * The serve command runs a host's HTTP API until the process is stopped (Ctrl-C or SIGTERM), then
 * shuts it down cleanly.
 */
@Command(
    name = "serve",
    mixinStandardHelpOptions = true,
    description = {
      "Serves the HTTP API until stopped with Ctrl-C or SIGTERM.",
      "Binds 127.0.0.1:8080 by default; any address but loopback needs a bearer token."
    })
final class ServeCommand implements Callable<Integer> {

  @Spec private CommandSpec spec;

  @Mixin private ConfigOption config;

  @Mixin private BusOption bus;

  @Option(
      names = "--host",
      paramLabel = "H",
      description = "The address to bind; overrides http.host.")
  private Optional<String> host = Optional.empty();

  @Option(
      names = "--port",
      paramLabel = "N",
      description = "The port to bind, 0 for a free one; overrides http.port.")
  private Optional<Integer> port = Optional.empty();

  /** The file's listener with --host and --port applied. */
  private HostConfig.Http listener(HostConfig.Http http) {
    if (host.isPresent()) {
      if (host.get().isBlank()) {
        throw new CommandLine.ParameterException(spec.commandLine(), "--host is empty.");
      }
      http = http.withHost(host.get());
    }
    if (port.isPresent()) {
      if (port.get() < 0 || port.get() > 65535) {
        throw new CommandLine.ParameterException(
            spec.commandLine(), "--port " + port.get() + " is out of range (0 to 65535).");
      }
      http = http.withPort(port.get());
    }
    return http;
  }

  @Override
  public Integer call() throws InterruptedException {
    CommandHost opened =
        CommandHost.open(config, file -> file.withHttp(listener(file.http())), bus);
    Host server = opened.host();
    URI uri;
    try {
      uri = server.start();
    } catch (RuntimeException e) {
      opened.close();
      throw e;
    }
    Signals.runUntilStopped(
        "toolhost-shutdown",
        opened::close,
        () -> {
          spec.commandLine()
              .getOut()
              .printf(
                  "Toolhost listening on %s (%s; profiles: %s). Stop with Ctrl-C.%n",
                  uri,
                  server.requiresToken() ? "bearer token required" : "no token",
                  String.join(", ", server.profiles().names()));
          spec.commandLine().getOut().flush();
        },
        () -> {
          spec.commandLine().getOut().println("Toolhost stopping.");
          spec.commandLine().getOut().flush();
        });
    return CommandLine.ExitCode.OK;
  }
}
