package dev.toolhost.audit;

import dev.toolhost.core.ApiError;
import dev.toolhost.core.spi.CommandContext;
import dev.toolhost.core.spi.ConfigException;
import dev.toolhost.core.spi.ConfigSections;
import dev.toolhost.core.spi.HostCommand;
import dev.toolhost.core.spi.HostContext;
import dev.toolhost.core.spi.HostExtension;
import dev.toolhost.core.spi.Principal;
import dev.toolhost.core.spi.Route;
import dev.toolhost.core.spi.SectionReading;
import dev.toolhost.core.spi.Storage;
import java.io.IOException;
import java.time.DateTimeException;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;
import tools.jackson.databind.node.ArrayNode;
import tools.jackson.databind.node.ObjectNode;

/**
 * The audit extension keeps a journal of every call the host's dispatcher answers (the {@code
 * audit:} section, {@link AuditConfig}): time, principal, user, profile, session, tool, source,
 * outcome, duration and a keyed digest of the arguments, never the arguments or the result in
 * clear. Calls refused before their tool ran are journalled too.
 *
 * <p>It serves {@code GET /v1/audit?user=&principal=&tool=&since=&limit=} to principals with {@code
 * audit: true} (the operator's among them), and adds {@code toolhost audit tail}. Off until
 * configured: without the section nothing is journalled.
 */
public final class AuditExtension implements HostExtension<AuditConfig> {

  /** The section's key. */
  public static final String NAME = "audit";

  /** The journal's route. */
  public static final String PATH = "/v1/audit";

  private static final JsonMapper MAPPER = JsonMapper.shared();

  @Override
  public String name() {
    return NAME;
  }

  @Override
  public JsonNode configSchema() {
    return ConfigSections.schema(AuditConfig.Raw.class);
  }

  @Override
  public AuditConfig read(JsonNode section, SectionReading reading) {
    return AuditConfig.read(section, reading);
  }

  @Override
  public List<HostCommand> commands() {
    return List.of(
        new HostCommand() {
          @Override
          public Object command(CommandContext context) {
            return new AuditCommand(context, AuditExtension.this);
          }

          @Override
          public boolean opensHost() {
            return false;
          }
        });
  }

  @Override
  public void start(HostContext host, Optional<AuditConfig> section) {
    if (section.isEmpty()) {
      return;
    }
    Journal journal = open(section.get(), host.environment());
    AuditRecorder recorder = host.own(new AuditRecorder(journal));
    host.recorder(recorder);
    host.route(new Route("GET", PATH, request -> answer(request, journal)));
  }

  /**
   * Opens the journal the config names.
   *
   * @throws ConfigException when it cannot be opened, naming why
   */
  static Journal open(AuditConfig config, Map<String, String> environment) {
    try {
      return switch (config.store()) {
        case Storage.Embedded files ->
            FileJournal.open(files.directory(), config.maxFileBytes(), config.keepFiles());
        case Storage.Jdbc jdbc ->
            PostgresJournal.open(jdbc.url(), jdbc.user(), jdbc.password(NAME, environment));
      };
    } catch (IOException e) {
      throw new ConfigException("audit: " + e.getMessage());
    }
  }

  private static Route.Answer answer(Route.Request request, Journal journal) {
    Principal principal = request.principal();
    if (!principal.audit()) {
      return Route.Answer.error(
          ApiError.FORBIDDEN,
          "The principal '"
              + principal.name()
              + "' may not read the audit journal: only one with 'audit: true' in"
              + " auth.principals may.");
    }
    AuditQuery query;
    try {
      query = query(request);
    } catch (IllegalArgumentException e) {
      return Route.Answer.error(ApiError.INVALID_REQUEST, e.getMessage());
    }
    List<AuditEntry> entries;
    try {
      entries = journal.query(query);
    } catch (IOException e) {
      return Route.Answer.error(
          ApiError.UNAVAILABLE, "The audit journal could not be read: " + e.getMessage());
    }
    ObjectNode document = MAPPER.createObjectNode();
    ArrayNode array = document.putArray("entries");
    entries.forEach(entry -> array.add(entry.toJson()));
    return Route.Answer.json(document.toString());
  }

  /**
   * The query a request's parameters make.
   *
   * @throws IllegalArgumentException naming the parameter that is wrong
   */
  static AuditQuery query(Route.Request request) {
    Optional<Instant> since = Optional.empty();
    Optional<String> sinceText = request.parameter("since");
    if (sinceText.isPresent()) {
      try {
        since = Optional.of(Instant.parse(sinceText.get()));
      } catch (DateTimeException e) {
        throw new IllegalArgumentException(
            "'since' is '"
                + sinceText.get()
                + "' (expected an ISO-8601 instant such as 2026-11-27T09:00:00Z)");
      }
    }
    int limit = AuditQuery.DEFAULT_LIMIT;
    Optional<String> limitText = request.parameter("limit");
    if (limitText.isPresent()) {
      try {
        limit = Integer.parseInt(limitText.get());
      } catch (NumberFormatException e) {
        throw new IllegalArgumentException(
            "'limit' is '" + limitText.get() + "' (expected 1 to " + AuditQuery.MAX_LIMIT + ")");
      }
    }
    return new AuditQuery(
        request.parameter("user"),
        request.parameter("principal"),
        request.parameter("tool"),
        since,
        limit);
  }
}
