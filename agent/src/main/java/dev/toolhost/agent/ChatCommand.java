package dev.toolhost.agent;

import dev.toolhost.core.Redactor;
import dev.toolhost.core.ToolCall;
import dev.toolhost.core.ToolResult;
import dev.toolhost.core.spi.CommandContext;
import dev.toolhost.core.spi.RunningHost;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.PrintWriter;
import java.lang.reflect.Proxy;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.Callable;
import java.util.concurrent.atomic.AtomicReference;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * The chat command is a terminal conversation with an agent: the model's text streams as it comes,
 * each tool call and its result are shown as they happen, and Ctrl-C cancels the turn, not the
 * program. Each turn the model has the channel tools ({@link ChannelTurn}): its {@code reply}
 * messages, its reactions to the user's line and a {@code skip} are shown as they happen.
 *
 * <p>The agent comes from the config's {@code agents:} section ({@code --agent}, or the first), or,
 * with {@code --model} (and {@code --base-url}, {@code --api-key-env}), from the command line with
 * the {@code main} profile and no config file needed; the config's agents are then its specialists.
 * When standard input is not a terminal it reads one user message per line and exits at the end of
 * input (exit 1 if any turn failed), so that it can be scripted.
 */
@Command(
    name = "chat",
    mixinStandardHelpOptions = true,
    description = "Talks with an agent in the terminal; Ctrl-C cancels the turn.")
public final class ChatCommand implements Callable<Integer> {

  private static final int RESULT_PREVIEW = 200;

  @Spec private CommandSpec spec;

  @Option(
      names = "--agent",
      paramLabel = "NAME",
      description = "The agent to talk to, from the config (default: the first).")
  private Optional<String> agentName = Optional.empty();

  @Option(
      names = "--model",
      paramLabel = "MODEL",
      description = "Talk to this model directly, with the main profile's tools.")
  private Optional<String> model = Optional.empty();

  @Option(
      names = "--base-url",
      paramLabel = "URL",
      description = "The OpenAI-compatible base URL (default: https://api.openai.com/v1).")
  private Optional<URI> baseUrl = Optional.empty();

  @Option(
      names = "--api-key-env",
      paramLabel = "VAR",
      defaultValue = ModelEndpoint.DEFAULT_API_KEY_ENV,
      description = "The environment variable holding the API key (default: ${DEFAULT-VALUE}).")
  private String apiKeyEnv;

  @Option(
      names = "--instructions",
      paramLabel = "TEXT",
      description = "The system prompt, with --model.")
  private Optional<String> instructions = Optional.empty();

  private final CommandContext context;
  private final InputStream in;
  private final boolean interactive;

  /**
   * The command reading user messages from the given input, one per line when not interactive.
   *
   * @param interactive whether the input is a terminal: a prompt is shown and Ctrl-C cancels a turn
   */
  public ChatCommand(CommandContext context, InputStream in, boolean interactive) {
    this.context = context;
    this.in = in;
    this.interactive = interactive;
  }

  @Override
  public Integer call() throws IOException {
    PrintWriter out = spec.commandLine().getOut();
    PrintWriter err = spec.commandLine().getErr();
    // The file's agents, read again from its checked section, with --model's in front.
    List<AgentDefinition> definitions =
        new ArrayList<>(
            context.section(new AgentsExtension()).map(AgentsConfig::agents).orElse(List.of()));
    String name;
    if (model.isPresent()) {
      name = "chat";
      definitions.removeIf(definition -> definition.name().equals(name));
      definitions.addFirst(
          AgentDefinition.of(
                  name,
                  new ModelEndpoint(
                      baseUrl.orElse(ModelEndpoint.DEFAULT_BASE_URL), model.get(), apiKeyEnv))
              .withInstructions(
                  instructions.orElse("You are a helpful assistant. Use tools when they help.")));
    } else if (baseUrl.isPresent()) {
      err.println("--base-url needs --model (the model to talk to at that URL).");
      return CommandLine.ExitCode.USAGE;
    } else if (definitions.isEmpty()) {
      err.println(
          "No agent to talk to: give --model (and --base-url, --api-key-env), or a --config file"
              + " with an 'agents:' section.");
      return CommandLine.ExitCode.USAGE;
    } else {
      name = agentName.orElse(definitions.getFirst().name());
    }
    try (RunningHost host = context.open(new AgentsExtension(), new AgentsConfig(definitions))) {
      Agents agents = host.service(Agents.class).orElseThrow();
      // The model's tool-call arguments are shown redacted: a model may put a secret in them.
      Redactor redactor = host.service(Redactor.class).orElse(Redactor.NONE);
      Agent agent;
      try {
        agent = agents.agent(name);
      } catch (IllegalArgumentException e) {
        err.println(e.getMessage());
        return CommandLine.ExitCode.USAGE;
      }
      Conversation conversation = agents.conversation(name);
      Object lock = new Object();
      conversation.onNotice(
          notice -> {
            synchronized (lock) {
              out.println();
              out.println("  [notice] " + notice);
              out.flush();
            }
          });
      AtomicReference<Thread> turn = new AtomicReference<>();
      if (interactive) {
        onCtrlC(
            () -> {
              Thread running = turn.get();
              if (running != null) {
                running.interrupt();
              } else {
                System.exit(130);
              }
            });
        out.println(
            "Talking to agent '"
                + name
                + "' ("
                + agent.definition().endpoint().model()
                + "). Ctrl-C cancels a turn; /exit or end of input quits.");
      }
      BufferedReader lines = new BufferedReader(new InputStreamReader(in, StandardCharsets.UTF_8));
      boolean failed = false;
      while (true) {
        if (interactive) {
          out.print("you> ");
          out.flush();
        }
        String line = lines.readLine();
        if (line == null || line.strip().equals("/exit")) {
          break;
        }
        if (line.isBlank()) {
          continue;
        }
        failed |= !turn(agents, redactor, agent, conversation, line, out, err, lock, turn);
      }
      return failed ? CommandLine.ExitCode.SOFTWARE : CommandLine.ExitCode.OK;
    }
  }

