package dev.toolhost.web;

import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import dev.toolhost.core.spi.ConfigProblems;
import dev.toolhost.core.spi.ConfigSections;
import dev.toolhost.core.spi.ConfigSections.DurationText;
import dev.toolhost.core.spi.Counts;
import dev.toolhost.core.spi.Durations;
import dev.toolhost.core.spi.EnvironmentNames;
import dev.toolhost.core.spi.SectionReading;
import java.net.URI;
import java.net.URISyntaxException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Objects;
import java.util.Optional;
import java.util.regex.Pattern;
import tools.jackson.databind.JsonNode;

/**
 * A web config is the {@code web:} section of a host config: which search provider {@code
 * web_search} asks (none: the tool is not registered), how {@code web_browse} chunks large pages
 * and whether it honours robots.txt, where GitHub's API is, and what outbound HTTP may reach.
 *
 * <pre>{@code
 * web:
 *   search:
 *     provider: brave              # brave or searxng; no search section: no web_search
 *     url: https://api.search.brave.com   # the provider's base URL (required for searxng)
 *     api_key_env: BRAVE_API_KEY   # brave: the variable that holds the key
 *     count: 5                     # results when the model asks for no count (at most 20)
 *   browse:
 *     chunk_threshold: 8000        # longer pages go to working memory in chunks
 *     chunk_length: 4000           # the longest chunk
 *     chunk_ttl: 30m               # how long chunks stay
 *     robots: true                 # honour robots.txt
 *   github:
 *     api_url: https://api.github.com
 *     token_env: GITHUB_TOKEN      # optional: the variable that holds a token
 *   outbound:
 *     allow: [10.1.2.0/24, wiki.internal]   # internal ranges and host names opened
 *     max_redirects: 5
 *     max_body_bytes: 10485760
 *     timeout: 30s
 * }</pre>
 *
 * <p>The search provider's and GitHub's hosts are opened by their configured URLs (an operator
 * chose them, not a model); every other host a model names is checked against the outbound policy.
 *
 * @param search the search provider, if one is configured
 * @param browse how pages are browsed
 * @param github where GitHub's API is and the token variable
 * @param outbound what fetches may reach
 */
