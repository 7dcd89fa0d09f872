package dev.toolhost.mcp;

import dev.toolhost.bus.BusOption;
import dev.toolhost.bus.InMemoryResultStore;
import dev.toolhost.bus.McpServerState;
import dev.toolhost.bus.MessageBus;
import dev.toolhost.bus.RedisResultStore;
import dev.toolhost.bus.ResultStore;
import dev.toolhost.bus.ToolWorker;
import dev.toolhost.core.ExecutableTool;
import dev.toolhost.core.MethodTools;
import dev.toolhost.core.ToolDispatcher;
import dev.toolhost.core.ToolRegistry;
import dev.toolhost.core.ToolSpec;
import dev.toolhost.core.spi.CommandContext;
import dev.toolhost.core.spi.RunningHost;
import dev.toolhost.core.spi.Signals;
import java.io.File;
import java.io.IOException;
import java.net.MalformedURLException;
import java.net.URI;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.Callable;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * The worker command hosts tools for remote callers until stopped: it consumes the queue of its
 * group, announces its tools on the bus, and says goodbye on Ctrl-C or SIGTERM, then exits 0.
 *
 * <p>It hosts the example tool family ({@link WorkerTools}) and, with {@code --tools CLASS}, the
 * {@code @Tool} methods of any class with a no-argument constructor, found on the launcher's class
 * path or in the jars and directories of {@code --classpath} (compiled with {@code -parameters}).
 * It hosts and announces only these: not the built-ins every host has of its own (the guide tools),
 * whose names would clash with the host's. With {@code --tools NAME} (a name, not a class: {@code
 * --tools exec}) it hosts the {@code builtin:NAME} tools of the host its {@code --config} file
 * describes, run through that host's dispatch chain (its secret scanning included): {@code toolhost
 * worker --group scripts --config runner.yaml --tools exec} is a remote script runner, hosting the
 * sandbox tools for hosts that have no sandbox of their own. Finished results are remembered
 * in-process, or in Redis with {@code --results-redis URI} so that the whole group shares them. In
 * process, a call delivered again to this worker is answered from its run, but one delivered to
 * another worker of the group runs again there: the worker logs a warning saying so when it starts.
 *
 * <p>When its {@code --config} file has an {@code mcp:} section, it bridges those MCP servers (as a
 * host would) and hosts their tools for its group: it announces each server and marks its tools
 * with it, so that hosts on the bus register them with source {@code mcp:{server}} as if the server
 * were their own, and their MCP management tools list the server with this worker's group. The
 * tools follow the server: a tool the server adds, changes or drops is announced so at the next
 * heartbeat. Workers of one group bridging one server share its calls. When the section's {@code
 * allow_register} lets a model register servers, hosts may register one on the group at run time
 * ({@link McpGroupRegistrations}): the worker that takes the call tells the rest of the group.
 *
 * <p>On the in-memory bus (no {@code --bus}, no {@code TOOLHOST_BUS}) no other process can reach
 * the worker: it says so on stderr when it starts, and runs anyway.
 */
@Command(
    name = "worker",
    mixinStandardHelpOptions = true,
    description = {
      "Hosts tools for remote callers on the message bus until stopped with Ctrl-C or SIGTERM.",
      "Workers of one group share a queue: start more to scale a tool."
    })
final class WorkerCommand implements Callable<Integer> {

  private static final Logger LOG = LoggerFactory.getLogger(WorkerCommand.class);

  private final CommandContext context;

  @Spec private CommandSpec spec;

  @Mixin private BusOption bus;

  @Option(
      names = "--group",
      paramLabel = "NAME",
      defaultValue = "default",
      description =
          "The worker group: its workers share one queue, and a host registers their tools with"
              + " source remote:NAME. Default: the group named '${DEFAULT-VALUE}'.")
  private String group;

  @Option(
      names = "--tools",
      paramLabel = "CLASS|NAME",
      description =
          "A class whose @Tool methods to host as well (on the class path or in --classpath), or"
              + " the name of a host extension of the --config file whose builtin:NAME tools to"
              + " host (such as exec); may be repeated.")
  private List<String> toolClasses = new ArrayList<>();

