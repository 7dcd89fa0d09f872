package dev.toolhost.core.spi;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import org.junit.jupiter.api.Test;

class DurationsTest {

  @Test
  void everyUnitAndABareNumberOfSecondsAndIsoReadAsTheySay() {
    assertThat(Durations.parse("500ms")).contains(Duration.ofMillis(500));
    assertThat(Durations.parse("30")).contains(Duration.ofSeconds(30));
    assertThat(Durations.parse(" 30s ")).contains(Duration.ofSeconds(30));
    assertThat(Durations.parse("2m")).contains(Duration.ofMinutes(2));
    assertThat(Durations.parse("1H")).contains(Duration.ofHours(1));
    assertThat(Durations.parse("30d")).contains(Duration.ofDays(30));
    assertThat(Durations.parse("PT1M30S")).contains(Duration.ofSeconds(90));
  }

  @Test
  void zeroNegativeMalformedAndTooLargeAreNoDuration() {
    assertThat(Durations.parse("0s")).isEmpty();
    assertThat(Durations.parse("-PT1S")).isEmpty();
    assertThat(Durations.parse("30 days")).isEmpty();
    assertThat(Durations.parse("1w")).isEmpty();
    assertThat(Durations.parse("99999999999999999999d")).isEmpty();
    assertThat(Durations.parse("9999999999999999d")).isEmpty();
    assertThat(Durations.parse(null)).isEmpty();
  }
}
