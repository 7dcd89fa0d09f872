package dev.toolhost.bus;

import java.time.Instant;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;

/**
 * A message is one body of JSON text with the properties the bus carries beside it: headers, the
 * correlation id that ties a reply to its request, the address replies go to, and the instant after
 * which nobody wants it delivered.
 *
 * <p>Immutable. Header names and values are strings; names are lower_snake wire names. A bus
 * carries the correlation id and the expiry as its own properties; with {@code propertyHeaders}
 * they also travel as the headers {@code id} and {@code toolhost_expires_at}, TrustGraph's
 * convention, which tool services follow (their bodies carry no deadline). Toolhost's worker
 * requests and replies go without: the request's body has the deadline, and every header costs the
 * broker and both sides on every message.
 *
 * @param body the JSON text
 * @param headers string headers
 * @param correlationId ties replies to their request
 * @param replyTo the queue replies go to
 * @param expiration the instant after which the bus drops (dead-letters) the message undelivered
 * @param propertyHeaders whether the correlation id and expiry also travel as headers
 */
public record Message(
    String body,
    Map<String, String> headers,
    Optional<String> correlationId,
    Optional<String> replyTo,
    Optional<Instant> expiration,
    boolean propertyHeaders) {

  /** The header that carries the correlation id again, in TrustGraph's convention. */
  public static final String ID_HEADER = "id";

  /** The header that carries the expiry, in epoch milliseconds. */
  public static final String EXPIRES_AT_HEADER = "toolhost_expires_at";

  public Message {
    Objects.requireNonNull(body, "body");
    headers = Map.copyOf(headers);
    Objects.requireNonNull(correlationId, "correlationId");
    Objects.requireNonNull(replyTo, "replyTo");
    Objects.requireNonNull(expiration, "expiration");
  }

  /** A message with only a body. */
  public static Message of(String body) {
    return new Message(body, Map.of(), Optional.empty(), Optional.empty(), Optional.empty(), false);
  }

  /** This message with other headers. */
  public Message withHeaders(Map<String, String> headers) {
    return new Message(body, headers, correlationId, replyTo, expiration, propertyHeaders);
  }

  /** This message with a correlation id. */
  public Message withCorrelationId(String correlationId) {
    return new Message(
        body, headers, Optional.of(correlationId), replyTo, expiration, propertyHeaders);
  }

  /** This message with a reply-to address. */
  public Message withReplyTo(String replyTo) {
    return new Message(
        body, headers, correlationId, Optional.of(replyTo), expiration, propertyHeaders);
  }

  /** This message, expiring at the given instant. */
  public Message withExpiration(Instant expiration) {
    return new Message(
        body, headers, correlationId, replyTo, Optional.of(expiration), propertyHeaders);
  }

  /**
   * This message with its correlation id and expiry also carried as the headers {@code id} and
   * {@code toolhost_expires_at}, as tool services expect.
   */
  public Message withPropertyHeaders() {
    return new Message(body, headers, correlationId, replyTo, expiration, true);
  }

  /**
   * Whether the body is larger than the given number of bytes as UTF-8. Counts the bytes only when
   * the body's length leaves it in doubt (a char is one to three bytes, a surrogate pair four).
   */
  public boolean largerThan(long bytes) {
    if (body.length() > bytes) {
      return true;
    }
    return body.length() * 3L > bytes && size() > bytes;
  }

  /**
   * Checks that the body fits a bus's largest message; every bus checks before anything else
   * (RabbitMQ's checks the encoded bytes again when it publishes).
   *
   * @param where the queue or topic the message is going to, which the exception names
   * @throws MessageTooLargeException when the body is larger than the limit
   */
  public void checkSize(String where, long maxMessageSize) {
    if (largerThan(maxMessageSize)) {
      throw new MessageTooLargeException(where, size(), maxMessageSize);
    }
  }

  /** The body's size in bytes as UTF-8, counted without encoding it. */
  public long size() {
    long size = 0;
    for (int i = 0; i < body.length(); i++) {
      char c = body.charAt(i);
      if (c < 0x80) {
        size += 1;
      } else if (c < 0x800) {
        size += 2;
      } else if (Character.isHighSurrogate(c)
          && i + 1 < body.length()
          && Character.isLowSurrogate(body.charAt(i + 1))) {
        size += 4;
        i++;
      } else {
        // A lone surrogate is encoded as '?', one byte; every other char as three.
        size += Character.isSurrogate(c) ? 1 : 3;
      }
    }
    return size;
  }

  /** Whether the message expired before the given instant. */
  public boolean expiredAt(Instant now) {
    return expiration.isPresent() && !expiration.get().isAfter(now);
  }
}
