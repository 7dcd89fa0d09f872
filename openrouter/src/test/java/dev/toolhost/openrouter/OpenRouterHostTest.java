package dev.toolhost.openrouter;

import static org.assertj.core.api.Assertions.assertThat;

import dev.toolhost.core.ErrorCode;
import dev.toolhost.core.ToolResult;
import dev.toolhost.testing.FakeSite;
import dev.toolhost.testing.TestHost;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The {@code openrouter:} section on a started host: without it none of the tools; with it but no
 * key in the host's environment, a warning at start, an answer that says which variable to set from
 * every call, and nothing sent.
 */
@Timeout(60)
class OpenRouterHostTest {

  @Test
  void aHostWhoseEnvironmentLacksTheKeySaysSoAtStartAndInEveryAnswerAndSendsNothing() {
    ByteArrayOutputStream log = new ByteArrayOutputStream();
    PrintStream stderr = System.err;
    // slf4j-simple writes its lines to whatever System.err is when it writes them.
    System.setErr(new PrintStream(log, true, StandardCharsets.UTF_8));
    try (FakeSite site =
            FakeSite.start().page("/api/v1/credits", FakeSite.Page.ok("application/json", "{}"));
        TestHost host =
            TestHost.start(
                "openrouter:\n  base_url: " + site.url() + "/api/v1\n",
                List.of(new OpenRouterExtension()))) {

      ToolResult credits = host.call("get_credits", "{}");

      assertThat(credits).isInstanceOf(ToolResult.Failure.class);
      assertThat(((ToolResult.Failure) credits).error().code()).isEqualTo(ErrorCode.UNAVAILABLE);
      assertThat(credits.text())
          .isEqualTo(
              "The OpenRouter tools have no key: the environment variable OPENROUTER_API_KEY is"
                  + " not set. Set it to an OpenRouter API key (a management key for the key and"
                  + " activity tools) and restart the host.");
      assertThat(site.takeRequests()).isEmpty();
    } finally {
      System.setErr(stderr);
    }
    assertThat(log.toString(StandardCharsets.UTF_8))
        .contains(
            "The OpenRouter tools have no key: OPENROUTER_API_KEY is not set, so their calls will"
                + " fail until it is");
  }

  @Test
  void aHostWithoutTheSectionHasNoneOfTheTools() {
    try (TestHost host =
        TestHost.builder()
            .extensions(List.of(new OpenRouterExtension()))
            .environment(Map.of("OPENROUTER_API_KEY", OpenRouterToolsTest.KEY))
            .start()) {
      assertThat(host.toolNames("main")).doesNotContainAnyElementsOf(OpenRouterToolsTest.NAMES);
      assertThat(host.runtime().registry().specs())
          .noneMatch(spec -> spec.source().equals("builtin:openrouter"));
    }
  }
}
