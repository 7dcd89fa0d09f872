package dev.toolhost.web;

import dev.toolhost.core.ErrorCode;
import dev.toolhost.core.ExecutableTool;
import dev.toolhost.core.MethodTools;
import dev.toolhost.core.Param;
import dev.toolhost.core.Tool;
import dev.toolhost.core.ToolCall;
import dev.toolhost.core.ToolException;
import dev.toolhost.core.ToolGuide;
import dev.toolhost.core.ToolResult;
import dev.toolhost.memory.ContentChunker;
import dev.toolhost.memory.ResultChunker;
import dev.toolhost.memory.WorkingMemory;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import tools.jackson.databind.json.JsonMapper;
import tools.jackson.databind.node.ArrayNode;
import tools.jackson.databind.node.ObjectNode;

/**
 * Web tools let a model search the web and read pages: {@code web_search(query, count?)} (only when
 * a search provider is configured) and {@code web_browse(url)}, source {@code builtin:web}.
 *
 * <p>{@code web_browse} fetches through {@link OutboundHttp}, so internal addresses are refused
 * wherever a name or redirect leads; honours robots.txt unless the config turns that off; reads
 * GitHub issues and pull requests through GitHub's API ({@link GitHubRoute}); turns HTML into
 * markdown ({@link PageConverter}) and passes plain text and JSON through; and refuses any other
 * content type by name. A page longer than the threshold (8,000 characters) is split by the {@link
 * ContentChunker} into working memory under {@code session/{s}/web-{url}-chunk{n}}, with its
 * outline at {@code ...-index}, and the model gets the index table; a call with no session (or a
 * host with no working memory) gets the page cut at the threshold with {@code [Content truncated —
 * N chars omitted]}.
 */
public final class WebTools {

  /** The source of the web tools. */
  public static final String SOURCE = "builtin:web";

  /** The category of stored page chunks. */
  public static final String CATEGORY = "web-page";

  /** The guide to the web tools. */
  public static final ToolGuide GUIDE =
      ToolGuide.fromResource(
          "web-tools",
          "How to search the web, read pages, and read large pages chunk by chunk.",
          WebTools.class,
          "guides/web-tools.md");

  private static final Logger LOG = LoggerFactory.getLogger(WebTools.class);
  private static final JsonMapper JSON = JsonMapper.builder().build();
  private static final String ACCEPT =
      "text/html,application/xhtml+xml,text/plain;q=0.9,application/json;q=0.9,*/*;q=0.1";

  private final WebConfig config;
  private final OutboundHttp http;
  private final Optional<WebSearch> search;
  private final GitHubRoute github;
  private final Robots robots;
  private final PageConverter converter = new PageConverter();
  private final Optional<WorkingMemory> memory;

  /**
   * The web tools.
   *
   * @param config the web config
   * @param http the client for pages, under the config's outbound policy
   * @param apis the client for GitHub's API, its configured host opened
   * @param search the search, when a provider is configured
   * @param githubToken GitHub's token, when the config names a variable that holds one
   * @param memory the working memory large pages are chunked into, if the host has one
   */
  public WebTools(
      WebConfig config,
      OutboundHttp http,
      OutboundHttp apis,
      Optional<WebSearch> search,
      Optional<String> githubToken,
      Optional<WorkingMemory> memory) {
    this.config = Objects.requireNonNull(config, "config");
    this.http = Objects.requireNonNull(http, "http");
    this.search = Objects.requireNonNull(search, "search");
    this.memory = Objects.requireNonNull(memory, "memory");
    this.github = new GitHubRoute(apis, config.github().apiUrl(), githubToken);
    this.robots = new Robots(http);
  }

  /** The tools: {@code web_browse}, and {@code web_search} when a provider is configured. */
  public List<ExecutableTool> tools() {
    return MethodTools.of(this, SOURCE).stream()
        .filter(tool -> search.isPresent() || !tool.spec().name().equals("web_search"))
        .toList();
  }

