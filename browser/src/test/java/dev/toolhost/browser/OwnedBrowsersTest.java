package dev.toolhost.browser;

import static org.assertj.core.api.Assertions.assertThat;

import dev.toolhost.core.ToolCall;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * A browser is its user's and its session's: the key a call reaches its browser by differs for two
 * users of one session id, and no session id of a call without a user is a user's key. (Over a real
 * Chromium and two principals: {@code OwnedResourcesTest} in the server module.)
 */
class OwnedBrowsersTest {

  private static ToolCall call(String user, String session) {
    ToolCall call = ToolCall.of(BrowserTool.NAME, "{}");
    call = session == null ? call : call.withSessionId(session);
    return user == null ? call : call.withUser(user);
  }

  @Test
  void everyOwnerOfASessionIdHasABrowserOfItsOwn() {
    List<ToolCall> calls =
        List.of(
            call("alice", "s-1"),
            call("bob", "s-1"),
            call("alice", null),
            call("bob", null),
            call(null, "s-1"),
            call(null, null),
            // Session ids that spell out another owner's key.
            call(null, "alice/s-1"),
            call("alice/s-1", null),
            call("alice", "s-1/x"),
            call("alice/s-1", "x"));
    Set<String> keys = new HashSet<>();
    for (ToolCall each : calls) {
      keys.add(BrowserTool.owner(each));
    }

    assertThat(keys).hasSize(calls.size());
    assertThat(BrowserTool.owner(call("alice", "s-1"))).isEqualTo("alice/s-1");
    assertThat(BrowserTool.owner(call(null, "s-1"))).isEqualTo("s-1");
  }
}
