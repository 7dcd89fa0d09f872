package dev.toolhost.server;

import static org.assertj.core.api.Assertions.assertThat;

import dev.toolhost.core.ApiError;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/**
 * The table of HTTP errors in {@code docs/http-api.md} and the table the host answers from are one
 * table.
 */
class HttpErrorTableTest {

  private static final Pattern ROW = Pattern.compile("\\| (\\d{3}) \\| `([a-z_]+)` \\|.*");

  @Test
  void theReadmesTableListsExactlyTheApiErrorsWithTheirStatuses() throws IOException {
    Map<String, Integer> documented = readmeTable();
    Map<String, Integer> answered =
        Arrays.stream(ApiError.values())
            .collect(
                Collectors.toMap(
                    ApiError::wireName, ApiError::status, (a, b) -> a, LinkedHashMap::new));
    assertThat(documented).as("the HTTP errors of docs/http-api.md").isEqualTo(answered);
  }

  @Test
  void aStatusJettyRaisesIsAnsweredWithAnErrorOfThatStatus() {
    for (int status : new int[] {400, 401, 403, 404, 405, 406, 408, 413, 414, 415, 431, 500, 503}) {
      assertThat(ApiError.forStatus(status).status()).as("status %d", status).isEqualTo(status);
    }
    assertThat(ApiError.forStatus(418)).isEqualTo(ApiError.INVALID_REQUEST);
    assertThat(ApiError.forStatus(504)).isEqualTo(ApiError.INTERNAL_ERROR);
  }

  /** The rows of the table under "## HTTP errors" of docs/http-api.md: code to status, in order. */
  private static Map<String, Integer> readmeTable() throws IOException {
    String readme = Files.readString(Path.of("..", "docs", "http-api.md"));
    int section = readme.indexOf("\n## HTTP errors\n");
    assertThat(section).as("the section on HTTP errors of docs/http-api.md").isPositive();
    int next = readme.indexOf("\n#", section + 1);
    if (next < 0) {
      next = readme.length();
    }
    Map<String, Integer> rows = new LinkedHashMap<>();
    for (String line : readme.substring(section, next).lines().toList()) {
      Matcher row = ROW.matcher(line);
      if (row.matches()) {
        Integer earlier = rows.put(row.group(2), Integer.parseInt(row.group(1)));
        assertThat(earlier).as("code %s listed twice", row.group(2)).isNull();
      }
    }
    assertThat(rows).as("rows of the table").isNotEmpty();
    return rows;
  }
}
