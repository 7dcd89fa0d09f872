package dev.toolhost.core.spi;

/**
 * A host extension exception says which extension failed to start, or failed when its host was
 * ready; its cause is the extension's own failure.
 */
public final class HostExtensionException extends RuntimeException {

  private static final long serialVersionUID = 1L;

  HostExtensionException(String message, Throwable cause) {
    super(message, cause);
  }
}
