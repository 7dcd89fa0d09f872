package dev.toolhost.mcp;

import java.net.URI;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.regex.Pattern;

/**
 * Redaction is how a server's command line or URL is shown where it may be read by someone other
 * than the operator who wrote it (the log, the model through {@code mcp_get_service_details}): what
 * looks like a secret is replaced by {@code ***}, the rest is kept so that the server can still be
 * recognised.
 *
 * <p>A command line's argument is replaced when it follows an option whose name looks secret
 * ({@code --api-key X}, {@code --token X}, {@code --password X}), when it is the value of such an
 * option or key ({@code --api-key=X}, {@code API_KEY=X}), and when it looks like a key by itself (a
 * known prefix such as {@code sk-} or {@code ghp_}, or a long run of mixed letters and digits with
 * no path in it). Short options are kept: {@code -p} is a port as often as a password. A URL loses
 * its user information and the values of secret-looking query parameters. It is a heuristic for
 * showing, never a reason to put a secret on a command line: an environment variable ({@code env},
 * {@code pass_env}) is never shown.
 */
final class Redaction {

  /** What a redacted value is shown as. */
  static final String MASK = "***";

  // Words that make an option or key name secret-looking, matched in its lower-case name.
  private static final List<String> SECRET_WORDS =
      List.of(
          "key",
          "token",
          "secret",
          "password",
          "passwd",
          "passphrase",
          "pwd",
          "auth",
          "credential",
          "bearer",
          "cookie",
          "signature");
  private static final Pattern KNOWN_PREFIX =
      Pattern.compile(
          "(sk-|sk_|rk_|pk_live_|ghp_|gho_|ghu_|ghs_|ghr_|github_pat_|glpat-|xox[abposr]-|xapp-|"
              + "AKIA|ASIA|AIza|eyJ|hf_|npm_|pypi-|SG\\.|shpat_|dop_v1_).{8,}");
  private static final Pattern KEY_LIKE = Pattern.compile("[A-Za-z0-9_+=.~-]{24,}");

  private Redaction() {}

  /** The command line with secret-looking values replaced by {@link #MASK}. */
  static String commandLine(String command, List<String> arguments) {
    List<String> shown = new ArrayList<>(arguments.size() + 1);
    shown.add(command);
    boolean maskNext = false;
    for (String argument : arguments) {
      if (maskNext && !argument.startsWith("-")) {
        shown.add(MASK);
        maskNext = false;
        continue;
      }
      maskNext = false;
      int equals = argument.indexOf('=');
      if (equals > 0) {
        String name = argument.substring(0, equals);
        String value = argument.substring(equals + 1);
        shown.add(secretName(name) || looksLikeKey(value) ? name + "=" + MASK : argument);
      } else if (argument.startsWith("--") && secretName(argument)) {
        shown.add(argument);
        maskNext = true;
      } else if (looksLikeKey(argument)) {
        shown.add(MASK);
      } else {
        shown.add(argument);
      }
    }
    return String.join(" ", shown);
  }

  /** The URL without user information and with secret-looking query values replaced. */
  static String url(URI url) {
    StringBuilder shown = new StringBuilder();
    if (url.getScheme() != null) {
      shown.append(url.getScheme()).append("://");
    }
    if (url.getRawUserInfo() != null) {
      shown.append(MASK).append('@');
    }
    if (url.getHost() != null) {
      shown.append(url.getHost());
    }
    if (url.getPort() >= 0) {
      shown.append(':').append(url.getPort());
    }
    if (url.getRawPath() != null) {
      shown.append(url.getRawPath());
    }
    if (url.getRawQuery() != null) {
      List<String> parameters = new ArrayList<>();
      for (String parameter : url.getRawQuery().split("&", -1)) {
        int equals = parameter.indexOf('=');
        if (equals < 0) {
          parameters.add(looksLikeKey(parameter) ? MASK : parameter);
          continue;
        }
        String name = parameter.substring(0, equals);
        String value = parameter.substring(equals + 1);
        parameters.add(secretName(name) || looksLikeKey(value) ? name + "=" + MASK : parameter);
      }
      shown.append('?').append(String.join("&", parameters));
    }
    return shown.toString();
  }

  private static boolean secretName(String name) {
    String lower = name.toLowerCase(Locale.ROOT);
    for (String word : SECRET_WORDS) {
      if (lower.contains(word)) {
        return true;
      }
    }
    return false;
  }

  /**
   * Whether a value looks like a key: a known key prefix, or at least 24 characters of letters,
   * digits and {@code _+=.~-} (no path, no spaces) mixing upper case, lower case and digits.
   */
  static boolean looksLikeKey(String value) {
    if (KNOWN_PREFIX.matcher(value).matches()) {
      return true;
    }
    if (!KEY_LIKE.matcher(value).matches()) {
      return false;
    }
    boolean upper = false;
    boolean lower = false;
    boolean digit = false;
    for (int i = 0; i < value.length(); i++) {
      char c = value.charAt(i);
      upper |= Character.isUpperCase(c);
      lower |= Character.isLowerCase(c);
      digit |= Character.isDigit(c);
    }
    // Hex digests and UUIDs (lower case and digits, or upper case and digits) count too.
    return digit && (upper || lower) && (value.length() >= 32 || (upper && lower));
  }
}