  @Option(
      names = "--classpath",
      paramLabel = "PATH",
      description =
          "Jars and directories to find the --tools classes in, separated as in java -cp (':'"
              + " on Unix, ';' on Windows) or given with the option again; DIR/* takes every jar"
              + " in DIR.")
  private List<String> classpath = new ArrayList<>();

  @Option(
      names = "--concurrency",
      paramLabel = "N",
      defaultValue = "64",
      description = "How many calls may run at once (default: ${DEFAULT-VALUE}).")
  private int concurrency;

  @Option(
      names = "--results-redis",
      paramLabel = "URI",
      description =
          "Share finished results and claims with the group in Redis, such as"
              + " redis://127.0.0.1:6379, so that a call in flight when the broker connection"
              + " drops finishes once whichever worker gets it again. Without it results stay in"
              + " this process: a call redelivered to another worker of the group (or to this one"
              + " after a restart) may finish twice, and the worker warns so at start.")
  private Optional<URI> resultsRedis = Optional.empty();

  WorkerCommand(CommandContext context) {
    this.context = context;
  }

  @Override
  public Integer call() throws InterruptedException {
    if (concurrency < 1) {
      throw new CommandLine.ParameterException(
          spec.commandLine(), "--concurrency must be 1 or more.");
    }
    // What the worker opens, closed in reverse: when a step fails, and when it stops.
    Deque<AutoCloseable> opened = new ArrayDeque<>();
    ToolRegistry registry = new ToolRegistry();
    ToolWorker worker;
    try {
      registry.registerAll(MethodTools.of(new WorkerTools(), "builtin:worker"));
      URLClassLoader loader = classLoader();
      if (loader != null) {
        opened.push(loader);
      }
      hostClasses(registry, loader);
      List<String> families = toolClasses.stream().filter(name -> !name.contains(".")).toList();
      boolean bridges = context.section(new McpExtension()).isPresent();
      // The config's host, without a bus: it only lends its tools and its dispatch chain.
      RunningHost host = families.isEmpty() && !bridges ? null : context.openAlone();
      if (host != null) {
        opened.push(host);
      }
      Optional<McpBridge> bridge = host == null ? Optional.empty() : host.service(McpBridge.class);
      bridge.ifPresent(mcp -> mirrorMcpTools(host.registry(), registry));
      for (String family : families) {
        List<ExecutableTool> tools =
            host.registry().tools().stream()
                .filter(tool -> tool.spec().source().equals("builtin:" + family))
                .toList();
        if (tools.isEmpty()) {
          throw new CommandLine.ParameterException(
              spec.commandLine(),
              "--tools "
                  + family
                  + ": the host of "
                  + context.configFile().map(Object::toString).orElse("the default config")
                  + " has no builtin:"
                  + family
                  + " tools (does --config name a file with an '"
                  + family
                  + ":' section?)");
        }
        registry.registerAll(tools);
      }
      if (bus.uri().equals("memory:")) {
        spec.commandLine()
            .getErr()
            .println(
                "toolhost worker: warning: on the in-memory bus (memory:) no other process can"
                    + " reach this worker; give --bus amqp://user:pass@host:5672/ (or"
                    + " TOOLHOST_BUS) to host tools for a host on RabbitMQ.");
        spec.commandLine().getErr().flush();
      }
      MessageBus messages = bus.open();
      opened.push(messages);
      ResultStore results =
          resultsRedis
              .<ResultStore>map(RedisResultStore::connect)
              .orElseGet(InMemoryResultStore::new);
      opened.push(results);
      worker =
          new ToolWorker(
              messages,
              group,
              registry,
              host == null ? ToolDispatcher.create() : host.dispatcher(),
              results,
              concurrency,
              Duration.ofSeconds(5));
      opened.push(worker);
      if (bridge.isPresent()) {
        McpBridge mcp = bridge.get();
        worker
            .mcpServers(() -> mcpServers(mcp, registry))
            .mcpRegistration(mcp.registration().allowed().name().toLowerCase(Locale.ROOT));
        // Registering a server at run time: as the config's policy allows, on every worker of
        // the group. The tools are hosted, never announced: hosts reach them through their own
        // management tools.
        McpGroupRegistrations registrations =
            new McpGroupRegistrations(messages, group, worker.workerId(), mcp, worker::announceNow);
        opened.push(registrations);
        registry.registerAll(
            registrations.registrationTools(
                host.registry().tools().stream()
                    .filter(tool -> tool.spec().source().equals(McpBridge.MANAGEMENT_SOURCE))
                    .toList()));
        worker.start();
        registrations.start();
      } else {
        worker.start();
      }
    } catch (RuntimeException e) {
      closeAll(opened, e);
      throw e;
    }
    // SIGTERM and Ctrl-C end the wait: the worker says goodbye and the command exits 0, as serve
    // does.
    Signals.runUntilStopped(
        "toolhost-worker-shutdown",
        () -> closeAll(opened, null),
        () -> {
          spec.commandLine()
              .getOut()
              .printf(
                  "Toolhost worker %s of group '%s' on %s hosting %d tools. Stop with Ctrl-C.%n",
                  worker.workerId(), group, bus.shown(), registry.specs().size());
          spec.commandLine().getOut().flush();
        },
        () -> {});
    return CommandLine.ExitCode.OK;
  }

