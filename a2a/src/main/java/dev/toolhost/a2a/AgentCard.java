package dev.toolhost.a2a;

import java.net.URI;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Objects;
import java.util.Optional;
import tools.jackson.databind.JsonNode;

/**
 * An agent card is what a remote agent says of itself at {@code /.well-known/agent-card.json}: its
 * name, description and skills, and where and in which protocol version it answers JSON-RPC.
 *
 * @param name the agent's name as its card gives it
 * @param description what it does
 * @param version the agent's own version
 * @param endpoint where it answers JSON-RPC
 * @param protocol the protocol version spoken there: 1.0 when the card offers it, else 0.3
 * @param streaming whether it streams ({@code capabilities.streaming})
 * @param skills its skills
 * @param document the card as it was fetched
 */
public record AgentCard(
    String name,
    String description,
    String version,
    URI endpoint,
    A2aVersion protocol,
    boolean streaming,
    List<Skill> skills,
    JsonNode document) {

  public AgentCard {
    Objects.requireNonNull(name, "name");
    Objects.requireNonNull(description, "description");
    Objects.requireNonNull(version, "version");
    Objects.requireNonNull(endpoint, "endpoint");
    Objects.requireNonNull(protocol, "protocol");
    skills = List.copyOf(skills);
    Objects.requireNonNull(document, "document");
  }

  /**
   * One skill of an agent.
   *
   * @param id its id, what invoke_agent's skill names
   * @param name its name
   * @param description what it does
   * @param tags words it is found by
   * @param examples requests it handles
   */
  public record Skill(
      String id, String name, String description, List<String> tags, List<String> examples) {
    public Skill {
      Objects.requireNonNull(id, "id");
      Objects.requireNonNull(name, "name");
      Objects.requireNonNull(description, "description");
      tags = List.copyOf(tags);
      examples = List.copyOf(examples);
    }
  }

  /** The skill of that id, if the agent has it. */
  public Optional<Skill> skill(String id) {
    return skills.stream().filter(s -> s.id().equals(id)).findFirst();
  }

  /**
   * Reads a card of either version, choosing its JSON-RPC interface: one of protocol 1.0 when it
   * offers one ({@code supportedInterfaces}), else its 0.3 {@code url}.
   *
   * @throws A2aException when the card names no JSON-RPC interface of a version spoken here
   */
  public static AgentCard read(JsonNode card, URI cardUrl) {
    if (card == null || !card.isObject()) {
      throw new A2aException(A2aError.INVALID_PARAMS, "the agent card is not a JSON object");
    }
    Optional<URI> v10 = Optional.empty();
    Optional<URI> v03 = Optional.empty();
    for (JsonNode entry : card.path("supportedInterfaces")) {
      String binding = entry.path("protocolBinding").asString(entry.path("transport").asString(""));
      if (!binding.equalsIgnoreCase("JSONRPC")) {
        continue;
      }
      String version = entry.path("protocolVersion").asString("");
      Optional<URI> url = url(entry.path("url").asString(""), cardUrl);
      if (version.startsWith("1.") && v10.isEmpty()) {
        v10 = url;
      } else if (version.startsWith("0.3") && v03.isEmpty()) {
        v03 = url;
      }
    }
    String topVersion = card.path("protocolVersion").asString("0.3");
    String preferred = card.path("preferredTransport").asString("JSONRPC");
    if (v03.isEmpty() && topVersion.startsWith("0.") && preferred.equalsIgnoreCase("JSONRPC")) {
      v03 = url(card.path("url").asString(""), cardUrl);
    }
    if (v03.isEmpty()) {
      for (JsonNode entry : card.path("additionalInterfaces")) {
        if (entry.path("transport").asString("").equalsIgnoreCase("JSONRPC")) {
          v03 = url(entry.path("url").asString(""), cardUrl);
          break;
        }
      }
    }
    URI endpoint;
    A2aVersion protocol;
    if (v10.isPresent()) {
      endpoint = v10.get();
      protocol = A2aVersion.V1_0;
    } else if (v03.isPresent()) {
      endpoint = v03.get();
      protocol = A2aVersion.V0_3;
    } else {
      throw new A2aException(
          A2aError.VERSION_NOT_SUPPORTED,
          "the agent card at "
              + cardUrl
              + " offers no JSON-RPC interface of protocol 0.3 or 1.0, the versions spoken here");
    }
    List<Skill> skills = new ArrayList<>();
    for (JsonNode skill : card.path("skills")) {
      skills.add(
          new Skill(
              skill.path("id").asString(""),
              skill.path("name").asString(skill.path("id").asString("")),
              skill.path("description").asString(""),
              strings(skill.path("tags")),
              strings(skill.path("examples"))));
    }
    return new AgentCard(
        card.path("name").asString(""),
        card.path("description").asString(""),
        card.path("version").asString(""),
        endpoint,
        protocol,
        card.path("capabilities").path("streaming").asBoolean(false),
        skills,
        card);
  }

  private static Optional<URI> url(String text, URI cardUrl) {
    if (text.isBlank()) {
      return Optional.empty();
    }
    try {
      URI url = cardUrl.resolve(text.strip());
      String scheme = url.getScheme() == null ? "" : url.getScheme().toLowerCase(Locale.ROOT);
      return (scheme.equals("http") || scheme.equals("https")) && url.getHost() != null
          ? Optional.of(url)
          : Optional.empty();
    } catch (IllegalArgumentException e) {
      return Optional.empty();
    }
  }

  private static List<String> strings(JsonNode array) {
    List<String> values = new ArrayList<>();
    for (JsonNode value : array) {
      if (value.isString() && !value.asString().isBlank()) {
        values.add(value.asString());
      }
    }
    return values;
  }
}