public record WebConfig(
    Optional<Search> search, Browse browse, GitHub github, OutboundPolicy outbound) {

  public WebConfig {
    Objects.requireNonNull(search, "search");
    Objects.requireNonNull(browse, "browse");
    Objects.requireNonNull(github, "github");
    Objects.requireNonNull(outbound, "outbound");
  }

  /** The most results one search returns: Brave's own cap. */
  public static final int MAX_COUNT = 20;

  /** A search provider's kind. */
  public enum Provider {
    /** The Brave Search API. */
    BRAVE,
    /** A SearXNG instance's JSON API. */
    SEARXNG
  }

  /**
   * The search provider.
   *
   * @param provider which API
   * @param url its base URL
   * @param apiKeyEnv the environment variable holding Brave's key
   * @param count how many results a search returns when the model asks for no count
   */
  public record Search(Provider provider, URI url, String apiKeyEnv, int count) {
    public Search {
      Objects.requireNonNull(provider, "provider");
      Objects.requireNonNull(url, "url");
      Objects.requireNonNull(apiKeyEnv, "apiKeyEnv");
    }
  }

  /**
   * How pages are browsed.
   *
   * @param chunkThreshold pages whose markdown is longer go to working memory in chunks (8,000)
   * @param chunkLength the longest chunk (4,000)
   * @param chunkTtl how long chunks stay in working memory (30 minutes)
   * @param robots whether robots.txt is honoured (yes)
   */
  public record Browse(int chunkThreshold, int chunkLength, Duration chunkTtl, boolean robots) {
    /** The seed's defaults. */
    public static Browse defaults() {
      return new Browse(8_000, 4_000, Duration.ofMinutes(30), true);
    }
  }

  /**
   * Where GitHub's API is.
   *
   * @param apiUrl the API's base URL (GitHub's, or a GitHub Enterprise one)
   * @param tokenEnv the environment variable holding a token, if any
   */
  public record GitHub(URI apiUrl, Optional<String> tokenEnv) {
    /** GitHub's own API, without a token. */
    public static GitHub defaults() {
      return new GitHub(URI.create("https://api.github.com"), Optional.empty());
    }
  }

  /** No search provider, the default browsing, GitHub's API, the default outbound policy. */
  public static WebConfig defaults() {
    return new WebConfig(
        Optional.empty(), Browse.defaults(), GitHub.defaults(), OutboundPolicy.defaults());
  }

  /** This config with the given outbound policy. */
  public WebConfig withOutbound(OutboundPolicy policy) {
    return new WebConfig(search, browse, github, policy);
  }

  /** This config with the given search provider. */
  public WebConfig withSearch(Search provider) {
    return new WebConfig(Optional.of(provider), browse, github, outbound);
  }

  /** This config with the given GitHub API. */
  public WebConfig withGitHub(GitHub api) {
    return new WebConfig(search, browse, api, outbound);
  }

  /** A host name of the allow-list, or {@code *.} and a domain. */
  private static final Pattern HOST =
      Pattern.compile(
          "(\\*\\.)?[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?(\\.[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?)*");

  /**
   * Reads a section its schema accepts, adding its problems to the reading's; the result is only
   * meaningful when none was added.
   */
  public static WebConfig read(JsonNode section, SectionReading reading) {
    ConfigProblems problems = reading.problems();
    Raw raw = ConfigSections.bind(WebExtension.NAME, section, Raw.class);
    Optional<Search> search = Optional.empty();
    if (raw.search() != null) {
      search = Optional.of(search(raw.search(), problems));
    }
    Browse browse = Browse.defaults();
    if (raw.browse() != null) {
      RawBrowse b = raw.browse();
      int threshold =
          positive(b.chunkThreshold(), browse.chunkThreshold(), "browse/chunk_threshold", problems);
      int length = positive(b.chunkLength(), browse.chunkLength(), "browse/chunk_length", problems);
      if (length < 2) {
        problems.atValue(
            "/web/browse/chunk_length",
            "'web.browse.chunk_length' is " + length + " (expected 2 or more characters)");
      }
      browse =
          new Browse(
              threshold,
              Math.max(2, length),
              duration(b.chunkTtl(), browse.chunkTtl(), "browse/chunk_ttl", problems),
              b.robots() == null || b.robots());
    }
    GitHub github = GitHub.defaults();
    if (raw.github() != null) {
      URI api =
          raw.github().apiUrl() == null
              ? github.apiUrl()
              : url(raw.github().apiUrl(), "github/api_url", problems);
      github = new GitHub(api, variable(raw.github().tokenEnv(), "github/token_env", problems));
    }
    OutboundPolicy outbound = OutboundPolicy.defaults();
    if (raw.outbound() != null) {
      RawOutbound o = raw.outbound();
      List<Cidr> ranges = new ArrayList<>();
      List<String> hosts = new ArrayList<>();
      List<String> allow = o.allow() == null ? List.of() : o.allow();
      for (int i = 0; i < allow.size(); i++) {
        String entry = allow.get(i).strip();
        if (entry.isEmpty()) {
          problems.atValue("/web/outbound/allow/" + i, "'web.outbound.allow[" + i + "]' is empty");
        } else if (entry.contains("/") || Cidr.literal(entry) != null) {
          try {
            ranges.add(Cidr.parse(entry));
          } catch (IllegalArgumentException e) {
            problems.atValue(
                "/web/outbound/allow/" + i, "'web.outbound.allow[" + i + "]': " + e.getMessage());
          }
        } else if (HOST.matcher(entry).matches()) {
          hosts.add(entry.toLowerCase(Locale.ROOT));
        } else {
          problems.atValue(
              "/web/outbound/allow/" + i,
              "'web.outbound.allow["
                  + i
                  + "]' is '"
                  + entry
                  + "' (expected a host name such as wiki.internal or *.corp.example, or an IP"
                  + " address or CIDR range such as 10.1.2.0/24)");
        }
      }
      int redirects = o.maxRedirects() == null ? OutboundPolicy.MAX_REDIRECTS : o.maxRedirects();
      if (redirects < 0 || redirects > 20) {
        problems.atValue(
            "/web/outbound/max_redirects",
            "'web.outbound.max_redirects' is " + redirects + " (expected 0 to 20)");
        redirects = OutboundPolicy.MAX_REDIRECTS;
      }
      long body = o.maxBodyBytes() == null ? OutboundPolicy.MAX_BODY_BYTES : o.maxBodyBytes();
      if (body < 1024 || body > (1L << 30)) {
        problems.atValue(
            "/web/outbound/max_body_bytes",
            "'web.outbound.max_body_bytes' is " + body + " (expected 1024 to 1073741824 bytes)");
        body = OutboundPolicy.MAX_BODY_BYTES;
      }
      outbound =
          new OutboundPolicy(
              ranges,
              java.util.Set.copyOf(hosts),
              redirects,
              body,
              duration(o.timeout(), OutboundPolicy.TIMEOUT, "outbound/timeout", problems),
              OutboundPolicy.USER_AGENT);
    }
    return new WebConfig(search, browse, github, outbound);
  }

  private static Search search(RawSearch raw, ConfigProblems problems) {
    Provider provider = Provider.BRAVE;
    if (raw.provider() == null) {
      problems.atValue(
          "/web/search",
          "'web.search' names no provider (expected 'provider: brave' or 'provider: searxng')");
    } else {
      try {
        provider = Provider.valueOf(raw.provider().strip().toUpperCase(Locale.ROOT));
      } catch (IllegalArgumentException e) {
        problems.atValue(
            "/web/search/provider",
            "'web.search.provider' is '" + raw.provider() + "' (expected one of: brave, searxng)");
      }
    }
    URI url = URI.create("https://api.search.brave.com");
    if (raw.url() != null) {
      url = url(raw.url(), "search/url", problems);
    } else if (provider == Provider.SEARXNG) {
      problems.atValue(
          "/web/search",
          "'web.search' uses searxng but gives no 'url' (the instance's base URL, such as"
              + " https://search.example.org)");
    }
    String keyEnv =
        variable(raw.apiKeyEnv(), "search/api_key_env", problems).orElse("BRAVE_API_KEY");
    int count = Counts.read(raw.count(), 5, 1, MAX_COUNT, "/web/search/count", problems);
    return new Search(provider, url, keyEnv, count);
  }

  private static int positive(Integer raw, int fallback, String path, ConfigProblems problems) {
    if (raw == null) {
      return fallback;
    }
    if (raw < 1) {
      problems.atValue(
          "/web/" + path,
          "'web." + path.replace('/', '.') + "' is " + raw + " (expected a positive number)");
      return fallback;
    }
    return raw;
  }

  private static Duration duration(
      String raw, Duration fallback, String path, ConfigProblems problems) {
    return Durations.read(raw, fallback, "/web/" + path, problems).orElse(fallback);
  }

  private static URI url(String raw, String path, ConfigProblems problems) {
    try {
      URI url = new URI(raw.strip());
      if (url.getHost() != null
          && ("http".equalsIgnoreCase(url.getScheme())
              || "https".equalsIgnoreCase(url.getScheme()))) {
        return url;
      }
    } catch (URISyntaxException e) {
      // Reported below.
    }
    problems.atValue(
        "/web/" + path,
        "'web."
            + path.replace('/', '.')
            + "' is '"
            + raw
            + "' (expected an http or https URL, such as https://api.example.com)");
    return URI.create("https://invalid.invalid");
  }

  private static Optional<String> variable(String raw, String path, ConfigProblems problems) {
    return EnvironmentNames.read(
        raw, "/web/" + path, Optional.of("BRAVE_API_KEY"), "key", problems);
  }

  // ---- the section's raw shape: every key optional, so every field may be null ----

  record Raw(RawSearch search, RawBrowse browse, RawGitHub github, RawOutbound outbound) {}

  record RawSearch(
      @JsonPropertyDescription("brave or searxng") String provider,
      String url,
      String apiKeyEnv,
      Integer count) {}

  record RawBrowse(
      Integer chunkThreshold, Integer chunkLength, @DurationText String chunkTtl, Boolean robots) {}

  record RawGitHub(String apiUrl, String tokenEnv) {}

  record RawOutbound(
      @JsonPropertyDescription("host names (or *.domain) and IP addresses or CIDR ranges opened")
          List<String> allow,
      Integer maxRedirects,
      Long maxBodyBytes,
      @DurationText String timeout) {}
}
