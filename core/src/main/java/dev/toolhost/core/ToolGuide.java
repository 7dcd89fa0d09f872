package dev.toolhost.core;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.Objects;

/**
 * A tool guide is a named markdown document that teaches a model how to use one family of tools
 * well, with a one-line summary for listing.
 *
 * @param name the guide's name, such as {@code tool-calls}
 * @param summary one line on what the guide covers
 * @param document the whole guide, in markdown
 */
public record ToolGuide(String name, String summary, String document) {

  public ToolGuide {
    Objects.requireNonNull(name, "name");
    Objects.requireNonNull(summary, "summary");
    Objects.requireNonNull(document, "document");
    if (name.isBlank()) {
      throw new IllegalArgumentException("A tool guide needs a name.");
    }
  }

  /**
   * A guide whose document is a UTF-8 resource beside the given class.
   *
   * @throws IllegalArgumentException when the resource does not exist
   */
  public static ToolGuide fromResource(
      String name, String summary, Class<?> anchor, String resource) {
    try (InputStream in = anchor.getResourceAsStream(resource)) {
      if (in == null) {
        throw new IllegalArgumentException(
            "Tool guide '" + name + "' has no document: resource '" + resource + "' is missing.");
      }
      return new ToolGuide(name, summary, new String(in.readAllBytes(), StandardCharsets.UTF_8));
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
