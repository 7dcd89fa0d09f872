package dev.toolhost.search;

import dev.toolhost.core.ExecutableTool;
import dev.toolhost.core.MethodTools;
import dev.toolhost.core.Param;
import dev.toolhost.core.Tool;
import dev.toolhost.core.ToolCaller;
import dev.toolhost.core.ToolException;
import dev.toolhost.core.ToolGuide;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.function.Predicate;
import java.util.function.UnaryOperator;
import tools.jackson.databind.json.JsonMapper;
import tools.jackson.databind.node.ArrayNode;
import tools.jackson.databind.node.ObjectNode;

/**
 * The service index is the searchable directory of everything an agent can route work to: known
 * agents with their skills, MCP servers, tool services and remote worker groups with their tools.
 *
 * <p>Feeders keep it current by {@link #put putting} and {@link #remove removing} entries as
 * services come and go ({@link RegistryFeed} does it for the tools of a {@link
 * dev.toolhost.core.ToolRegistry}); searches rank entries by BM25 ({@link Bm25Index}) over an
 * inverted index. It serves the tool {@code search_known_services} (source {@code builtin:search}),
 * the same answer as JSON for an HTTP endpoint ({@link #searchResults}), and the per-turn context
 * hint an agent loop puts into its system prompt ({@link #contextHint}).
 *
 * <p>Thread-safe: searches run concurrently with each other and with changes, and always see each
 * change whole. Changes are applied one at a time.
 */
public final class ServiceIndex {

  /** The source of the tool this index serves. */
  public static final String SOURCE = "builtin:search";

  /** The most results {@code search_known_services} returns. */
  public static final int MAX_RESULTS = 5;

  /** How many capabilities a result lists. */
  public static final int TOP_CAPABILITIES = 3;

  /** How many services a context hint names. */
  public static final int HINTED_SERVICES = 2;

  /** The guide to {@code search_known_services} and {@code search_tools}. */
  public static final ToolGuide GUIDE =
      ToolGuide.fromResource(
          "service-search",
          "How to find the agent, MCP server or tool for a task: search_known_services and"
              + " search_tools.",
          ServiceIndex.class,
          "guides/service-search.md");

  private static final String HINT_HEADER =
      "Potentially relevant services for this request (call search_known_services for full"
          + " search):";

  private final Bm25Index<Entry> index = new Bm25Index<>();
  private final Object writeLock = new Object();

  /** An empty index. */
  public ServiceIndex() {}

  /** Puts the service in the index, replacing the entry of the same kind and id. */
  public void put(KnownService service) {
    Objects.requireNonNull(service, "service");
    synchronized (writeLock) {
      index.put(key(service.kind(), service.id()), Entry.of(service), service.searchText());
    }
  }

  /**
   * Removes the service of that kind and id.
   *
   * @return whether there was one
   */
  public boolean remove(ServiceKind kind, String id) {
    synchronized (writeLock) {
      return index.remove(key(kind, id));
    }
  }

  /**
   * Changes the entry of that kind and id in one step: the change gets the current entry, if any,
   * and returns the new one, or empty to remove it. No other change runs meanwhile.
   */
  public void update(ServiceKind kind, String id, UnaryOperator<Optional<KnownService>> change) {
    String key = key(kind, id);
    synchronized (writeLock) {
      Optional<KnownService> next = change.apply(index.get(key).map(Entry::service));
      if (next.isEmpty()) {
        index.remove(key);
        return;
      }
      KnownService service = next.get();
      if (service.kind() != kind || !service.id().equals(id)) {
        throw new IllegalArgumentException(
            "An update of " + key + " may not change the service's kind or id.");
      }
      index.put(key, Entry.of(service), service.searchText());
    }
  }

  /** The service of that kind and id, if known. */
  public Optional<KnownService> find(ServiceKind kind, String id) {
    return index.get(key(kind, id)).map(Entry::service);
  }

