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
  void everyReplyAWorkerWritesReadsBackTheSameInOnePassAsThroughATree() {
    List<ToolResult> results =
        List.of(
            ToolResult.success("plain \"quoted\" \u00e9 \ud83d\ude00 text\nwith lines"),
            ToolResult.success(""),
            ToolResult.failure(ErrorCode.TIMEOUT, "too slow"),
            ToolResult.failure(ErrorCode.INVALID_ARGUMENTS, ""),
            ToolResult.failure(ErrorCode.CANCELLED, "stopped"));
    for (ToolResult result : results) {
      String text = new InvokeReply("call_1", "echo", result).toJson();
      InvokeReply common = InvokeReply.parseCommon(text);
      assertThat(common).isNotNull().isEqualTo(InvokeReply.parseTree(text));
      assertThat(InvokeReply.parse(text).result()).isEqualTo(result);
    }
  }

  @Test
  void aReplyOfAnotherShapeIsReadAsATreeAsBefore() {
    List<String> odd =
        List.of(
            "{\"tool_call_id\":\"c\",\"content\":\"x\",\"is_error\":true}",
            "{\"tool_call_id\":\"c\",\"content\":\"x\",\"is_error\":\"true\"}",
            "{\"tool_call_id\":7,\"content\":\"x\",\"error\":\"broken\"}",
            "{\"content\":\"x\",\"error\":{\"code\":\"nonsense\",\"retryable\":false}}",
            "{\"content\":\"x\",\"error\":{\"code\":\"timeout\",\"detail\":\"secret\"}}",
            "{\"content\":\"a\",\"content\":\"b\"}",
            "{\"content\":\"x\",\"structured\":{\"n\":1}}",
            "{\"content\":\"x\",\"extra\":[1,{\"y\":null}]}",
            "{}");
    for (String text : odd) {
      InvokeReply common = InvokeReply.parseCommon(text);
      InvokeReply tree = InvokeReply.parseTree(text);
      if (common != null) {
        assertThat(common).as(text).isEqualTo(tree);
      }
      assertThat(InvokeReply.parse(text)).as(text).isEqualTo(tree);
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
