package dev.toolhost.testing;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * Node packages are the npm packages a module's tests run as real peers (an OpenID provider, MCP
 * servers): installed with {@code npm ci} from the module's committed {@code node/package.json} and
 * lockfile into {@code target/npm}, once per build; a directory that already holds the lockfile's
 * packages is taken as it is.
 */
public final class NodePackages {

  // Guarded by the class: one install per module directory and JVM.
  private static final Map<Path, Path> INSTALLED = new HashMap<>();

  private NodePackages() {}

  /**
   * The directory holding {@code node_modules} for the module in the working directory, installing
   * its packages first if needed.
   *
   * @throws IllegalStateException when {@code npm ci} fails or takes more than five minutes
   */
  public static synchronized Path directory() {
    Path module = Path.of("").toAbsolutePath();
    Path found = INSTALLED.get(module);
    if (found != null) {
      return found;
    }
    Path directory = module.resolve("target/npm");
    try {
      Files.createDirectories(directory);
      Path lock = directory.resolve("package-lock.json");
      boolean same =
          Files.exists(lock)
              && Files.exists(directory.resolve("node_modules"))
              && Files.mismatch(lock, module.resolve("node/package-lock.json")) == -1;
      if (!same) {
        Files.copy(
            module.resolve("node/package.json"),
            directory.resolve("package.json"),
            StandardCopyOption.REPLACE_EXISTING);
        Files.copy(
            module.resolve("node/package-lock.json"), lock, StandardCopyOption.REPLACE_EXISTING);
        run(directory);
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    INSTALLED.put(module, directory);
    return directory;
  }

  private static void run(Path directory) throws IOException {
    Path log = directory.resolve("npm-ci.log");
    Process npm =
        new ProcessBuilder("npm", "ci", "--no-audit", "--no-fund", "--loglevel=error")
            .directory(directory.toFile())
            .redirectErrorStream(true)
            .redirectOutput(log.toFile())
            .start();
    try {
      if (!npm.waitFor(5, TimeUnit.MINUTES)) {
        npm.destroyForcibly();
        throw new IllegalStateException("npm ci took more than 5 minutes in " + directory);
      }
    } catch (InterruptedException e) {
      npm.destroyForcibly();
      Thread.currentThread().interrupt();
      throw new IllegalStateException("Interrupted while npm ci ran in " + directory, e);
    }
    if (npm.exitValue() != 0) {
      throw new IllegalStateException(
          "npm ci failed in " + directory + ": " + Files.readString(log));
    }
  }
}
