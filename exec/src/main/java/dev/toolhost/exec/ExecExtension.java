package dev.toolhost.exec;

import dev.toolhost.core.ExecutableTool;
import dev.toolhost.core.Redactor;
import dev.toolhost.core.ToolGuide;
import dev.toolhost.core.spi.ConfigException;
import dev.toolhost.core.spi.ConfigSections;
import dev.toolhost.core.spi.EnvironmentNames;
import dev.toolhost.core.spi.HostContext;
import dev.toolhost.core.spi.HostExtension;
import dev.toolhost.core.spi.SectionReading;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import tools.jackson.databind.JsonNode;

/**
 * The exec extension is a host's sandboxed execution (the {@code exec:} section): one {@link
 * Sandbox} on bubblewrap, the tools {@code shell}, {@code exec}, {@code file} and {@code
 * execute_python_script} (source {@code builtin:exec}) working in per-session workspaces under the
 * configured root, and the {@code exec} guide. A host whose config has no {@code exec:} section
 * registers none of them: running code on a model's behalf is off until configured.
 *
 * <p>It owns the profile rule about its tools: subagents and scheduled tasks may not run them
 * unless a profile of the config grants them; the rule names the tools, so it holds as well for a
 * remote runner's tools of the same names ({@code toolhost worker --tools exec}). No secret of the
 * host reaches a sandboxed process: the environment is built clean, and neither a passed-through
 * variable nor one a call sets may carry a value the host knows as secret.
 *
 * <p>Found by {@link java.util.ServiceLoader}; a host made in code gives it an {@link ExecConfig}
 * through its builder.
 */
public final class ExecExtension implements HostExtension<ExecConfig> {

  private static final Logger LOG = LoggerFactory.getLogger(ExecExtension.class);

  /** The extension's name and config key. */
  public static final String NAME = "exec";

  /** The guide to the exec tools. */
  public static final ToolGuide GUIDE =
      ToolGuide.fromResource(
          "exec",
          "How to run commands, files and Python scripts in the sandbox, and what its limits are.",
          ExecExtension.class,
          "guides/exec.md");

  @Override
  public String name() {
    return NAME;
  }

  @Override
  public Set<Class<?>> provides() {
    return Set.of(Sandbox.class);
  }

  @Override
  public Set<Class<?>> uses() {
    return Set.of(Redactor.class);
  }

  @Override
  public JsonNode configSchema() {
    return ConfigSections.schema(ExecConfig.Raw.class);
  }

  /** The section read, with the workspace root checked against the protected paths. */
  @Override
  public ExecConfig read(JsonNode section, SectionReading reading) {
    ExecConfig config = ExecConfig.read(section, reading);
    if (section.hasNonNull("workspace_root")) {
      protectedAround(config.workspaceRoot(), config.protectedPaths())
          .ifPresent(
              guarded ->
                  reading
                      .problems()
                      .atValue(
                          "/exec/workspace_root",
                          "'exec.workspace_root' is '"
                              + config.workspaceRoot()
                              + "', inside the protected path '"
                              + guarded
                              + "'"
                              + (guarded.equals(reading.directory().toAbsolutePath().normalize())
                                  ? " (the config file's directory)"
                                  : "")
                              + ": sessions would write where the file tool must not (expected"
                              + " a directory of its own, such as /var/lib/toolhost/workspaces)"));
    }
    return config;
  }

  /**
   * The protected path the workspace root lies in, by its name or, for the parts that exist, where
   * their links lead; empty when it lies in none.
   */
  static Optional<Path> protectedAround(Path root, List<Path> protectedPaths) {
    Path real = real(root);
    for (Path guarded : protectedPaths) {
      Path normal = guarded.toAbsolutePath().normalize();
      if (root.startsWith(normal) || real.startsWith(real(normal))) {
        return Optional.of(normal);
      }
    }
    return Optional.empty();
  }

  /** The path with its longest existing part resolved through its links. */
  private static Path real(Path path) {
    Path absolute = path.toAbsolutePath().normalize();
    Path existing = absolute;
    while (existing != null && !Files.exists(existing)) {
      existing = existing.getParent();
    }
    if (existing == null) {
      return absolute;
    }
    try {
      return existing.toRealPath().resolve(existing.relativize(absolute));
    } catch (IOException e) {
      return absolute;
    }
  }

  @Override
  public void start(HostContext host, Optional<ExecConfig> config) {
    // Its tools are granted to no restricted profile: subagents, scheduled tasks and the synthesis
    // of another agent's answer run no commands; main and the operator's own profiles do.
    if (config.isEmpty()) {
      return;
    }
    List<String> secrets = new ArrayList<>(host.secrets().values());
    host.environment()
        .forEach(
            (name, value) -> {
              if (EnvironmentNames.holdsSecret(name) && value.length() >= 4) {
                secrets.add(value);
              }
            });
    // The host's secret scanner knows more secrets than their names say: the variables the
    // secrets section lists (secrets.secret_env), and values its rules recognise. A variable the
    // config passes through whose value it would redact is a secret too, and does not pass.
    Optional<Redactor> redactor = host.service(Redactor.class);
    for (String name : config.get().passEnv()) {
      String value = host.environment().get(name);
      if (value != null
          && redactor.isPresent()
          && !redactor.get().redact(value).equals(value)
          && !secrets.contains(value)) {
        LOG.warn("exec.pass_env names {}, whose value is a secret: it is not passed", name);
        secrets.add(value);
      }
    }
    Sandbox sandbox = host.own(new Sandbox(config.get(), host.environment(), secrets));
    List<ExecutableTool> tools;
    try {
      tools = ExecTools.create(sandbox);
    } catch (IOException e) {
      throw new ConfigException("'exec.workspace_root': " + e.getMessage());
    }
    if (config.get().unsandboxed()) {
      LOG.warn(
          "exec.unsandboxed is true: shell, exec and execute_python_script run commands WITHOUT"
              + " containment, with the host's user and file system");
    }
    host.registry().registerAll(tools);
    host.guide(GUIDE);
    host.provide(Sandbox.class, sandbox);
    // Says in the log at once when the sandbox cannot run here; the tools say it on each call.
    Thread.ofVirtual()
        .name("toolhost-sandbox-probe")
        .start(
            () -> {
              try {
                sandbox.unavailable();
              } catch (RuntimeException e) {
                // The host closed while the probe ran; the next call probes again anyway.
                LOG.debug("The sandbox probe ended early", e);
              }
            });
  }
}