  @Tool(
      name = "web_search",
      description =
          "Searches the web and returns a numbered list of results: each page's title as a link,"
              + " then a snippet. Read a result's page with web_browse.",
      readOnly = true,
      destructive = false,
      idempotent = true,
      openWorld = true)
  public ToolResult webSearch(
      @Param(description = "What to search for.") String query,
      @Param(
              description =
                  "How many results, 1 to 20 (default: the configured count); more gives 20.")
          Optional<Integer> count)
      throws InterruptedException {
    WebSearch provider =
        search.orElseThrow(
            () -> new ToolException(ErrorCode.UNAVAILABLE, "No search provider is configured."));
    if (query.isBlank()) {
      throw ToolException.invalidArguments("query is empty: say what to search for.");
    }
    int asked = count.orElse(config.search().map(WebConfig.Search::count).orElse(5));
    if (asked < 1) {
      throw ToolException.invalidArguments("count is " + asked + "; it must be 1 to 20.");
    }
    // More than the providers give is not the model's mistake: it gets the most there are.
    int n = Math.min(asked, WebConfig.MAX_COUNT);
    List<WebSearch.Hit> hits = provider.search(query.strip(), n);
    ArrayNode results = JSON.createArrayNode();
    for (WebSearch.Hit hit : hits) {
      results
          .addObject()
          .put("title", hit.title())
          .put("url", hit.url())
          .put("snippet", hit.snippet());
    }
    ObjectNode structured = JSON.createObjectNode();
    structured.put("query", query.strip());
    structured.set("results", results);
    return ToolResult.success(WebSearch.format(hits), structured);
  }

  @Tool(
      name = "web_browse",
      description =
          "Fetches a web page and returns it as markdown (title, headings, text, absolute links)."
              + " GitHub issue and pull request URLs come back as their title, state, labels and"
              + " body. A long page is stored in working memory in chunks, and you get their index:"
              + " read the chunks you need with get_from_working_memory.",
      readOnly = true,
      destructive = false,
      idempotent = true,
      openWorld = true)
  public String webBrowse(
      @Param(description = "The page's http or https URL.") String url, ToolCall call)
      throws InterruptedException {
    URI uri;
    try {
      uri = OutboundHttp.checkedUrl(url);
    } catch (OutboundException e) {
      throw ToolException.invalidArguments("web_browse cannot fetch it: " + e.getMessage() + ".");
    }
    Optional<GitHubRoute.Target> target = GitHubRoute.target(uri);
    if (target.isPresent()) {
      Optional<String> item = github.read(target.get());
      if (item.isPresent()) {
        return shaped(uri, item.get(), call);
      }
    }
    return shaped(uri, page(uri), call);
  }

  private String page(URI uri) throws InterruptedException {
    OutboundHttp.Response response;
    try {
      if (config.browse().robots() && !robots.allows(uri)) {
        throw new ToolException(
            ErrorCode.EXECUTION_FAILED,
            "The site's robots.txt does not allow automated agents to fetch '"
                + uri
                + "'. Find the information elsewhere (web_search), or ask the operator to set"
                + " web.browse.robots to false if this site may be fetched anyway.");
      }
      response = http.get(uri, Map.of("Accept", ACCEPT));
    } catch (OutboundException e) {
      throw switch (e.reason()) {
        case BAD_URL, REFUSED, TOO_MANY_REDIRECTS ->
            ToolException.invalidArguments(
                "web_browse refused to fetch it: " + e.getMessage() + ".");
        case TIMEOUT -> new ToolException(ErrorCode.TIMEOUT, e.getMessage() + ".");
        case TOO_LARGE, UNREACHABLE ->
            new ToolException(ErrorCode.UNAVAILABLE, e.getMessage() + ".");
      };
    }
    if (!response.ok()) {
      throw new ToolException(
          response.status() >= 500 || response.status() == 429
              ? ErrorCode.UNAVAILABLE
              : ErrorCode.EXECUTION_FAILED,
          "'"
              + response.uri()
              + "' answered HTTP "
              + response.status()
              + (response.status() == 404 ? " (not found)" : "")
              + "; the page could not be read.");
    }
    String type = response.mediaType().orElseGet(() -> sniff(response.body()));
    if (type.equals("text/html") || type.equals("application/xhtml+xml")) {
      return converter.convert(response.body(), response.charset(), response.uri()).markdown();
    }
    if (type.equals("text/plain")
        || type.equals("text/markdown")
        || type.equals("application/json")
        || type.endsWith("+json")) {
      return response.text();
    }
    throw new ToolException(
        ErrorCode.EXECUTION_FAILED,
        "'"
            + response.uri()
            + "' is "
            + type
            + ", which web_browse cannot read: it reads HTML pages, plain text and JSON.");
  }