  /** Closes what was opened, last first; a failure is attached to the cause, or logged. */
  private static void closeAll(Deque<AutoCloseable> opened, Exception cause) {
    while (!opened.isEmpty()) {
      try {
        opened.pop().close();
      } catch (Exception e) {
        if (cause != null) {
          cause.addSuppressed(e);
        } else {
          LOG.warn("Closing the worker failed in part", e);
        }
      }
    }
  }

  /**
   * Keeps the tools of the host's MCP servers (source {@code mcp:{server}}, not the management
   * tools) in the worker's registry as the bridge registers, changes and drops them. A tool whose
   * name the worker already hosts (an example tool) is not hosted, with a warning: give the server
   * a {@code tool_prefix}.
   */
  private static void mirrorMcpTools(ToolRegistry from, ToolRegistry to) {
    ToolRegistry.Listener mirror =
        new ToolRegistry.Listener() {
          @Override
          public void registered(ToolSpec spec) {
            if (bridged(spec)) {
              from.find(spec.name()).ifPresent(tool -> host(to, tool));
            }
          }

          @Override
          public void unregistered(ToolSpec spec) {
            if (bridged(spec)
                && to.find(spec.name())
                    .filter(tool -> tool.spec().source().equals(spec.source()))
                    .isPresent()) {
              to.unregister(spec.name());
            }
          }

          @Override
          public void replaced(ToolSpec before, ToolSpec after) {
            Optional<ExecutableTool> hosted =
                to.find(before.name()).filter(tool -> tool.spec().equals(before));
            Optional<ExecutableTool> now = from.find(after.name());
            if (bridged(after)
                && hosted.isPresent()
                && now.isPresent()
                && to.replace(hosted.get(), now.get())) {
              return;
            }
            unregistered(before);
            registered(after);
          }
        };
    from.addListener(mirror);
    for (ExecutableTool tool : from.tools()) {
      if (bridged(tool.spec())) {
        host(to, tool);
      }
    }
  }

  private static boolean bridged(ToolSpec spec) {
    return McpServerState.server(spec.source()).isPresent()
        && !spec.source().equals(McpBridge.MANAGEMENT_SOURCE);
  }

  private static void host(ToolRegistry registry, ExecutableTool tool) {
    if (!registry.registerIfAbsent(tool)
        && !registry
            .find(tool.name())
            .map(ExecutableTool::spec)
            .orElseThrow()
            .equals(tool.spec())) {
      LOG.warn(
          "Tool '{}' of {} is not hosted: the worker hosts a tool of that name already; give the"
              + " server a tool_prefix",
          tool.name(),
          tool.spec().source());
    }
  }

