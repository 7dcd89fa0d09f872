package dev.toolhost.agent;

import static org.assertj.core.api.Assertions.assertThat;

import dev.toolhost.core.ToolCall;
import dev.toolhost.core.ToolDispatcher;
import dev.toolhost.core.ToolProfiles;
import dev.toolhost.core.ToolRegistry;
import dev.toolhost.core.ToolResult;
import dev.toolhost.core.ToolSet;
import dev.toolhost.memory.InProcessWorkingMemory;
import dev.toolhost.memory.WorkingMemory;
import java.util.Optional;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A board is its user's and its session's, whatever session id an entry point gives a call: two
 * users of one session id, and a call of no user whose session id names a user, reach three boards.
 */
@Timeout(30)
class OwnedWhiteboardsTest {

  private final WorkingMemory memory = new InProcessWorkingMemory();
  private final ToolRegistry registry = new ToolRegistry();
  private final ToolDispatcher dispatcher = ToolDispatcher.create();

  OwnedWhiteboardsTest() {
    registry.registerAll(new Whiteboard(memory, session -> Optional.empty()).tools());
  }

  @AfterEach
  void close() {
    memory.close();
  }

  private ToolResult call(Optional<String> user, String session, String tool, String arguments) {
    ToolCall call = ToolCall.of(tool, arguments).withSessionId(session);
    return dispatcher.dispatch(
        ToolSet.of(registry, ToolProfiles.MAIN), user.map(call::withUser).orElse(call));
  }

  @Test
  void twoUsersOfOneSessionIdAndACallOfNoUserReachThreeBoards() {
    ToolResult written =
        call(
            Optional.of("alice"),
            "s-1",
            "whiteboard_write",
            "{\"key\": \"plan\", \"text\": \"alice's plan\"}");

    ToolResult alices = call(Optional.of("alice"), "s-1", "whiteboard_read", "{}");
    ToolResult bobs = call(Optional.of("bob"), "s-1", "whiteboard_read", "{}");
    ToolResult bobsKey = call(Optional.of("bob"), "s-1", "whiteboard_read", "{\"key\": \"plan\"}");
    // A call of no user in a session that names alice's, as a careless entry point might make.
    ToolResult noUsers = call(Optional.empty(), "alice", "whiteboard_read", "{}");
    ToolResult noUsersOfTheSameId = call(Optional.empty(), "s-1", "whiteboard_read", "{}");

    assertThat(written.isError()).as(written.text()).isFalse();
    assertThat(alices.text()).contains("alice's plan");
    assertThat(bobs.text()).isEqualTo("The whiteboard is empty.");
    assertThat(bobsKey.isError()).isTrue();
    assertThat(bobsKey.text()).contains("has no key 'plan'");
    assertThat(noUsers.text()).isEqualTo("The whiteboard is empty.");
    assertThat(noUsersOfTheSameId.text()).isEqualTo("The whiteboard is empty.");
  }
}
