package dev.toolhost.secrets;

import dev.toolhost.core.DispatchStage;
import dev.toolhost.core.Redactor;
import dev.toolhost.core.spi.Authenticator;
import dev.toolhost.core.spi.CommandContext;
import dev.toolhost.core.spi.ConfigSections;
import dev.toolhost.core.spi.EnvironmentNames;
import dev.toolhost.core.spi.HostCommand;
import dev.toolhost.core.spi.HostContext;
import dev.toolhost.core.spi.HostExtension;
import dev.toolhost.core.spi.SectionReading;
import io.opentelemetry.api.OpenTelemetry;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import tools.jackson.databind.JsonNode;

/**
 * The secrets extension is a host's secret-leak detection (the {@code secrets:} section): one
 * {@link SecretScanner} that knows every secret the host holds by value (its bearer token, and
 * every environment variable whose name says key, secret, token or password, or that the config
 * marks secret) and runs gitleaks' rules; an interceptor at the dispatch chain's {@link
 * DispatchStage#OUTPUT_SCAN output scan} that redacts or blocks what tool results leak; and the
 * scanner shared as a {@link Redactor} (and a {@link SecretScanner}) for the other paths out: the
 * agent loop's model requests and chat stream.
 *
 * <p>On by default, redacting: a host that leaks nothing loses nothing by it. Found by {@link
 * java.util.ServiceLoader}; without a section, the shipped rules. Every extension that uses its
 * {@link Redactor} starts after it.
 */
public final class SecretsExtension implements HostExtension<SecretsConfig> {

  /** The extension's name and config key. */
  public static final String NAME = "secrets";

  @Override
  public String name() {
    return NAME;
  }

  @Override
  public Set<Class<?>> provides() {
    return Set.of(SecretScanner.class, Redactor.class);
  }

  /**
   * The authenticator, used only to start after the extension that provides it: the principals'
   * tokens are then among the host's secrets the scanner redacts by value.
   */
  @Override
  public Set<Class<?>> uses() {
    return Set.of(Authenticator.class);
  }

  @Override
  public JsonNode configSchema() {
    return ConfigSections.schema(SecretsConfig.Raw.class);
  }

  /** {@code toolhost secrets scan FILE|-}: the host's scan, outside a host. */
  @Override
  public List<HostCommand> commands() {
    return List.of(
        new HostCommand() {
          @Override
          public Object command(CommandContext context) {
            return new SecretsCommand(context);
          }

          @Override
          public boolean opensHost() {
            return false;
          }
        });
  }

  @Override
  public SecretsConfig read(JsonNode section, SectionReading reading) {
    return SecretsConfig.read(section, reading);
  }

  @Override
  public void start(HostContext host, Optional<SecretsConfig> section) {
    SecretsConfig config = section.orElseGet(SecretsConfig::defaults);
    SecretScanner scanner = scanner(config, host.environment(), host.secrets());
    host.provide(SecretScanner.class, scanner);
    host.provide(Redactor.class, scanner);
    // The process's log lines pass this host's rules too, while it runs.
    host.own(LogRedaction.add(scanner));
    host.interceptor(
        DispatchStage.OUTPUT_SCAN,
        new SecretScanInterceptor(
            scanner,
            config.policy(),
            host.service(OpenTelemetry.class).orElse(OpenTelemetry.noop())));
  }

  /**
   * The scanner of a config: its rules and allow-list, and as known values the given secrets and
   * every variable of the environment that is a secret by its name or by the config.
   */
  public static SecretScanner scanner(
      SecretsConfig config, Map<String, String> environment, Map<String, String> secrets) {
    SecretScanner.Builder builder = SecretScanner.builder(config.rules()).depth(config.depth());
    secrets.forEach(builder::known);
    environment.forEach(
        (name, value) -> {
          if (EnvironmentNames.holdsSecret(name) || config.secretEnv().contains(name)) {
            builder.known(name, value);
          }
        });
    config.allowedValues().forEach(builder::allowValue);
    config.allowedRules().forEach(builder::allowRule);
    return builder.build();
  }
}
