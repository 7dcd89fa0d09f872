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
import java.util.Optional;
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
public final class BrowserExtension implements HostExtension {

  /** The extension's name and config key. */
  public static final String NAME = "browser";

  private Browsers browsers;

  /** The extension reading the host's {@code browser:} section. */
  public BrowserExtension() {}

  @Override
  public String name() {
    return NAME;
  }

  @Override
  public int order() {
    // After the web extension (150), whose outbound checks every request passes.
    return 170;
  }

  @Override
  public JsonNode configSchema() {
    return ConfigSections.schema(BrowserConfig.Raw.class);
  }

  @Override
  public void check(JsonNode section, SectionReading reading) {
    BrowserConfig.read(section, reading);
  }

  @Override
  public void start(HostContext host) {
    if (!host.configured()) {
      return;
    }
    BrowserConfig config = ConfigSections.read(this, host, BrowserConfig::read);
    if (!config.enabled() || !host.builtin(NAME)) {
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
      profiles = Profiles.open(config.profileDir());
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
      proxy = VettingProxy.start(http);
    } catch (IOException e) {
      profiles.close();
      throw new IllegalStateException("The browser's vetting proxy did not start: " + e, e);
    }
    ChildProcesses children = new ChildProcesses(NAME);
    browsers =
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
                    children),
            () -> {
              // After every browser ended: the spawner's end would kill what is left.
              children.close();
              proxy.close();
              profiles.close();
            });
    BrowserTool tool =
        new BrowserTool(
            config, browsers, http, host.environment(), host.service(WorkingMemory.class));
    host.registry().register(tool.tool());
    host.guide(BrowserTool.GUIDE);
  }

  @Override
  public void close() {
    if (browsers != null) {
      browsers.close();
    }
  }
}
