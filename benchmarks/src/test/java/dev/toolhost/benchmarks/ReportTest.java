package dev.toolhost.benchmarks;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import org.junit.jupiter.api.Test;

class ReportTest {

  @Test
  void bandAndMedianBelowTheTargetIsMet() {
    assertThat(Report.verdict(1.5, 0.2, 1.6)).isEqualTo("met");
  }

  @Test
  void bandAndMedianAboveTheTargetIsNotMet() {
    assertThat(Report.verdict(90.0, 18.0, 91.0)).isEqualTo("NOT met");
  }

  @Test
  void aBandAcrossTheTargetLeansOnTheMedians() {
    assertThat(Report.verdict(2.1, 0.5, 2.4))
        .isEqualTo("probably NOT met (medians; the scores are too noisy)");
    assertThat(Report.verdict(2.1, 0.5, 1.9))
        .isEqualTo("probably met (medians; the scores are too noisy)");
  }

  @Test
  void aBandWreckedByOneIterationDoesNotOutvoteTheMedians() {
    // A real run: the 64-caller baseline had one iteration of 7.5 ms against a median of 105 µs.
    assertThat(Report.verdict(0.09, 0.473, 5.94))
        .isEqualTo("probably NOT met (medians; the scores are too noisy)");
  }

  @Test
  void noErrorBandLeansOnTheMedians() {
    assertThat(Report.verdict(1.5, Double.NaN, 1.5))
        .isEqualTo("probably met (medians; the scores are too noisy)");
  }

  @Test
  void theSdkShareIsWhatTracingAddsInRawBaselines() {
    // A run of 2026-11-23: traced 1.051 µs, no-op 0.619 µs, raw 0.450 µs.
    assertThat(Report.sdkShare(1.051, 0.619, 0.450)).isCloseTo(0.96, within(0.005));
  }
}