  /** The bridge's servers as the worker announces them, with the tools it hosts of each. */
  private static List<McpServerState> mcpServers(McpBridge bridge, ToolRegistry hosted) {
    List<McpServerState> servers = new ArrayList<>();
    for (McpBridge.ServerInfo server : bridge.servers()) {
      Map<String, String> tools = new LinkedHashMap<>();
      for (McpBridge.ServerTool tool : server.tools()) {
        if (tool.status() == McpBridge.ToolStatus.AVAILABLE
            && hosted
                .find(tool.registeredName())
                .filter(found -> found.spec().source().equals(server.source()))
                .isPresent()) {
          tools.put(tool.registeredName(), tool.name());
        }
      }
      servers.add(
          new McpServerState(
              server.name(), server.state(), server.endpoint(), server.lastError(), tools));
    }
    return servers;
  }

  /**
   * The loader of the {@code --tools} classes: over the {@code --classpath} entries, whose parent
   * is this command's own (so that {@code @Tool} is the same annotation), or null without any.
   */
  private URLClassLoader classLoader() {
    List<URL> urls = new ArrayList<>();
    for (String option : classpath) {
      for (String entry : option.split(Pattern.quote(File.pathSeparator))) {
        if (entry.isBlank()) {
          continue;
        }
        for (Path path : entries(entry)) {
          try {
            urls.add(path.toUri().toURL());
          } catch (MalformedURLException e) {
            throw new CommandLine.ParameterException(
                spec.commandLine(), "--classpath " + entry + ": not a file name (" + e + ")");
          }
        }
      }
    }
    return urls.isEmpty()
        ? null
        : new URLClassLoader(
            "toolhost-worker-tools",
            urls.toArray(URL[]::new),
            WorkerCommand.class.getClassLoader());
  }

  /** The jars or directory one {@code --classpath} entry names; {@code DIR/*} is DIR's jars. */
  private List<Path> entries(String entry) {
    boolean wildcard = entry.equals("*") || entry.endsWith(File.separator + "*");
    Path path = Path.of(wildcard ? entry.substring(0, entry.length() - 1) : entry).toAbsolutePath();
    if (!wildcard) {
      if (!Files.exists(path)) {
        throw new CommandLine.ParameterException(
            spec.commandLine(),
            "--classpath " + entry + ": no such jar or directory (" + path + ")");
      }
      return List.of(path);
    }
    if (!Files.isDirectory(path)) {
      throw new CommandLine.ParameterException(
          spec.commandLine(), "--classpath " + entry + ": no such directory (" + path + ")");
    }
    try (Stream<Path> files = Files.list(path)) {
      return files.filter(file -> file.getFileName().toString().endsWith(".jar")).sorted().toList();
    } catch (IOException e) {
      throw new CommandLine.ParameterException(
          spec.commandLine(), "--classpath " + entry + ": cannot list it (" + e.getMessage() + ")");
    }
  }

  /** Registers the {@code @Tool} methods of each {@code --tools} class (a name with a dot). */
  private void hostClasses(ToolRegistry registry, URLClassLoader loader) {
    for (String name : toolClasses) {
      if (!name.contains(".")) {
        continue;
      }
      Object target;
      try {
        Class<?> type =
            Class.forName(
                name, true, loader == null ? WorkerCommand.class.getClassLoader() : loader);
        target = type.getDeclaredConstructor().newInstance();
      } catch (ClassNotFoundException e) {
        throw new CommandLine.ParameterException(
            spec.commandLine(),
            "--tools "
                + name
                + ": no such class "
                + (loader == null
                    ? "on the launcher's class path (name the jar or directory that holds it with"
                        + " --classpath)"
                    : "on the class path or in --classpath " + String.join(" ", classpath)));
      } catch (NoSuchMethodException e) {
        throw new CommandLine.ParameterException(
            spec.commandLine(), "--tools " + name + ": the class has no no-argument constructor");
      } catch (ReflectiveOperationException | LinkageError e) {
        throw new CommandLine.ParameterException(
            spec.commandLine(), "--tools " + name + ": cannot make one (" + e + ")");
      }
      try {
        registry.registerAll(
            MethodTools.of(target, "builtin:" + target.getClass().getSimpleName()));
      } catch (IllegalArgumentException e) {
        throw new CommandLine.ParameterException(
            spec.commandLine(), "--tools " + name + ": " + e.getMessage());
      }
    }
  }
}