  private boolean turn(
      Agents agents,
      Redactor redactor,
      Agent agent,
      Conversation conversation,
      String message,
      PrintWriter out,
      PrintWriter err,
      Object lock,
      AtomicReference<Thread> turn) {
    out.print(agent.definition().name() + "> ");
    out.flush();
    RunListener listener =
        new RunListener() {
          @Override
          public void onText(String delta) {
            synchronized (lock) {
              out.print(delta);
              out.flush();
            }
          }

          @Override
          public void onToolCall(ToolCall call) {
            synchronized (lock) {
              out.println();
              out.println("  -> " + call.toolName() + " " + redactor.redact(call.arguments()));
              out.flush();
            }
          }

          @Override
          public void onToolResult(ToolCall call, ToolResult result) {
            String text = result.text().replace('\n', ' ');
            if (text.length() > RESULT_PREVIEW) {
              text = text.substring(0, RESULT_PREVIEW) + "...";
            }
            synchronized (lock) {
              out.println(
                  "  <- "
                      + call.toolName()
                      + (result instanceof ToolResult.Failure failure
                          ? " error [" + failure.error().code().wireName() + "]: "
                          : ": ")
                      + text);
              out.flush();
            }
          }
        };
    ChannelTurn.Listener channel =
        new ChannelTurn.Listener() {
          @Override
          public void onReply(String content) {
            print("  [reply] " + content);
          }

          @Override
          public void onReaction(String emoji) {
            print("  [reaction] " + emoji);
          }

          @Override
          public void onSkip(String reason) {
            print("  [skip]" + (reason.isEmpty() ? "" : " " + reason));
          }

          private void print(String line) {
            synchronized (lock) {
              out.println();
              out.println(line);
              out.flush();
            }
          }
        };
    AtomicReference<Object> outcome = new AtomicReference<>();
    Thread thread =
        Thread.ofVirtual()
            .unstarted(
                () -> {
                  try (ChannelTurn channelTurn = ChannelTurn.open(agents, conversation, channel)) {
                    outcome.set(agent.run(conversation, message, listener, channelTurn));
                  } catch (RuntimeException e) {
                    outcome.set(e);
                  }
                });
    turn.set(thread);
    thread.start();
    boolean interrupted = false;
    while (true) {
      try {
        thread.join();
        break;
      } catch (InterruptedException e) {
        interrupted = true;
      }
    }
    turn.set(null);
    if (interrupted) {
      Thread.currentThread().interrupt();
    }
    out.println();
    for (String status : conversation.drainStatus()) {
      out.println("  [status] " + status);
    }
    if (outcome.get() instanceof RunResult result) {
      result
          .usage()
          .ifPresent(
              usage ->
                  out.println(
                      "  [tokens] "
                          + usage.inputTokens()
                          + " in, "
                          + usage.outputTokens()
                          + " out"));
    }
    out.flush();
    return switch (outcome.get()) {
      case RunResult result
          when result.stop() == RunResult.Stop.COMPLETED
              || result.stop() == RunResult.Stop.SKIPPED ->
          true;
      case RunResult result -> {
        err.println("(turn " + result.stop().name().toLowerCase(java.util.Locale.ROOT) + ")");
        err.flush();
        yield result.stop() == RunResult.Stop.CANCELLED;
      }
      case ModelException e -> {
        err.println("error: " + e.getMessage());
        err.flush();
        yield false;
      }
      case RuntimeException e -> {
        err.println("error: " + e);
        err.flush();
        yield false;
      }
      default -> false;
    };
  }

  // Ctrl-C interrupts the running turn. sun.misc.Signal is reached reflectively: naming it would be
  // a compiler warning (internal API), and warnings are errors here.
  private static void onCtrlC(Runnable action) {
    try {
      Class<?> signal = Class.forName("sun.misc.Signal");
      Class<?> handler = Class.forName("sun.misc.SignalHandler");
      Object handlerProxy =
          Proxy.newProxyInstance(
              handler.getClassLoader(),
              new Class<?>[] {handler},
              (proxy, method, arguments) -> {
                if (method.getName().equals("handle")) {
                  action.run();
                }
                return null;
              });
      signal
          .getMethod("handle", signal, handler)
          .invoke(null, signal.getConstructor(String.class).newInstance("INT"), handlerProxy);
    } catch (ReflectiveOperationException | RuntimeException e) {
      // No signal support: Ctrl-C ends the program, as it would anyway.
    }
  }
}
