package dev.toolhost.testing;

import dev.toolhost.core.spi.HostContext;
import dev.toolhost.core.spi.HostExtension;
import dev.toolhost.core.spi.SectionReading;
import java.util.Optional;
import tools.jackson.databind.JsonNode;

/**
 * A starting extension is the smallest extension a test needs beside the one it tests: a name, no
 * section, and what its start does (register a tool that takes a name, add a route, throw).
 *
 * @param start what the start does with the host's context; it may throw, as a failing start does
 */
public record StartingExtension(String name, Start start) implements HostExtension<Void> {

  /** What a start does; it may throw. */
  @FunctionalInterface
  public interface Start {
    void run(HostContext host) throws Exception;
  }

  /** Reads nothing: the extension has no section. */
  @Override
  public Void read(JsonNode section, SectionReading reading) {
    return null;
  }

  @Override
  public void start(HostContext host, Optional<Void> config) throws Exception {
    start.run(host);
  }
}
