package dev.toolhost.search;

import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;

/**
 * Service summaries say what a service is for, derived from its tools' descriptions: seed 000 calls
 * the summary the primary signal for choosing between candidates, so "MCP server weather" alone
 * will not do. A derived summary names the kind and id, then the first sentence of each of its
 * first {@link #DESCRIBED_TOOLS} tools' descriptions, and how many more tools it has: {@code MCP
 * server weather: Weather forecast for a city; Severe weather alerts.}
 *
 * <p>A summary that is exactly what {@link #derive} gives for an entry's tools is a derived one
 * ({@link #isDerived}): the registry feed rewrites it as the tools change, and a summary writer may
 * replace it with a written one. Any other summary (a feeder's, a model's) is kept as it is.
 * Stateless.
 */
public final class ServiceSummaries {

  /** How many tools' descriptions a derived summary quotes. */
  public static final int DESCRIBED_TOOLS = 3;

  /** The longest part one tool's description adds, in characters. */
  static final int MAX_PHRASE = 90;

  private ServiceSummaries() {}

  /** The plain label of a service: its kind and id, such as {@code MCP server weather}. */
  public static String label(ServiceKind kind, String id) {
    return switch (kind) {
      case MCP_SERVER -> "MCP server " + id;
      case TOOL_SERVICE -> "Tool service " + id;
      case WORKER_GROUP -> "Remote worker group " + id;
      case AGENT -> "Agent " + id;
    };
  }

  /** The summary derived from a service's capabilities (its tools, or an agent's skills). */
  public static String derive(
      ServiceKind kind, String id, List<KnownService.Capability> capabilities) {
    Set<String> phrases = new LinkedHashSet<>();
    List<String> undescribed = new ArrayList<>();
    // Only the first few described tools are read: a server of hundreds of tools, whose summary is
    // derived again as each registers, costs no more than one of three.
    for (KnownService.Capability capability : capabilities) {
      if (phrases.size() == DESCRIBED_TOOLS) {
        break;
      }
      String phrase = firstSentence(capability.description());
      if (phrase.isEmpty()) {
        undescribed.add(capability.name());
      } else {
        phrases.add(phrase);
      }
    }
    StringBuilder summary = new StringBuilder(label(kind, id));
    if (capabilities.isEmpty()) {
      return summary.append('.').toString();
    }
    summary.append(": ");
    if (phrases.isEmpty()) {
      return summary
          .append(kind == ServiceKind.AGENT ? "skills " : "tools ")
          .append(String.join(", ", undescribed))
          .append('.')
          .toString();
    }
    summary.append(String.join("; ", phrases));
    int more = capabilities.size() - phrases.size();
    if (more > 0) {
      String noun = kind == ServiceKind.AGENT ? "skill" : "tool";
      summary
          .append("; and ")
          .append(more)
          .append(" more ")
          .append(noun)
          .append(more == 1 ? "" : "s");
    }
    return summary.append('.').toString();
  }

  /** Whether a service's summary is the one derived from its capabilities, or the bare label. */
  public static boolean isDerived(KnownService service) {
    return service.summary().equals(derive(service.kind(), service.id(), service.capabilities()))
        || service.summary().equals(label(service.kind(), service.id()));
  }

  // The description up to its first sentence end, without the full stop, cut at a word.
  static String firstSentence(String description) {
    String text = description.strip().replaceAll("\\s+", " ");
    int end = text.length();
    for (int i = 0; i < text.length() - 1; i++) {
      char c = text.charAt(i);
      if ((c == '.' || c == '!' || c == '?') && text.charAt(i + 1) == ' ') {
        end = i;
        break;
      }
    }
    String sentence = text.substring(0, end);
    while (sentence.endsWith(".")) {
      sentence = sentence.substring(0, sentence.length() - 1);
    }
    if (sentence.length() > MAX_PHRASE) {
      int cut = sentence.lastIndexOf(' ', MAX_PHRASE);
      sentence = sentence.substring(0, cut > MAX_PHRASE / 2 ? cut : MAX_PHRASE) + "...";
    }
    // Each part opens a clause of the summary: capitalised, as a sentence would be.
    return sentence.isEmpty()
        ? ""
        : sentence.substring(0, 1).toUpperCase(Locale.ROOT) + sentence.substring(1);
  }
}