  /** A body with no Content-Type: HTML when it starts like a page, else plain text. */
  private static String sniff(byte[] body) {
    String start =
        new String(body, 0, Math.min(body.length, 512), StandardCharsets.UTF_8)
            .stripLeading()
            .toLowerCase(Locale.ROOT);
    return start.startsWith("<!doctype html") || start.startsWith("<html")
        ? "text/html"
        : "text/plain";
  }

  /** The content whole, or chunked into working memory, or cut at the threshold. */
  private String shaped(URI uri, String content, ToolCall call) {
    int threshold = config.browse().chunkThreshold();
    if (content.length() <= threshold) {
      return content;
    }
    Optional<String> session = call.sessionId().filter(id -> !id.isBlank());
    if (session.isPresent() && memory.isPresent()) {
      try {
        return chunked(uri, content, session.get(), memory.get());
      } catch (RuntimeException e) {
        LOG.warn(
            "Cut the {}-char page {}: working memory failed to store it", content.length(), uri, e);
      }
    }
    return truncated(content, threshold);
  }

  private String chunked(URI uri, String content, String session, WorkingMemory store) {
    List<ContentChunker.Chunk> chunks =
        new ContentChunker(config.browse().chunkLength()).chunk(content);
    String base = WorkingMemory.sessionNamespace(session) + "/web-" + sanitized(uri.toString());
    ResultChunker.Stored stored =
        ResultChunker.store(store, base, chunks, config.browse().chunkTtl(), CATEGORY);
    return ResultChunker.index(
        "Page '" + uri + "'", "page", content.length(), chunks, stored.keys(), stored.indexKey());
  }

  /**
   * The URL as a key segment, as the seed makes it: letters, digits, '.' and '-' kept, the rest
   * '_', leading '_' dropped, 80 characters at most (a longer one ends in a hash of the URL).
   */
  static String sanitized(String url) {
    StringBuilder out = new StringBuilder(url.length());
    for (int i = 0; i < url.length(); i++) {
      char c = url.charAt(i);
      boolean kept = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
      out.append(kept || c == '.' || c == '-' ? c : '_');
    }
    int start = 0;
    while (start < out.length() && out.charAt(start) == '_') {
      start++;
    }
    String trimmed = out.substring(start);
    if (trimmed.length() <= 80) {
      return trimmed;
    }
    // Cut as the seed cuts, but two long URLs that share 71 characters keep their own keys.
    String hash = Integer.toHexString(url.hashCode() | 0x1000_0000);
    return trimmed.substring(0, 71) + "-" + hash;
  }

  /** The content cut at the threshold, as the seed's web_browse says it. */
  static String truncated(String content, int threshold) {
    int cut = threshold;
    if (Character.isHighSurrogate(content.charAt(cut - 1))) {
      cut--;
    }
    return content.substring(0, cut)
        + "\n\n[Content truncated — "
        + ResultChunker.chars(content.length() - cut)
        + " chars omitted]";
  }
}
