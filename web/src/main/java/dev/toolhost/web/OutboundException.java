package dev.toolhost.web;

import java.util.Objects;

/**
 * An outbound exception is a fetch that did not happen or did not finish: a URL or address the
 * policy refuses, a server that cannot be reached, a time or size cap reached. Its message names
 * what was wrong in words a model can act on.
 */
public final class OutboundException extends RuntimeException {

  private static final long serialVersionUID = 1L;

  /** Why a fetch failed. */
  public enum Reason {
    /** The URL is not one that can be fetched (not http or https, no host, credentials in it). */
    BAD_URL,
    /** The policy refuses the address the host resolves to. */
    REFUSED,
    /** More redirects than the policy allows. */
    TOO_MANY_REDIRECTS,
    /** The body is longer than the policy's cap. */
    TOO_LARGE,
    /** The fetch took longer than the policy's time cap. */
    TIMEOUT,
    /** The host does not resolve, refuses the connection, or the exchange broke. */
    UNREACHABLE
  }

  private final Reason reason;

  /** An exception for the given reason, with a message that says what was wrong. */
  public OutboundException(Reason reason, String message) {
    super(message);
    this.reason = Objects.requireNonNull(reason, "reason");
  }

  /** An exception for the given reason, with its cause. */
  public OutboundException(Reason reason, String message, Throwable cause) {
    super(message, cause);
    this.reason = Objects.requireNonNull(reason, "reason");
  }

  /** Why the fetch failed. */
  public Reason reason() {
    return reason;
  }

  /** Whether the model asked for something refused, rather than the network failing it. */
  public boolean refused() {
    return reason == Reason.BAD_URL
        || reason == Reason.REFUSED
        || reason == Reason.TOO_MANY_REDIRECTS;
  }
}