  /** Every known service, by type name and then id. */
  public List<KnownService> all() {
    return index.items().stream().map(Entry::service).toList();
  }

  /** The number of known services. */
  public int size() {
    return index.size();
  }

  /**
   * Returns up to {@code limit} services that match the query, best first; none when nothing
   * matches or the query has no word of three or more characters.
   */
  public List<ServiceMatch> search(String query, int limit) {
    return search(query, limit, name -> true);
  }

  /**
   * Returns up to {@code limit} services that match the query, best first, as a caller sees them
   * who is shown only some tools: a service none of whose capabilities is shown is left out, and
   * only shown capabilities are named. The capabilities of services fed from the registry are its
   * tools, so a caller learns of no service or tool its profile hides.
   *
   * @param shown whether the caller is shown the capability (tool) of that name
   */
  public List<ServiceMatch> search(String query, int limit, Predicate<String> shown) {
    List<Bm25Index.Hit<Entry>> hits = index.search(query, limit, entry -> entry.shownTo(shown));
    if (hits.isEmpty()) {
      return List.of();
    }
    Bm25Index.Query units = Bm25Index.Query.of(query);
    List<ServiceMatch> matches = new ArrayList<>(hits.size());
    for (Bm25Index.Hit<Entry> hit : hits) {
      matches.add(
          new ServiceMatch(
              hit.item().service(), hit.score(), hit.relevance(), hit.item().top(units, shown)));
    }
    return matches;
  }

  /**
   * Returns what {@code search_known_services} answers, as JSON: {@code {"results": [{"id", "type",
   * "summary", "relevance_score", "top_skills" | "top_tools"}]}} with up to five results, best
   * first, and {@code {"results": []}} when nothing matches. {@code GET /v1/services/search?q=...}
   * serves this.
   *
   * @throws IllegalArgumentException when the query is blank
   */
  public ObjectNode searchResults(String query) {
    return searchResults(query, name -> true);
  }

  /**
   * Returns what {@code search_known_services} answers to a caller shown only some tools, as {@link
   * #searchResults(String)} but with {@link #search(String, int, Predicate)}'s filter.
   *
   * @param shown whether the caller is shown the capability (tool) of that name
   * @throws IllegalArgumentException when the query is blank
   */
  public ObjectNode searchResults(String query, Predicate<String> shown) {
    if (query == null || query.isBlank()) {
      throw new IllegalArgumentException(
          "query is required: give keywords that describe the task, such as \"reschedule"
              + " meeting\".");
    }
    ObjectNode answer = JsonMapper.shared().createObjectNode();
    ArrayNode results = answer.putArray("results");
    for (ServiceMatch match : search(query, MAX_RESULTS, shown)) {
      KnownService service = match.service();
      ObjectNode result = results.addObject();
      result.put("id", service.id());
      result.put("type", service.kind().wireName());
      result.put("summary", service.summary());
      result.put("relevance_score", match.relevance());
      ArrayNode capabilities = result.putArray(service.kind().capabilitiesField());
      match.topCapabilities().forEach(capability -> capabilities.add(capability.name()));
    }
    return answer;
  }

  /**
   * Returns the context hint for a request: the two services that match it best, in the words an
   * agent loop puts into the system prompt before the model reads the request, or empty when none
   * matches. Asked for a tool set ({@link ToolCaller#enter}), as the agent loop asks for its
   * conversation's, it names only services and tools that set is shown.
   *
   * <pre>
   * Potentially relevant services for this request (call search_known_services for full search):
   * - SalesOpsAgent (a2a): Autonomous agent for complex sales workflows, top skills: generate-qbr-report
   * - salesforce-mcp (mcp): Direct Salesforce CRM access, top tools: search_leads, update_opportunity
   * </pre>
   */
  public Optional<String> contextHint(String request) {
    // For the tool set asking (an agent's conversation), only what it is shown.
    List<ServiceMatch> matches = search(request, HINTED_SERVICES, callersView());
    if (matches.isEmpty()) {
      return Optional.empty();
    }
    StringBuilder hint = new StringBuilder(HINT_HEADER);
    for (ServiceMatch match : matches) {
      KnownService service = match.service();
      hint.append("\n- ")
          .append(service.id())
          .append(" (")
          .append(service.kind().wireName())
          .append("): ")
          .append(service.summary());
      if (!match.topCapabilities().isEmpty()) {
        hint.append(", ")
            .append(service.kind().capabilitiesLabel())
            .append(": ")
            .append(
                String.join(
                    ", ",
                    match.topCapabilities().stream().map(KnownService.Capability::name).toList()));
      }
    }
    return Optional.of(hint.toString());
  }

