package dev.toolhost.exec;

import dev.toolhost.core.ToolException;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;

/**
 * The child environment is the one way a sandboxed process gets its environment: never inherited,
 * built from a base ({@code PATH}, {@code HOME} as the workspace, the locale, {@code TMPDIR}), then
 * what the config passes through from the host, then what the call names; every added name checked
 * against a block list of variables that change how programs load or run.
 *
 * <p>The block list is matched without regard to letter case ({@code ld_preload} is refused as
 * {@code LD_PRELOAD} is): some programs read their variables case-insensitively, and a model that
 * tries the lower case is probing. A name that is empty or holds {@code =} or NUL is refused, since
 * it would be split differently by the kernel and by the program.
 */
final class ChildEnvironment {

  /** Names refused exactly (upper-cased). */
  static final List<String> BLOCKED =
      List.of(
          "PYTHONPATH",
          "PYTHONSTARTUP",
          "PYTHONHOME",
          "PYTHONINSPECT",
          "PYTHONUSERBASE",
          "PYTHONBREAKPOINT",
          "NODE_OPTIONS",
          "NODE_PATH",
          "RUBYOPT",
          "RUBYLIB",
          "PERL5OPT",
          "PERL5LIB",
          "PERLLIB",
          "PERL5DB",
          "BASH_ENV",
          "ENV",
          "SHELLOPTS",
          "BASHOPTS",
          "PS4",
          "PROMPT_COMMAND",
          "IFS",
          "CDPATH",
          "GLOBIGNORE",
          "JAVA_TOOL_OPTIONS",
          "_JAVA_OPTIONS",
          "JDK_JAVA_OPTIONS",
          "CLASSPATH",
          "GIT_SSH_COMMAND",
          "GIT_SSH",
          "GIT_EXEC_PATH",
          "GIT_TEMPLATE_DIR",
          "GIT_ASKPASS",
          "SSH_ASKPASS",
          "EDITOR",
          "VISUAL",
          "PAGER",
          "GCONV_PATH",
          "HOSTALIASES",
          "LOCALDOMAIN",
          "RES_OPTIONS",
          "MALLOC_CHECK_",
          "NLSPATH",
          "TMPDIR",
          "HOME",
          "PATH");

  /** Name prefixes refused (upper-cased). */
  static final List<String> BLOCKED_PREFIXES =
      List.of("LD_", "DYLD_", "BASH_FUNC_", "GIT_CONFIG", "GLIBC_TUNABLES", "MALLOC_");

  /** The search path every sandboxed process gets. */
  static final String PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

  private ChildEnvironment() {}

  /**
   * Why the name may not be set, if it may not: empty, holding {@code =} or NUL, or blocked. {@code
   * HOME}, {@code PATH} and {@code TMPDIR} are blocked as additions because the sandbox sets them
   * itself.
   */
  static Optional<String> refusal(String name) {
    if (name.isEmpty()) {
      return Optional.of("an environment variable name may not be empty");
    }
    if (name.indexOf('=') >= 0 || name.indexOf('\0') >= 0) {
      return Optional.of(
          "the environment variable name '"
              + name.replace("\0", "\\0")
              + "' holds '=' or NUL, which no variable name may");
    }
    String upper = name.toUpperCase(Locale.ROOT);
    if (BLOCKED.contains(upper) || BLOCKED_PREFIXES.stream().anyMatch(upper::startsWith)) {
      return Optional.of(
          "the environment variable '"
              + name
              + "' is blocked: it changes how programs load or run ("
              + "names such as LD_*, PYTHONPATH, NODE_OPTIONS, BASH_ENV are refused in any letter"
              + " case; PATH, HOME and TMPDIR are set by the sandbox)");
    }
    return Optional.empty();
  }

  /**
   * The environment of one sandboxed process.
   *
   * @param home the workspace, as the process sees it
   * @param passed variables the config passes through, already checked and taken from the host
   * @param added variables the call names
   * @param secrets the host's secret values, which no variable may carry
   * @throws ToolException as {@code invalid_arguments} for a refused name, or a value that holds
   *     NUL or one of the host's secrets
   */
  static Map<String, String> of(
      String home,
      Map<String, String> passed,
      Map<String, String> added,
      Collection<String> secrets) {
    Map<String, String> environment = new LinkedHashMap<>();
    environment.put("PATH", PATH);
    environment.put("HOME", home);
    environment.put("TMPDIR", "/tmp");
    environment.put("LANG", "C.UTF-8");
    environment.put("LC_ALL", "C.UTF-8");
    environment.putAll(passed);
    added.forEach(
        (name, value) -> {
          refusal(name)
              .ifPresent(
                  why -> {
                    throw ToolException.invalidArguments("Refused: " + why + ".");
                  });
          if (value.indexOf('\0') >= 0) {
            throw ToolException.invalidArguments(
                "Refused: the value of environment variable '" + name + "' holds a NUL byte.");
          }
          environment.put(name, value);
        });
    for (String secret : secrets) {
      if (secret.length() >= 4 && environment.values().stream().anyMatch(v -> v.contains(secret))) {
        throw ToolException.invalidArguments(
            "Refused: an environment variable would carry one of the host's secrets.");
      }
    }
    return environment;
  }
}
