package dev.toolhost.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import org.junit.jupiter.api.Test;

class ApiErrorTest {

  @Test
  void theBodyIsTheOneErrorObjectOfTheApi() {
    assertThat(ApiError.INVALID_REQUEST.body("'q' is required.").toString())
        .isEqualTo("{\"error\":{\"code\":\"invalid_request\",\"message\":\"'q' is required.\"}}");
    assertThat(new String(ApiError.NOT_FOUND.bytes("No route."), StandardCharsets.UTF_8))
        .isEqualTo("{\"error\":{\"code\":\"not_found\",\"message\":\"No route.\"}}");
  }

  @Test
  void aBodyWithoutAMessageCarriesTheDefaultMessage() {
    assertThat(ApiError.INTERNAL_ERROR.body().at("/error/message").asString())
        .isEqualTo(ApiError.INTERNAL_ERROR.defaultMessage());
  }

  @Test
  void wireNamesAreUniqueLowerSnakeAndStatusesAreErrors() {
    assertThat(Arrays.stream(ApiError.values()).map(ApiError::wireName))
        .doesNotHaveDuplicates()
        .allMatch(name -> name.matches("[a-z]+(_[a-z]+)*"));
    assertThat(Arrays.stream(ApiError.values()).mapToInt(ApiError::status))
        .allMatch(status -> status >= 400 && status < 600);
  }

  @Test
  void aWireNameFindsItsErrorAndAnUnknownOneIsNamed() {
    for (ApiError error : ApiError.values()) {
      assertThat(ApiError.fromWireName(error.wireName())).isSameAs(error);
    }
    assertThatThrownBy(() -> ApiError.fromWireName("bad_request"))
        .hasMessageContaining("'bad_request'");
  }
}