  /** The tool this index serves: {@code search_known_services}. */
  public List<ExecutableTool> tools() {
    return MethodTools.of(this, SOURCE);
  }

  @Tool(
      name = "search_known_services",
      description =
          "Searches every agent, MCP server, tool service and remote worker group you can route"
              + " work to, by keywords, and returns up to 5 matches, best first, as JSON: id, type"
              + " (a2a: call invoke_agent; mcp: call mcp_invoke_tool; service or remote: call its"
              + " tools), summary, relevance_score (1.0 for the best match) and top_skills or"
              + " top_tools. Use it before choosing who should do a task.",
      readOnly = true,
      destructive = false,
      idempotent = true,
      openWorld = false)
  public String searchKnownServices(
      @Param(
              description =
                  "Keywords that describe the task, such as \"reschedule meeting\" or \"aws spend"
                      + " audit\".")
          String query) {
    if (query.isBlank()) {
      throw ToolException.invalidArguments(
          "query is required: give keywords that describe the task, such as \"reschedule"
              + " meeting\".");
    }
    // Only what the caller's own tool set shows: search must not reveal what a profile hides.
    return searchResults(query, callersView()).toString();
  }

  /** What the current caller's tool set shows; everything outside a call. */
  private static Predicate<String> callersView() {
    return ToolCaller.toolSet()
        .<Predicate<String>>map(set -> name -> !set.hides(name))
        .orElse(name -> true);
  }

  private static String key(ServiceKind kind, String id) {
    return kind.wireName() + ":" + id;
  }

  /** A service as indexed: with its capabilities' tokens, to rank them against each query. */
  private record Entry(KnownService service, List<List<String>> capabilityTokens) {
    static Entry of(KnownService service) {
      return new Entry(
          service,
          service.capabilities().stream()
              .map(c -> Bm25Index.tokenize(c.name() + ": " + c.description()))
              .toList());
    }

    /** Whether a caller is shown this service: it has no capabilities, or shows one of them. */
    boolean shownTo(Predicate<String> shown) {
      return service.capabilities().isEmpty()
          || service.capabilities().stream().anyMatch(c -> shown.test(c.name()));
    }

    /**
     * Up to three of the shown capabilities: those matching the query first, best first (ties in
     * the service's order), then the others in the service's order.
     */
    List<KnownService.Capability> top(Bm25Index.Query query, Predicate<String> shown) {
      List<KnownService.Capability> all = service.capabilities();
      int limit = Math.min(all.size(), TOP_CAPABILITIES);
      double[] scores = Bm25Index.scan(capabilityTokens, query);
      List<Integer> order = new ArrayList<>(all.size());
      for (int i = 0; i < all.size(); i++) {
        order.add(i);
      }
      // Stable: matching capabilities first by score, the rest (score 0) keep their order.
      order.sort((a, b) -> Double.compare(scores[b], scores[a]));
      List<KnownService.Capability> top = new ArrayList<>(limit);
      for (int i = 0; i < all.size() && top.size() < limit; i++) {
        KnownService.Capability capability = all.get(order.get(i));
        if (shown.test(capability.name())) {
          top.add(capability);
        }
      }
      return top;
    }
  }
}
