package dev.toolhost.exec;

import static org.assertj.core.api.Assertions.assertThat;

import dev.toolhost.core.MethodTools;
import dev.toolhost.core.ToolCall;
import dev.toolhost.core.ToolDispatcher;
import dev.toolhost.core.ToolProfiles;
import dev.toolhost.core.ToolRegistry;
import dev.toolhost.core.ToolResult;
import dev.toolhost.core.ToolSet;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A workspace is its user's and its session's, whatever session id an entry point gives a call: a
 * file alice writes is not in bob's workspace of the same session id, nor in the workspace of a
 * call of no user, nor in one a session id can name.
 */
@Timeout(60)
class OwnedWorkspacesTest {

  @RegisterExtension static final ExecFixture fixture = ExecFixture.create();

  private final ToolDispatcher dispatcher = ToolDispatcher.create();

  private ToolResult file(Optional<String> user, Optional<String> session, String arguments) {
    ToolRegistry registry = new ToolRegistry();
    registry.registerAll(
        MethodTools.of(new ExecTools(fixture.sandbox, fixture.workspaces), ExecTools.SOURCE));
    ToolCall call = ToolCall.of("file", arguments);
    call = session.map(call::withSessionId).orElse(call);
    call = user.map(call::withUser).orElse(call);
    return dispatcher.dispatch(ToolSet.of(registry, ToolProfiles.MAIN), call);
  }

  @Test
  void aFileAliceWritesIsInNoOtherOwnersWorkspace() {
    String write = "{\"operation\": \"write\", \"path\": \"plan.txt\", \"content\": \"hers\"}";
    String read = "{\"operation\": \"read\", \"path\": \"plan.txt\"}";
    Optional<String> alice = Optional.of("alice");

    ToolResult written = file(alice, Optional.of("s-1"), write);
    ToolResult writtenWithoutSession = file(alice, Optional.empty(), write);

    assertThat(written.isError()).as(written.text()).isFalse();
    assertThat(writtenWithoutSession.isError()).as(writtenWithoutSession.text()).isFalse();
    assertThat(file(alice, Optional.of("s-1"), read).text()).contains("hers");
    for (ToolResult other :
        List.of(
            file(Optional.of("bob"), Optional.of("s-1"), read),
            file(Optional.of("bob"), Optional.empty(), read),
            file(Optional.empty(), Optional.of("s-1"), read),
            file(Optional.empty(), Optional.empty(), read),
            file(Optional.empty(), Optional.of("alice"), read))) {
      assertThat(other.isError()).as(other.text()).isTrue();
      assertThat(other.text()).doesNotContain("hers");
    }
  }

  @Test
  void noSessionIdNamesAUsersWorkspace() {
    String alices = Workspaces.name(Optional.of("alice"), Optional.of("s-1"));

    assertThat(alices).startsWith("_u-");
    assertThat(alices).isNotEqualTo(Workspaces.name(Optional.of("bob"), Optional.of("s-1")));
    assertThat(alices).isNotEqualTo(Workspaces.name(Optional.of("alice"), Optional.of("s-2")));
    // The names a call of no user reaches: its plain session id, or a hash after 's-'.
    assertThat(Workspaces.name(Optional.empty(), Optional.of(alices))).isNotEqualTo(alices);
    assertThat(Workspaces.name(Optional.empty(), Optional.of("alice/s-1"))).startsWith("s-");
  }
}
