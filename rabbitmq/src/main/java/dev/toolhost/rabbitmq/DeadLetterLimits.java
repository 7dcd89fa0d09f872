package dev.toolhost.rabbitmq;

import java.net.URI;
import java.time.Duration;
import java.util.Objects;
import java.util.Optional;

/**
 * Dead-letter limits are the bounds of the broker's dead-letter queue, {@code
 * toolhost.dead_letter}: at most so many messages and so many bytes, each kept at most so long;
 * past a bound the oldest letters go first, and each one dropped is logged by a host on the bus
 * with its call id and size.
 *
 * <p>They are set as a RabbitMQ policy named after the queue, over the broker's management HTTP
 * API, because a policy is the one way to bound a queue that already exists: every broker that ran
 * an earlier Toolhost has {@code toolhost.dead_letter} without arguments, and declaring it again
 * with {@code x-max-length} fails with {@code PRECONDITION_FAILED} (as would every other client's
 * plain declare of a queue that had them, workers in other languages included). A new queue name
 * with arguments would leave the old queue bound and growing, and unbinding it from under the hosts
 * that still read it breaks them. See {@code docs/wire-protocol.md}.
 *
 * @param maxLength the most letters the queue holds
 * @param maxBytes the most bytes of bodies the queue holds
 * @param ttl how long a letter is kept at most
 * @param management the management API, such as {@code http://broker:15672}; when empty, port 15672
 *     (15671 for amqps) of the broker's host, with the bus's user and password
 */
public record DeadLetterLimits(
    int maxLength, long maxBytes, Duration ttl, Optional<URI> management) {

  /**
   * 10 000 letters, 256 MiB (twice the broker's default largest message, so a letter the broker
   * accepts fits), 7 days.
   */
  public static final DeadLetterLimits DEFAULT =
      new DeadLetterLimits(10_000, 256L * 1024 * 1024, Duration.ofDays(7), Optional.empty());

  public DeadLetterLimits {
    Objects.requireNonNull(ttl, "ttl");
    Objects.requireNonNull(management, "management");
    if (maxLength < 1) {
      throw new IllegalArgumentException("maxLength must be 1 or more, not " + maxLength + ".");
    }
    if (maxBytes < 1) {
      throw new IllegalArgumentException("maxBytes must be 1 or more, not " + maxBytes + ".");
    }
    if (ttl.toMillis() < 1) {
      throw new IllegalArgumentException("ttl must be 1 ms or more, not " + ttl + ".");
    }
  }

  /** These limits with another management API. */
  public DeadLetterLimits withManagement(URI management) {
    return new DeadLetterLimits(maxLength, maxBytes, ttl, Optional.of(management));
  }
}
