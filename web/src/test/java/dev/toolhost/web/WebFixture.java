package dev.toolhost.web;

import dev.toolhost.core.ToolCall;
import dev.toolhost.core.ToolDispatcher;
import dev.toolhost.core.ToolProfiles;
import dev.toolhost.core.ToolRegistry;
import dev.toolhost.core.ToolResult;
import dev.toolhost.core.ToolSet;
import dev.toolhost.memory.InProcessWorkingMemory;
import dev.toolhost.memory.WorkingMemory;
import dev.toolhost.memory.WorkingMemoryTools;
import dev.toolhost.testing.FakeSite;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import tools.jackson.databind.json.JsonMapper;

/**
 * A web fixture is the web tools over a fake site on 127.0.0.2 (opened in the allow-list, while the
 * rest of loopback stays refused), a name lookup that knows a few test names, and working memory,
 * called through a real dispatcher as a host calls them.
 */
final class WebFixture implements AutoCloseable {

  /**
   * Test names: allowed.example and github.com are the fake site; intranet.example is private;
   * mixed.example has a public and a private address. Other names resolve as the JDK does.
   */
  static final OutboundHttp.Lookup LOOKUP =
      host ->
          switch (host) {
            case "allowed.example", "github.com" -> List.of(InetAddress.getByName("127.0.0.2"));
            case "intranet.example" -> List.of(InetAddress.getByName("10.0.0.5"));
            case "mixed.example" ->
                List.of(InetAddress.getByName("93.184.216.34"), InetAddress.getByName("10.1.1.1"));
            case "nowhere.example" -> throw new UnknownHostException(host);
            default -> OutboundHttp.Lookup.system().addresses(host);
          };

  private static final JsonMapper JSON = JsonMapper.builder().build();

  final FakeSite site;
  final WorkingMemory memory = new InProcessWorkingMemory();
  final OutboundHttp pages;
  final OutboundHttp apis;
  private final ToolSet tools;
  private final ToolDispatcher dispatcher = ToolDispatcher.create();

  private WebFixture(FakeSite site, WebConfig config, Map<String, String> env) {
    this.site = site;
    this.pages = OutboundHttp.start(config.outbound(), LOOKUP);
    OutboundPolicy apiPolicy = config.outbound().allowingHost(config.github().apiUrl().getHost());
    if (config.search().isPresent()) {
      apiPolicy = apiPolicy.allowingHost(config.search().get().url().getHost());
    }
    this.apis = OutboundHttp.start(apiPolicy, LOOKUP);
    Optional<WebSearch> search =
        config
            .search()
            .map(s -> new WebSearch(s, apis, Optional.ofNullable(env.get(s.apiKeyEnv()))));
    Optional<String> token = config.github().tokenEnv().map(env::get);
    ToolRegistry registry = new ToolRegistry();
    registry.registerAll(
        new WebTools(config, pages, apis, search, token, Optional.of(memory)).tools());
    registry.registerAll(new WorkingMemoryTools(memory).tools());
    this.tools = ToolSet.of(registry, ToolProfiles.MAIN);
  }

  /** The default web config with the fake site opened and robots.txt honoured. */
  static WebConfig config(FakeSite site) {
    return WebConfig.defaults()
        .withOutbound(OutboundPolicy.defaults().allowingRanges(List.of(Cidr.parse("127.0.0.2/32"))))
        .withGitHub(new WebConfig.GitHub(java.net.URI.create(site.url()), Optional.empty()));
  }

  static WebFixture start(FakeSite site, WebConfig config) {
    return new WebFixture(site, config, Map.of());
  }

  static WebFixture start(FakeSite site, WebConfig config, Map<String, String> env) {
    return new WebFixture(site, config, env);
  }

  ToolResult browse(String url) {
    return call("web_browse", Map.of("url", url), Optional.of("s1"));
  }

  ToolResult call(String tool, Map<String, Object> arguments, Optional<String> session) {
    String json = JSON.writeValueAsString(arguments);
    ToolCall call = ToolCall.of(tool, json);
    return dispatcher.dispatch(tools, session.map(call::withSessionId).orElse(call));
  }

  @Override
  public void close() {
    apis.close();
    pages.close();
    memory.close();
    site.close();
  }
}
