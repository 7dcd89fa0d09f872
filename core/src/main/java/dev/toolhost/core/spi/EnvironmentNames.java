package dev.toolhost.core.spi;

import java.util.Optional;
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

  /**
   * A config value read as the name of the variable that holds a secret: empty when absent; when it
   * is no name, a problem at the pointer that names the key as the file spells it ({@code
   * 'web.search.api_key_env' is 'sk-...' (expected the name of an environment variable, such as
   * BRAVE_API_KEY; the key itself never goes in the config)}), and empty.
   *
   * @param pointer the value's JSON pointer from the file's root, such as {@code
   *     /web/search/api_key_env}
   * @param example a name to show in the problem, if any
   * @param held what the variable holds, as the problem names it: key, secret, password, ...
   */
  public static Optional<String> read(
      String raw, String pointer, Optional<String> example, String held, ConfigProblems problems) {
    if (raw == null) {
      return Optional.empty();
    }
    if (!isName(raw)) {
      problems.atValue(
          pointer,
          "'"
              + ConfigProblems.dotted(pointer)
              + "' is '"
              + raw
              + "' (expected the name of an environment variable"
              + example.map(name -> ", such as " + name).orElse("")
              + "; the "
              + held
              + " itself never goes in the config)");
      return Optional.empty();
    }
    return Optional.of(raw);
  }

  /** Whether the name says its variable holds a secret (KEY, SECRET, TOKEN, PASSWORD, ...). */
  public static boolean holdsSecret(String name) {
    return SECRET.matcher(name).matches();
  }
}
