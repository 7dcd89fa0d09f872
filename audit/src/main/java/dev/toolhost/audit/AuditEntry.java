package dev.toolhost.audit;

import java.time.Instant;
import java.util.Objects;
import java.util.Optional;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;
import tools.jackson.databind.node.ObjectNode;

/**
 * An audit entry is one line of the audit journal: one call the host's dispatcher answered, who
 * made it and as whom, what it called and how it ended. It never holds the call's arguments or
 * result: only a keyed digest of the arguments, which tells two calls with the same arguments apart
 * from others without saying what they were.
 *
 * @param at when the call entered the dispatch path
 * @param callId the call's id (its traces and replies carry it)
 * @param principal the principal whose credential made the call, when one did
 * @param user the user the call acted for, when it named one
 * @param profile the profile of the tool set the call went through
 * @param session the call's session, when it had one
 * @param agent the configured agent whose run made the call, when one did
 * @param tool the tool's name, as the caller wrote it (cut to {@value #MAX_NAME} characters)
 * @param source the tool's source; empty for a tool the profile does not show
 * @param outcome {@code ok}, or the failure's error code as on the wire
 * @param durationMicros how long the dispatch path took, in microseconds
 * @param argumentsDigest {@code hmac-sha256:} and the hex HMAC of the arguments' text under the
 *     journal's key
 */
public record AuditEntry(
    Instant at,
    String callId,
    Optional<String> principal,
    Optional<String> user,
    String profile,
    Optional<String> session,
    Optional<String> agent,
    String tool,
    Optional<String> source,
    String outcome,
    long durationMicros,
    String argumentsDigest) {

  /** The longest name an entry keeps of a tool, a session or a user: a caller writes these. */
  public static final int MAX_NAME = 256;

  private static final JsonMapper MAPPER = JsonMapper.shared();

  public AuditEntry {
    Objects.requireNonNull(at, "at");
    Objects.requireNonNull(callId, "callId");
    Objects.requireNonNull(principal, "principal");
    Objects.requireNonNull(user, "user");
    Objects.requireNonNull(profile, "profile");
    Objects.requireNonNull(session, "session");
    Objects.requireNonNull(agent, "agent");
    Objects.requireNonNull(tool, "tool");
    Objects.requireNonNull(source, "source");
    Objects.requireNonNull(outcome, "outcome");
    Objects.requireNonNull(argumentsDigest, "argumentsDigest");
    callId = cut(callId);
    principal = principal.map(AuditEntry::cut);
    user = user.map(AuditEntry::cut);
    session = session.map(AuditEntry::cut);
    agent = agent.map(AuditEntry::cut);
    tool = cut(tool);
  }

  private static String cut(String text) {
    return text.length() <= MAX_NAME ? text : text.substring(0, MAX_NAME);
  }

  /** The entry as a JSON object, the fields in their journal names; absent ones left out. */
  public ObjectNode toJson() {
    ObjectNode node = MAPPER.createObjectNode();
    node.put("at", at.toString());
    node.put("call_id", callId);
    principal.ifPresent(value -> node.put("principal", value));
    user.ifPresent(value -> node.put("user", value));
    node.put("profile", profile);
    session.ifPresent(value -> node.put("session", value));
    agent.ifPresent(value -> node.put("agent", value));
    node.put("tool", tool);
    source.ifPresent(value -> node.put("source", value));
    node.put("outcome", outcome);
    node.put("duration_ms", durationMicros / 1000.0);
    node.put("arguments_digest", argumentsDigest);
    return node;
  }

  /**
   * Reads an entry from its JSON object.
   *
   * @throws IllegalArgumentException when a required field is missing or the time does not parse
   */
  public static AuditEntry fromJson(JsonNode node) {
    try {
      return new AuditEntry(
          Instant.parse(required(node, "at")),
          required(node, "call_id"),
          optional(node, "principal"),
          optional(node, "user"),
          required(node, "profile"),
          optional(node, "session"),
          optional(node, "agent"),
          required(node, "tool"),
          optional(node, "source"),
          required(node, "outcome"),
          Math.round(node.path("duration_ms").asDouble() * 1000),
          required(node, "arguments_digest"));
    } catch (java.time.DateTimeException e) {
      throw new IllegalArgumentException("'at' is not an ISO-8601 instant");
    }
  }

  private static String required(JsonNode node, String field) {
    JsonNode value = node.get(field);
    if (value == null || !value.isString()) {
      throw new IllegalArgumentException("the entry has no '" + field + "'");
    }
    return value.asString();
  }

  private static Optional<String> optional(JsonNode node, String field) {
    JsonNode value = node.get(field);
    return value == null || !value.isString() ? Optional.empty() : Optional.of(value.asString());
  }
}
