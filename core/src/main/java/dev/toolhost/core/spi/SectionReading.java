package dev.toolhost.core.spi;

import java.nio.file.Path;
import java.util.List;

/**
 * A section reading is what an extension is given while its config section is checked ({@link
 * HostExtension#read}): where to report problems, the directory relative paths in the section are
 * resolved against, and the names a profile key may take.
 *
 * @param problems the file's problems, each placed by the JSON pointer of its key or value; the
 *     pointer starts at the file's root ({@code /memory/store})
 * @param directory the config file's directory; the empty path (the working directory) for text
 *     that is not read from a file
 * @param profiles the host's profile names: the built-in ones, then the file's
 */
public record SectionReading(ConfigProblems problems, Path directory, List<String> profiles) {

  public SectionReading {
    profiles = List.copyOf(profiles);
  }
}
