package dev.toolhost.core.spi;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.entry;

import dev.toolhost.core.ApiError;
import org.junit.jupiter.api.Test;

/** Exact paths and templates with variable segments. */
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
  void aTemplateWithTwoVariablesGivesEachByName() {
    Route route = new Route("GET", "/v1/agents/{name}/sessions/{id}/events", OK);

    assertThat(route.variables("/v1/agents/helper/sessions/s-1/events"))
        .hasValueSatisfying(
            values ->
                assertThat(values).containsExactly(entry("name", "helper"), entry("id", "s-1")));
    assertThat(route.variable("/v1/agents/helper/sessions/s-1/events")).contains("helper");
    assertThat(route.matches("/v1/agents/helper/sessions//events")).isFalse();
    assertThat(route.matches("/v1/agents/helper/sessions/s-1")).isFalse();
  }

  @Test
  void aPartialSegmentOrARepeatedVariableIsRefused() {
    assertThatThrownBy(() -> new Route("GET", "/v1/x{a}", OK))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("A route's variable is a whole segment such as {name}: /v1/x{a}");
    assertThatThrownBy(() -> new Route("GET", "/v1/{a", OK))
        .isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> new Route("GET", "/v1/{a}/{a}", OK))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("A route's variables have distinct names: /v1/{a}/{a}");
  }

  @Test
  void aRequestsHeadersAreFoundByNameInAnyCase() {
    Route.Request request =
        new Route.Request(
            "POST",
            "/a2a/x",
            java.util.Map.of(),
            new byte[0],
            java.util.Map.of("A2A-Version", java.util.List.of("1.0")));
    assertThat(request.header("a2a-version")).contains("1.0");
    assertThat(request.header("A2A-VERSION")).contains("1.0");
    assertThat(request.header("Accept")).isEmpty();
    assertThat(new Route.Request("GET", "/", java.util.Map.of(), new byte[0]).headers()).isEmpty();
  }

  @Test
  void aStreamedAnswerCarriesItsWriterAndNoBody() throws Exception {
    Route.Answer answer =
        Route.Answer.eventStream(
            out -> out.write("data: x\n\n".getBytes(java.nio.charset.StandardCharsets.UTF_8)));
    assertThat(answer.contentType()).isEqualTo("text/event-stream");
    assertThat(answer.body()).isEmpty();
    java.io.ByteArrayOutputStream written = new java.io.ByteArrayOutputStream();
    answer.stream().orElseThrow().write(written);
    assertThat(written.toString(java.nio.charset.StandardCharsets.UTF_8)).isEqualTo("data: x\n\n");
    assertThat(Route.Answer.json("{}").stream()).isEmpty();
  }

  @Test
  void anErrorAnswerHasItsErrorsStatusAndTheOneErrorBody() {
    Route.Answer answer = Route.Answer.error(ApiError.CONFLICT, "A turn is running.");
    assertThat(answer.status()).isEqualTo(409);
    assertThat(answer.contentType()).isEqualTo("application/json");
    assertThat(new String(answer.body(), java.nio.charset.StandardCharsets.UTF_8))
        .isEqualTo("{\"error\":{\"code\":\"conflict\",\"message\":\"A turn is running.\"}}");
  }
}
