package dev.toolhost.core.spi;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

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
}
