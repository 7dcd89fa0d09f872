package dev.toolhost.browser;

import dev.toolhost.core.spi.ChildProcesses;
import dev.toolhost.core.spi.ConfigException;
import dev.toolhost.core.spi.ConfigSections;
import dev.toolhost.core.spi.HostContext;
import dev.toolhost.core.spi.HostExtension;
import dev.toolhost.core.spi.SectionReading;
import dev.toolhost.memory.WorkingMemory;
import dev.toolhost.web.OutboundHttp;
import java.io.IOException;
import java.nio.file.Files;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import tools.jackson.databind.JsonNode;

/**
 * The browser extension is a host's headless browser (the {@code browser:} section): the {@code
 * browser} tool, source {@code builtin:browser}, with its guide, driving Debian's Chromium over the
 * DevTools protocol, one browser per session.
 *
 * <p>Off until configured: a host whose config has no {@code browser:} section, or has {@code
 * enabled: false} in it, registers no tool and starts no browser. It needs the web extension's
 * {@link OutboundHttp} (the {@code web:} section): every URL the model names and every request a
 * page makes is checked by the web section's outbound policy, so that the browser reaches nothing
 * {@code web_browse} could not (in the JVM per request, and again in a local vetting proxy that
 * every connection of every browser goes through, which connects only to the addresses it checked);
 * a host with this section and no {@code web:} one does not start, rather than run a browser with
 * checks of its own that could drift from the web's. No browser starts with the host: the first
 * action of a session starts one. Every browser dies with the host, {@code kill -9} included
 * ({@link ChildProcesses}), and its profile is made under a directory of this host's ({@link
 * Profiles}), which a host started after a crash deletes. Close ends every browser and deletes
 * every profile. Found by {@link java.util.ServiceLoader}.
 */
public final class BrowserExtension implements HostExtension<BrowserConfig> {

  /** The extension's name and config key. */
  public static final String NAME = "browser";

  /** The extension reading the host's {@code browser:} section. */
  public BrowserExtension() {}

  @Override
  public String name() {
    return NAME;
  }

  /** Every page the browser loads passes the web extension's outbound checks. */
  @Override
  public Set<Class<?>> uses() {
    return Set.of(OutboundHttp.class, WorkingMemory.class);
  }

  @Override
  public JsonNode configSchema() {
    return ConfigSections.schema(BrowserConfig.Raw.class);
  }

  @Override
  public BrowserConfig read(JsonNode section, SectionReading reading) {
    return BrowserConfig.read(section, reading);
  }

  @Override
  public void start(HostContext host, Optional<BrowserConfig> section) {
    if (section.isEmpty()) {
      return;
    }
    BrowserConfig config = section.get();
    if (!config.enabled()) {
      return;
    }
    Optional<OutboundHttp> vetting = host.service(OutboundHttp.class);
    if (vetting.isEmpty()) {
      throw new ConfigException(
          "'browser' needs a 'web' section: every page the browser loads is checked by the web"
              + " section's outbound policy (add 'web: {}' for the default checks; its"
              + " outbound.allow opens internal addresses).");
    }
    if (!Files.isExecutable(config.binary())) {
      throw new ConfigException(
          "'browser.binary' is '"
              + config.binary()
              + "', which is not an executable file (install Debian's chromium, or set the path"
              + " of a Chromium; none is ever downloaded).");
    }
    OutboundHttp http = vetting.get();
    Profiles profiles;
    try {
      profiles = host.own(Profiles.open(config.profileDir()));
    } catch (IOException e) {
      throw new ConfigException(
          "'browser.profile_dir' is '"
              + config.profileDir()
              + "', where the browsers' profiles cannot be made ("
              + e.getMessage()
              + ").");
    }
    VettingProxy proxy;
    try {
      proxy = host.own(VettingProxy.start(http));
    } catch (IOException e) {
      throw new IllegalStateException("The browser's vetting proxy did not start: " + e, e);
    }
    ChildProcesses children = host.own(new ChildProcesses(NAME));
    // Owned last, so closed first: every browser ends before its spawner kills what is left, then
    // the proxy and the profiles go.
    Browsers browsers =
        host.own(
            new Browsers(
                config.maxBrowsers(),
                config.idleTimeout(),
                () ->
                    Chromium.start(
                        config.binary(),
                        config.headless(),
                        profiles.base(),
                        config.startTimeout(),
                        http::vet,
                        proxy.address(),
                        children)));
    BrowserTool tool =
        new BrowserTool(
            config, browsers, http, host.environment(), host.service(WorkingMemory.class));
    host.registry().register(tool.tool());
    // The web through a browser, for helpers and tasks; never for synthesis.
    host.allowTools(List.of(tool.tool()), "subagent", "scheduled");
    host.guide(BrowserTool.GUIDE);
  }
}
