package dev.toolhost.testing;

import dev.toolhost.core.spi.HostCommand;
import dev.toolhost.core.spi.HostContext;
import dev.toolhost.core.spi.HostExtension;
import dev.toolhost.core.spi.ReadyHost;
import dev.toolhost.core.spi.SectionReading;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import tools.jackson.databind.JsonNode;

/**
 * A watched extension is an extension as it is, with each step that returned noted in a log: {@code
 * read NAME} (or {@code read nothing NAME} when its reading found problems), {@code started NAME}
 * and {@code closed NAME}, so that a test sees what the host did with it and in which order.
 *
 * @param log where the steps are noted; thread-safe if the host's steps may run on several threads
 */
public record WatchedExtension<C>(HostExtension<C> extension, List<String> log)
    implements HostExtension<C> {

  @Override
  public String name() {
    return extension.name();
  }

  @Override
  public Set<Class<?>> provides() {
    return extension.provides();
  }

  @Override
  public Set<Class<?>> requires() {
    return extension.requires();
  }

  @Override
  public Set<Class<?>> uses() {
    return extension.uses();
  }

  @Override
  public JsonNode configSchema() {
    return extension.configSchema();
  }

  @Override
  public C read(JsonNode section, SectionReading reading) {
    C config = extension.read(section, reading);
    log.add((config == null ? "read nothing " : "read ") + name());
    return config;
  }

  @Override
  public void start(HostContext host, Optional<C> config) throws Exception {
    extension.start(host, config);
    log.add("started " + name());
  }

  @Override
  public void ready(ReadyHost host) throws Exception {
    extension.ready(host);
  }

  @Override
  public List<HostCommand> commands() {
    return extension.commands();
  }

  @Override
  public void close() throws Exception {
    extension.close();
    log.add("closed " + name());
  }
}
