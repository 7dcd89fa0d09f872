package dev.toolhost.web;

import java.net.URI;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import tools.jackson.core.JacksonException;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * The GitHub route reads a GitHub issue or pull request through GitHub's REST API instead of its
 * web page, which is rendered for people and mostly script: {@code github.com/{o}/{r}/issues/{n}}
 * goes to {@code /repos/{o}/{r}/issues/{n}} and {@code github.com/{o}/{r}/pull/{n}} to {@code
 * /repos/{o}/{r}/pulls/{n}}, with anything after them (a comment anchor, {@code /files}) ignored.
 * The answer is markdown: the title line, then repository, state, author, dates, labels and URL,
 * then the body. Other GitHub pages (a repository's root, a file) are not routed, nor is {@code
 * www.github.com}.
 *
 * <p>A token is sent when the config names a variable that holds one; public repositories need
 * none. When the API answers anything but success (a private repository without a token, a rate
 * limit, a 404), the route gives way and the page is fetched as any other.
 */
final class GitHubRoute {

  private static final Logger LOG = LoggerFactory.getLogger(GitHubRoute.class);
  private static final JsonMapper JSON = JsonMapper.builder().build();
  private static final Pattern PATH =
      Pattern.compile("/([A-Za-z0-9_.-]+)/([A-Za-z0-9_.-]+)/(issues|pull)/([0-9]{1,10})(?:/.*)?");

  /** An issue or pull request a URL names. */
  record Target(String owner, String repo, boolean pull, String number) {}

  private final OutboundHttp http;
  private final URI api;
  private final Optional<String> token;

  GitHubRoute(OutboundHttp http, URI api, Optional<String> token) {
    this.http = Objects.requireNonNull(http, "http");
    this.api = Objects.requireNonNull(api, "api");
    this.token = token.filter(t -> !t.isBlank());
  }

  /** The issue or pull request the URL names, when it is one on github.com. */
  static Optional<Target> target(URI url) {
    if (url.getHost() == null || !url.getHost().toLowerCase(Locale.ROOT).equals("github.com")) {
      return Optional.empty();
    }
    String path = url.getPath() == null ? "" : url.getPath();
    Matcher matcher = PATH.matcher(path);
    if (!matcher.matches()) {
      return Optional.empty();
    }
    return Optional.of(
        new Target(
            matcher.group(1), matcher.group(2), matcher.group(3).equals("pull"), matcher.group(4)));
  }

  /**
   * The issue or pull request as markdown, or empty when the API does not answer it (the caller
   * then fetches the page).
   */
  Optional<String> read(Target target) throws InterruptedException {
    String base = api.toString().endsWith("/") ? api.toString() : api + "/";
    URI uri =
        URI.create(
            base
                + "repos/"
                + target.owner()
                + "/"
                + target.repo()
                + (target.pull() ? "/pulls/" : "/issues/")
                + target.number());
    Map<String, String> headers = new LinkedHashMap<>();
    headers.put("Accept", "application/vnd.github+json");
    headers.put("X-GitHub-Api-Version", "2022-11-28");
    token.ifPresent(t -> headers.put("Authorization", "Bearer " + t));
    OutboundHttp.Response response;
    try {
      response = http.get(uri, headers);
    } catch (OutboundException e) {
      LOG.info("GitHub's API did not answer for {}, fetching the page: {}", uri, e.getMessage());
      return Optional.empty();
    }
    if (!response.ok()) {
      LOG.info("GitHub's API answered HTTP {} for {}, fetching the page", response.status(), uri);
      return Optional.empty();
    }
    try {
      return Optional.of(format(target, JSON.readTree(response.body())));
    } catch (JacksonException e) {
      LOG.info("GitHub's API answered a body that is not JSON for {}, fetching the page", uri);
      return Optional.empty();
    }
  }

  /** The markdown of an issue or pull request object of GitHub's API. */
  static String format(Target target, JsonNode item) {
    boolean pull = target.pull() || item.has("pull_request") || item.has("merged");
    String repository = target.owner() + "/" + target.repo();
    StringBuilder out = new StringBuilder();
    out.append("# ")
        .append(pull ? "Pull Request #" : "Issue #")
        .append(item.path("number").asString(target.number()))
        .append(": ")
        .append(item.path("title").asString("(no title)"))
        .append(" [")
        .append(repository)
        .append("]\n\n");
    line(out, "Repository", repository);
    line(out, "State", state(item));
    line(out, "Author", field(item.path("user").path("login")));
    line(out, "Created", field(item.path("created_at")));
    line(out, "Updated", field(item.path("updated_at")));
    line(out, "Closed", field(item.path("closed_at")));
    line(out, "Merged", field(item.path("merged_at")));
    if (item.has("head") && item.has("base")) {
      line(
          out,
          "Branches",
          field(item.path("head").path("label")) + " → " + field(item.path("base").path("label")));
    }
    List<String> labels = new ArrayList<>();
    for (JsonNode label : item.path("labels")) {
      labels.add(field(label.path("name")));
    }
    line(out, "Labels", labels.isEmpty() ? "none" : String.join(", ", labels));
    line(out, "Comments", item.path("comments").isNumber() ? item.path("comments").asString() : "");
    line(out, "URL", field(item.path("html_url")));
    out.append("\n---\n\n");
    String body = field(item.path("body"));
    out.append(body.isBlank() ? "(no description)" : body.strip());
    return out.toString();
  }

  private static String state(JsonNode item) {
    String state = item.path("state").asString("unknown");
    if (item.path("merged").asBoolean(false) || !field(item.path("merged_at")).isEmpty()) {
      return "merged";
    }
    if (item.path("draft").asBoolean(false) && state.equals("open")) {
      return "open (draft)";
    }
    String reason = field(item.path("state_reason"));
    return state.equals("closed") && !reason.isEmpty()
        ? "closed (" + reason.replace('_', ' ') + ")"
        : state;
  }

  /** A field's text; empty when it is missing or null (asString would give "null"). */
  private static String field(JsonNode node) {
    return node.isValueNode() && !node.isNull() ? node.asString() : "";
  }

  private static void line(StringBuilder out, String name, String value) {
    if (!value.isEmpty()) {
      out.append("**").append(name).append(":** ").append(value).append('\n');
    }
  }
}
