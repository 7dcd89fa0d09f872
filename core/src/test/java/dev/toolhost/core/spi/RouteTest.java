package dev.toolhost.core.spi;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.ByteArrayOutputStream;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** Exact paths and templates with one variable segment. */
class RouteTest {

  private static final Route.Handler OK = request -> Route.Answer.json("{}");

  @Test
  void anExactRouteMatchesOnlyItsPath() {
    Route route = new Route("GET", "/v1/schedules", OK);

    assertThat(route.templated()).isFalse();
    assertThat(route.matches("/v1/schedules")).isTrue();
    assertThat(route.matches("/v1/schedules/")).isFalse();
    assertThat(route.variable("/v1/schedules")).isEmpty();
  }

  @Test
  void aTemplateMatchesOneNonEmptySegmentAndGivesItsValue() {
    Route route = new Route("GET", "/v1/schedules/{name}/runs", OK);

    assertThat(route.templated()).isTrue();
    assertThat(route.variable("/v1/schedules/daily-report/runs")).contains("daily-report");
    assertThat(route.matches("/v1/schedules//runs")).isFalse();
    assertThat(route.matches("/v1/schedules/a/b/runs")).isFalse();
    assertThat(route.matches("/v1/schedules/a/runs/more")).isFalse();
    assertThat(route.matches("/v1/schedules/runs")).isFalse();
  }

  @Test
  void aTemplateAtTheEndMatchesTheLastSegment() {
    Route route = new Route("GET", "/v1/weather/{city}", OK);

    assertThat(route.variable("/v1/weather/paris")).contains("paris");
    assertThat(route.matches("/v1/weather/")).isFalse();
    assertThat(route.matches("/v1/weather/paris/today")).isFalse();
  }

  @Test
  void aPathWithTwoVariablesOrAPartialSegmentIsRefused() {
    assertThatThrownBy(() -> new Route("GET", "/v1/{a}/{b}", OK))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage(
            "A route's path may hold one variable, a whole segment such as {name}: /v1/{a}/{b}");
    assertThatThrownBy(() -> new Route("GET", "/v1/x{a}", OK))
        .isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> new Route("GET", "/v1/{a", OK))
        .isInstanceOf(IllegalArgumentException.class);
  }

  @Test
  void aRequestsHeadersAreFoundByNameInAnyCase() {
    Route.Request request =
        new Route.Request(
            "POST",
            "/v1/x",
            Map.of(),
            new byte[0],
            Map.of("Accept", List.of("text/event-stream"), "X-Two", List.of("a", "b")));

    assertThat(request.header("accept")).contains("text/event-stream");
    assertThat(request.header("ACCEPT")).contains("text/event-stream");
    assertThat(request.headers().get("x-two")).containsExactly("a", "b");
    assertThat(request.header("missing")).isEmpty();
    assertThat(new Route.Request("GET", "/v1/x", Map.of(), new byte[0]).headers()).isEmpty();
  }

  @Test
  void aStreamedAnswerHasNoWholeBodyAndWritesWhenAsked() throws Exception {
    Route.Answer answer =
        Route.Answer.streamed(
            200, "text/event-stream", out -> out.write("data: 1\n\n".getBytes(UTF_8)));
    ByteArrayOutputStream written = new ByteArrayOutputStream();

    answer.streamed().orElseThrow().write(written);

    assertThat(answer.body()).isEmpty();
    assertThat(written.toString(UTF_8)).isEqualTo("data: 1\n\n");
    assertThat(Route.Answer.json("{}").streamed()).isEmpty();
  }
}
