package dev.toolhost.exec;

import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.CharBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CharsetDecoder;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;

/**
 * An output buffer is one stream of a child process (its stdout or its stderr) held within a cap:
 * the first half of the cap and the last half, with a count of every byte the stream wrote. A
 * stream past the cap is read to its end all the same (drained), so that a flood such as {@code
 * yes} never blocks its writer on a full pipe nor grows the host's memory.
 *
 * <p>{@link #text()} decodes what was kept as UTF-8, replacing invalid bytes with U+FFFD, and cuts
 * the head and the tail on character boundaries, with the cut said between them: {@code [output
 * truncated: N of M bytes]}, where N bytes of the M written are left out.
 *
 * <p>One thread writes (the reader of the stream); any thread may read the counters and the text,
 * which are consistent under the buffer's lock.
 */
final class OutputBuffer {

  private final int half;
  private final byte[] head;
  private final byte[] tail;
  private int headLength;
  // The tail is a ring: tailStart is the oldest byte, tailLength how many are held.
  private int tailStart;
  private int tailLength;
  private long total;
  private volatile long lastWriteNanos = System.nanoTime();

  /** A buffer that keeps at most {@code cap} bytes (half from the start, half from the end). */
  OutputBuffer(int cap) {
    if (cap < 2) {
      throw new IllegalArgumentException("An output cap must be at least 2 bytes, not " + cap);
    }
    this.half = cap / 2;
    this.head = new byte[half];
    this.tail = new byte[cap - half];
  }

  /** Reads the stream to its end into this buffer; returns when the stream ends or fails. */
  void drain(InputStream in) {
    byte[] chunk = new byte[8192];
    try (in) {
      int read;
      while ((read = in.read(chunk)) >= 0) {
        write(chunk, 0, read);
      }
    } catch (IOException e) {
      // The stream closed under the reader (the process was killed, or its pipe closed): what was
      // read is what there is.
    }
  }

  /** Adds bytes the stream wrote. */
  synchronized void write(byte[] bytes, int offset, int length) {
    lastWriteNanos = System.nanoTime();
    total += length;
    int toHead = Math.min(length, head.length - headLength);
    System.arraycopy(bytes, offset, head, headLength, toHead);
    headLength += toHead;
    int rest = length - toHead;
    if (rest >= tail.length) {
      System.arraycopy(bytes, offset + length - tail.length, tail, 0, tail.length);
      tailStart = 0;
      tailLength = tail.length;
      return;
    }
    for (int i = offset + toHead; i < offset + length; i++) {
      if (tailLength < tail.length) {
        tail[(tailStart + tailLength) % tail.length] = bytes[i];
        tailLength++;
      } else {
        tail[tailStart] = bytes[i];
        tailStart = (tailStart + 1) % tail.length;
      }
    }
  }

  /** Every byte the stream wrote, kept or not. */
  synchronized long total() {
    return total;
  }

  /** Whether bytes were left out. */
  synchronized boolean truncated() {
    return total > headLength + tailLength;
  }

  /**
   * When the stream last wrote, by {@link System#nanoTime()}; when the buffer was made if never.
   */
  long lastWriteNanos() {
    return lastWriteNanos;
  }

  /** The last line the stream wrote so far (at most 200 bytes of it), decoded leniently. */
  synchronized String lastLine() {
    // The last bytes written: the tail's, preceded by the head's while nothing lies between.
    byte[] tailBytes = keptTail();
    int fromHead = truncated() ? 0 : Math.min(headLength, Math.max(0, 200 - tailBytes.length));
    byte[] kept = new byte[fromHead + tailBytes.length];
    System.arraycopy(head, headLength - fromHead, kept, 0, fromHead);
    System.arraycopy(tailBytes, 0, kept, fromHead, tailBytes.length);
    int from = Math.max(0, kept.length - 200);
    for (int i = kept.length - 1; i >= from; i--) {
      if (kept[i] == '\n') {
        from = i + 1;
        break;
      }
    }
    return decode(kept, from, kept.length);
  }

  /** What the stream wrote, as text: whole when within the cap, else head, the cut, and tail. */
  synchronized String text() {
    if (!truncated()) {
      byte[] all = new byte[headLength + tailLength];
      System.arraycopy(head, 0, all, 0, headLength);
      System.arraycopy(keptTail(), 0, all, headLength, tailLength);
      return decode(all, 0, all.length);
    }
    // Cut the head before a character that does not fit whole, and start the tail after the
    // continuation bytes of a character that began before it.
    int headEnd = boundaryBefore(head, headLength);
    byte[] kept = keptTail();
    int tailFrom = 0;
    while (tailFrom < kept.length && tailFrom < 3 && isContinuation(kept[tailFrom])) {
      tailFrom++;
    }
    long shown = headEnd + (long) (kept.length - tailFrom);
    return decode(head, 0, headEnd)
        + "\n[output truncated: "
        + (total - shown)
        + " of "
        + total
        + " bytes]\n"
        + decode(kept, tailFrom, kept.length);
  }

  private byte[] keptTail() {
    byte[] kept = new byte[tailLength];
    for (int i = 0; i < tailLength; i++) {
      kept[i] = tail[(tailStart + i) % tail.length];
    }
    return kept;
  }

  /** The end of the last whole UTF-8 character within the first {@code length} bytes. */
  static int boundaryBefore(byte[] bytes, int length) {
    // Walk back over at most three continuation bytes to the lead byte of the last character.
    int lead = length - 1;
    while (lead >= 0 && length - lead <= 4 && isContinuation(bytes[lead])) {
      lead--;
    }
    if (lead < 0 || length - lead > 4) {
      return length;
    }
    int need = sequenceLength(bytes[lead]);
    // A lead whose sequence runs past the end is cut off; anything else (ASCII, invalid bytes that
    // the decoder replaces anyway) stays.
    return need > 1 && lead + need > length ? lead : length;
  }

  private static boolean isContinuation(byte b) {
    return (b & 0xC0) == 0x80;
  }

  private static int sequenceLength(byte lead) {
    int b = lead & 0xFF;
    if (b >= 0xF0 && b <= 0xF4) {
      return 4;
    }
    if (b >= 0xE0) {
      return b <= 0xEF ? 3 : 1;
    }
    if (b >= 0xC2) {
      return 2;
    }
    return 1;
  }

  /** UTF-8 with every invalid byte replaced by U+FFFD. */
  static String decode(byte[] bytes, int from, int to) {
    CharsetDecoder decoder =
        StandardCharsets.UTF_8
            .newDecoder()
            .onMalformedInput(CodingErrorAction.REPLACE)
            .onUnmappableCharacter(CodingErrorAction.REPLACE);
    try {
      CharBuffer chars = decoder.decode(ByteBuffer.wrap(bytes, from, to - from));
      return chars.toString();
    } catch (CharacterCodingException e) {
      throw new IllegalStateException("A replacing decoder cannot fail", e);
    }
  }
}
