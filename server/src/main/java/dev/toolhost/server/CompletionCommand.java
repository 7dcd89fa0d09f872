package dev.toolhost.server;

import java.util.concurrent.Callable;
import picocli.AutoComplete;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/**
 * The completion command prints a shell completion script for {@code toolhost}, picocli's own,
 * generated from the command line itself so it cannot drift: {@code source <(toolhost completion
 * bash)}. zsh runs the same script through its bash compatibility.
 */
@Command(
    name = "completion",
    mixinStandardHelpOptions = true,
    description = {
      "Prints a shell completion script: source <(toolhost completion bash).",
      "zsh: source <(toolhost completion zsh)."
    })
final class CompletionCommand implements Callable<Integer> {

  /** The shells a script is printed for. */
  enum Shell {
    bash,
    zsh
  }

  @Spec private CommandSpec spec;

  @Parameters(paramLabel = "SHELL", description = "bash or zsh.")
  private Shell shell;

  @Override
  public Integer call() {
    String script = AutoComplete.bash("toolhost", spec.root().commandLine());
    if (shell == Shell.zsh) {
      script =
          "autoload -U +X compinit && compinit\nautoload -U +X bashcompinit && bashcompinit\n"
              + script;
    }
    spec.commandLine().getOut().print(script);
    spec.commandLine().getOut().flush();
    return CommandLine.ExitCode.OK;
  }
}
