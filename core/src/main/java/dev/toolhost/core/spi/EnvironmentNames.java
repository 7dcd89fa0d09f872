package dev.toolhost.core.spi;

import java.util.regex.Pattern;

/**
 * Environment names are the rules every extension applies to the names of environment variables:
 * which names a config may give (a key's variable, a variable passed through) and which names say
 * that a variable holds a secret, so that its value is kept from results, logs and child processes.
 * Written once here so that the secrets extension and the sandbox agree on what a secret is.
 */
public final class EnvironmentNames {

  private static final Pattern NAME = Pattern.compile("[A-Za-z_][A-Za-z0-9_]*");

  private static final Pattern SECRET =
      Pattern.compile("(?i).*(KEY|SECRET|TOKEN|PASSWORD|PASSWD|CREDENTIAL).*");

  private EnvironmentNames() {}

  /** Whether the text is a portable variable name: a letter or '_', then letters, digits, '_'. */
  public static boolean isName(String name) {
    return name != null && NAME.matcher(name).matches();
  }

  /** Whether the name says its variable holds a secret (KEY, SECRET, TOKEN, PASSWORD, ...). */
  public static boolean holdsSecret(String name) {
    return SECRET.matcher(name).matches();
  }
}
