package dev.toolhost.browser;

import dev.toolhost.core.spi.OwnerMark;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The profiles are one host's browser profile directories, all under a base directory of that
 * host's own, {@code toolhost-browsers-PID} in the configured {@code profile_dir}, which holds a
 * file {@value #OWNER} with the host's {@link OwnerMark}. Opening them first deletes the base
 * directories of hosts that are no longer running: what a host killed before it could close its
 * browsers left behind.
 *
 * <p>Close deletes this host's base directory with whatever is still in it.
 */
final class Profiles implements AutoCloseable {

  private static final Logger LOG = LoggerFactory.getLogger(Profiles.class);

  /** The file in a base directory that names its host. */
  static final String OWNER = "owner";

  /** The start of every base directory's name. */
  static final String PREFIX = "toolhost-browsers-";

  private final Path base;

  private Profiles(Path base) {
    this.base = base;
  }

  /**
   * Deletes the base directories under the parent whose hosts are gone, then makes this host's.
   *
   * @throws IOException when this host's directory cannot be made
   */
  static Profiles open(Path parent) throws IOException {
    Files.createDirectories(parent);
    removeDead(parent);
    OwnerMark self = OwnerMark.current();
    Path base = parent.resolve(PREFIX + self.pid());
    if (Files.exists(base)) {
      // The same id, but removeDead left it: a host of this id runs, or this one opened it before.
      base = Files.createTempDirectory(parent, PREFIX + self.pid() + "-");
    } else {
      Files.createDirectory(base);
    }
    Files.writeString(base.resolve(OWNER), self.toString(), StandardCharsets.UTF_8);
    return new Profiles(base);
  }

  /** Deletes the base directories under the parent whose owner mark names a dead host. */
  static void removeDead(Path parent) {
    try (DirectoryStream<Path> entries = Files.newDirectoryStream(parent, PREFIX + "*")) {
      for (Path entry : entries) {
        Path owner = entry.resolve(OWNER);
        if (!Files.isRegularFile(owner)) {
          continue;
        }
        String text;
        try {
          text = Files.readString(owner, StandardCharsets.UTF_8);
        } catch (IOException e) {
          continue;
        }
        OwnerMark.parse(text)
            .filter(mark -> !mark.alive())
            .ifPresent(
                mark -> {
                  LOG.info(
                      "Deleting {}: the browser profiles of host {}, which is gone", entry, mark);
                  Chromium.delete(entry);
                });
      }
    } catch (IOException e) {
      LOG.warn("The browser profiles of dead hosts under {} were not looked for: {}", parent, e);
    }
  }

  /** The directory this host's profiles are made in. */
  Path base() {
    return base;
  }

  @Override
  public void close() {
    Chromium.delete(base);
  }
}
