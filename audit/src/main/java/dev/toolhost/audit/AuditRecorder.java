package dev.toolhost.audit;

import dev.toolhost.core.CallRecord;
import dev.toolhost.core.CallRecorder;
import dev.toolhost.core.ToolCall;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.security.InvalidKeyException;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.TimeUnit;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The audit recorder turns every call the dispatcher answers into an {@link AuditEntry} and hands
 * it to one writer thread, which appends them to the journal in batches: the call pays for a queue
 * offer, not for a write.
 *
 * <p>Nothing is dropped. When the journal cannot be written (a full disk, a database down), the
 * writer keeps its batch and tries again every {@link #RETRY}, logging the failure once per streak;
 * the queue holds {@link #CAPACITY} entries, and past that a call waits for room rather than lose
 * its line: a host whose journal is down slows to what it can record. On close, what is queued is
 * written before the journal closes.
 */
final class AuditRecorder implements CallRecorder, AutoCloseable {

  private static final Logger LOG = LoggerFactory.getLogger(AuditRecorder.class);

  /** How many entries wait for the writer at most. */
  static final int CAPACITY = 65_536;

  /** The most entries one append writes. */
  static final int BATCH = 1_024;

  /** How long the writer waits before it tries a failed batch again. */
  static final Duration RETRY = Duration.ofSeconds(1);

  /** How long close waits for the queue to be written. */
  static final Duration DRAIN = Duration.ofSeconds(10);

  // An entry before its digest, which the writer makes: one Mac, on one thread.
  private record Pending(AuditEntry entry, String arguments) {}

  private final Journal journal;
  private final Mac mac;
  private final BlockingQueue<Pending> queue = new ArrayBlockingQueue<>(CAPACITY);
  private final Thread writer;
  private volatile boolean closing;

  AuditRecorder(Journal journal) {
    this.journal = Objects.requireNonNull(journal, "journal");
    try {
      this.mac = Mac.getInstance("HmacSHA256");
      mac.init(new SecretKeySpec(journal.key(), "HmacSHA256"));
    } catch (NoSuchAlgorithmException | InvalidKeyException e) {
      throw new IllegalStateException("HmacSHA256 is part of every JDK", e);
    }
    this.writer = Thread.ofPlatform().name("toolhost-audit").daemon().start(this::write);
  }

  @Override
  public void record(CallRecord record) {
    ToolCall call = record.call();
    AuditEntry entry =
        new AuditEntry(
            record.at(),
            call.callId(),
            call.principal(),
            call.user(),
            record.profile(),
            call.sessionId(),
            call.agent(),
            call.toolName(),
            record.source(),
            record.outcome(),
            record.duration().toNanos() / 1_000,
            "");
    try {
      queue.put(new Pending(entry, call.arguments()));
    } catch (InterruptedException e) {
      // A cancelled caller still has its line: this thread waits no more, the entry is offered
      // once more, and the interruption stays for the caller to see.
      Thread.currentThread().interrupt();
      if (!queue.offer(new Pending(entry, call.arguments()))) {
        LOG.error("The audit journal is full and a cancelled call's entry was lost: {}", entry);
      }
    }
  }

  private void write() {
    List<Pending> taken = new ArrayList<>(BATCH);
    List<AuditEntry> batch = new ArrayList<>(BATCH);
    boolean failing = false;
    while (true) {
      try {
        if (batch.isEmpty()) {
          Pending first = queue.poll(100, TimeUnit.MILLISECONDS);
          if (first == null) {
            if (closing) {
              return;
            }
            continue;
          }
          taken.add(first);
          queue.drainTo(taken, BATCH - 1);
          for (Pending pending : taken) {
            batch.add(digested(pending));
          }
          taken.clear();
        }
        journal.append(batch);
        batch.clear();
        if (failing) {
          LOG.info("The audit journal is written again");
          failing = false;
        }
      } catch (IOException | RuntimeException e) {
        if (!failing) {
          LOG.error(
              "The audit journal could not be written; its {} entries are kept and tried again"
                  + " every {} s",
              batch.size(),
              RETRY.toSeconds(),
              e);
          failing = true;
        }
        if (closing) {
          LOG.error("The host closed with {} audit entries unwritten", batch.size() + queue.size());
          return;
        }
        try {
          Thread.sleep(RETRY);
        } catch (InterruptedException interrupted) {
          return;
        }
      } catch (InterruptedException e) {
        return;
      }
    }
  }

  private AuditEntry digested(Pending pending) {
    AuditEntry entry = pending.entry();
    String digest =
        "hmac-sha256:"
            + HexFormat.of()
                .formatHex(mac.doFinal(pending.arguments().getBytes(StandardCharsets.UTF_8)));
    return new AuditEntry(
        entry.at(),
        entry.callId(),
        entry.principal(),
        entry.user(),
        entry.profile(),
        entry.session(),
        entry.agent(),
        entry.tool(),
        entry.source(),
        entry.outcome(),
        entry.durationMicros(),
        digest);
  }

  /** Entries given to the recorder and not yet written: for tests that wait on the writer. */
  int pending() {
    return queue.size();
  }

  /** Writes what is queued (waiting up to {@link #DRAIN}), then closes the journal. */
  @Override
  public void close() throws IOException {
    closing = true;
    try {
      writer.join(DRAIN);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    if (writer.isAlive()) {
      LOG.error("The audit journal's writer did not finish within {} s", DRAIN.toSeconds());
      writer.interrupt();
    }
    journal.close();
  }
}
