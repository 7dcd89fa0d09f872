package dev.toolhost.exec;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

class OutputBufferTest {

  private static OutputBuffer of(int cap, byte[] bytes) {
    OutputBuffer buffer = new OutputBuffer(cap);
    buffer.write(bytes, 0, bytes.length);
    return buffer;
  }

  @Test
  void outputWithinTheCapIsKeptWhole() {
    OutputBuffer buffer = of(16, "hello\n".getBytes(StandardCharsets.UTF_8));

    assertThat(buffer.text()).isEqualTo("hello\n");
    assertThat(of(64, "one\nContinue? [y/n] ".getBytes(StandardCharsets.UTF_8)).lastLine())
        .isEqualTo("Continue? [y/n] ");
    assertThat(buffer.truncated()).isFalse();
    assertThat(buffer.total()).isEqualTo(6);
  }

  @Test
  void outputPastTheCapKeepsHeadAndTailAndSaysTheCut() {
    OutputBuffer buffer = of(8, "0123456789abcdef".getBytes(StandardCharsets.UTF_8));

    assertThat(buffer.text()).isEqualTo("0123\n[output truncated: 8 of 16 bytes]\ncdef");
    assertThat(buffer.truncated()).isTrue();
  }

  @Test
  void cutsFallOnCharacterBoundaries() {
    // "ééééé" is ten bytes; a head of 3 bytes holds one é and half of the next.
    OutputBuffer buffer = of(6, "ééééé".getBytes(StandardCharsets.UTF_8));

    assertThat(buffer.text()).isEqualTo("é\n[output truncated: 6 of 10 bytes]\né");
  }

  @Test
  void invalidBytesAreReplaced() {
    OutputBuffer buffer = of(64, new byte[] {'a', (byte) 0xff, 'b', (byte) 0xc3});

    assertThat(buffer.text()).isEqualTo("a\uFFFDb\uFFFD");
  }

  @Test
  void manySmallWritesKeepTheLatestTail() {
    OutputBuffer buffer = new OutputBuffer(8);
    for (char c = 'a'; c <= 'z'; c++) {
      buffer.write(new byte[] {(byte) c}, 0, 1);
    }

    assertThat(buffer.text()).isEqualTo("abcd\n[output truncated: 18 of 26 bytes]\nwxyz");
    assertThat(buffer.lastLine()).isEqualTo("wxyz");
  }
}
