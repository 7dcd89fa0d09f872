package dev.toolhost.bus;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.toolhost.core.ErrorCode;
import dev.toolhost.core.ToolResult;
import java.util.List;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.json.JsonMapper;

class InvokeReplyTest {

  @Test
  void everyReplyAWorkerWritesReadsBackAsTheResultItWasWrittenFrom() {
    List<ToolResult> results =
        List.of(
            ToolResult.success("plain \"quoted\" \u00e9 \ud83d\ude00 text\nwith lines"),
            ToolResult.success(""),
            ToolResult.failure(ErrorCode.TIMEOUT, "too slow"),
            ToolResult.failure(ErrorCode.INVALID_ARGUMENTS, ""),
            ToolResult.failure(ErrorCode.CANCELLED, "stopped"));
    for (ToolResult result : results) {
      InvokeReply read = InvokeReply.parse(new InvokeReply("call_1", "echo", result).toJson());
      assertThat(read).isEqualTo(new InvokeReply("call_1", "echo", result));
    }
  }

  @Test
  void structuredContentTravelsAsATree() {
    ToolResult result =
        ToolResult.success("x", JsonMapper.shared().readTree("{\"n\":[1,2],\"s\":\"t\"}"));
    assertThat(InvokeReply.parse(new InvokeReply("c", "t", result).toJson()).result())
        .isEqualTo(result);
  }

  @Test
  void textThatIsNotAReplyIsRefusedSayingWhy() {
    assertThatThrownBy(() -> InvokeReply.parse("[1]")).hasMessageContaining("not a JSON object");
    assertThatThrownBy(() -> InvokeReply.parse("{\"content\":")).hasMessageContaining("not valid");
  }
}
