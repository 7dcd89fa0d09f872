package dev.toolhost.core.spi;

/**
 * A config exception is a host configuration that cannot be used: a config file that is missing, is
 * not YAML, has an unknown key or a value of the wrong type, or says something impossible (a port
 * out of range, a profile extending one that does not exist), or a listen address that needs a
 * token and has none.
 *
 * <p>Its message is written for the operator and is complete on its own: it names the file, the
 * line and column, and what was expected. It never holds a secret such as the bearer token.
 */
public final class ConfigException extends RuntimeException {

  private static final long serialVersionUID = 1L;

  /** An exception with the given operator-facing message. */
  public ConfigException(String message) {
    super(message);
  }
}
