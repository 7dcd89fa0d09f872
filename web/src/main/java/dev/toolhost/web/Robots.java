package dev.toolhost.web;

import crawlercommons.robots.BaseRobotRules;
import crawlercommons.robots.SimpleRobotRulesParser;
import java.net.URI;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * Robots answers whether a site's robots.txt lets Toolhost fetch a page, as RFC 9309 reads the file
 * (crawler-commons' parser): the group for the {@code Toolhost} user agent, else the one for {@code
 * *}; a missing file (any 4xx) allows everything, a server error (5xx) disallows everything for
 * now, and a robots.txt that cannot be fetched at all fails the fetch with the outbound error,
 * which is the one the page would give. Each origin's rules are kept for ten minutes, for at most
 * 512 origins. The file is fetched through the same outbound client, so the same addresses are
 * refused. Thread-safe.
 */
final class Robots {

  /** The user agent robots.txt groups are matched against. */
  static final String AGENT = "toolhost";

  private static final Duration KEPT = Duration.ofMinutes(10);
  private static final int ORIGINS = 512;

  private record Kept(BaseRobotRules rules, long until) {}

  private final OutboundHttp http;
  private final Map<String, Kept> cache =
      new LinkedHashMap<>(16, 0.75f, true) {
        @Override
        protected boolean removeEldestEntry(Map.Entry<String, Kept> eldest) {
          return size() > ORIGINS;
        }
      };

  Robots(OutboundHttp http) {
    this.http = Objects.requireNonNull(http, "http");
  }

  /** Whether robots.txt lets the page be fetched. */
  boolean allows(URI page) throws InterruptedException {
    String origin =
        page.getScheme().toLowerCase(java.util.Locale.ROOT)
            + "://"
            + page.getRawAuthority().toLowerCase(java.util.Locale.ROOT);
    BaseRobotRules rules = rules(origin);
    return rules.isAllowed(page.toString());
  }

  private BaseRobotRules rules(String origin) throws InterruptedException {
    long now = System.nanoTime();
    synchronized (cache) {
      Kept kept = cache.get(origin);
      if (kept != null && kept.until() - now > 0) {
        return kept.rules();
      }
    }
    SimpleRobotRulesParser parser = new SimpleRobotRulesParser();
    String robots = origin + "/robots.txt";
    // A refused or unreachable robots.txt fails the fetch with the same error the page would.
    OutboundHttp.Response response = http.get(URI.create(robots), Map.of("Accept", "text/plain"));
    BaseRobotRules rules =
        response.ok()
            ? parser.parseContent(
                robots, response.body(), response.mediaType().orElse("text/plain"), List.of(AGENT))
            : parser.failedFetch(response.status());
    synchronized (cache) {
      cache.put(origin, new Kept(rules, now + KEPT.toNanos()));
    }
    return rules;
  }
}
