package dev.toolhost.server;

import dev.toolhost.bus.InMemoryResultStore;
import dev.toolhost.bus.MessageBus;
import dev.toolhost.bus.RedisResultStore;
import dev.toolhost.bus.ResultStore;
import dev.toolhost.bus.ToolWorker;
import dev.toolhost.core.ExecutableTool;
import dev.toolhost.core.MethodTools;
import dev.toolhost.core.ToolDispatcher;
import dev.toolhost.core.ToolRegistry;
import java.io.File;
import java.io.IOException;
import java.net.MalformedURLException;
import java.net.URI;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.regex.Pattern;
import java.util.stream.Stream;
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
 * in-process, or in Redis with {@code --results-redis URI} so that the whole group shares them.
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

  @Mixin private ConfigOption config;

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
          "Share finished results with the group in Redis, such as redis://127.0.0.1:6379.")
  private Optional<URI> resultsRedis = Optional.empty();

  @Override
  public Integer call() throws InterruptedException {
    if (concurrency < 1) {
      throw new CommandLine.ParameterException(
          spec.commandLine(), "--concurrency must be 1 or more.");
    }
    ToolRegistry registry = new ToolRegistry();
    registry.registerAll(MethodTools.of(new WorkerTools(), "builtin:worker"));
    URLClassLoader loader = classLoader();
    try {
      hostClasses(registry, loader);
    } catch (RuntimeException e) {
      closeQuietly(loader);
      throw e;
    }
    List<String> families = toolClasses.stream().filter(name -> !name.contains(".")).toList();
    // The config's host, without a bus: it only lends its tools and its dispatch chain.
    Host host =
        families.isEmpty()
            ? null
            : Host.builder(config.load()).extensions(config.extensions()).build();
    try {
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
                  + config.file().map(Object::toString).orElse("the default config")
                  + " has no builtin:"
                  + family
                  + " tools (does --config name a file with an '"
                  + family
                  + ":' section?)");
        }
        registry.registerAll(tools);
      }
    } catch (RuntimeException e) {
      closeQuietly(host);
      closeQuietly(loader);
      throw e;
    }
    if (bus.uri().equals("memory:")) {
      spec.commandLine()
          .getErr()
          .println(
              "toolhost worker: warning: on the in-memory bus (memory:) no other process can reach"
                  + " this worker; give --bus amqp://user:pass@host:5672/ (or TOOLHOST_BUS) to host"
                  + " tools for a host on RabbitMQ.");
      spec.commandLine().getErr().flush();
    }
    MessageBus opened;
    try {
      opened = bus.open();
    } catch (RuntimeException e) {
      closeQuietly(host);
      closeQuietly(loader);
      throw e;
    }
    ResultStore results;
    try {
      results =
          resultsRedis
              .<ResultStore>map(RedisResultStore::connect)
              .orElseGet(InMemoryResultStore::new);
    } catch (RuntimeException e) {
      opened.close();
      closeQuietly(host);
      closeQuietly(loader);
      throw e;
    }
    ToolWorker worker;
    try {
      worker =
          new ToolWorker(
                  opened,
                  group,
                  registry,
                  host == null ? ToolDispatcher.create() : host.dispatcher(),
                  results,
                  concurrency,
                  Duration.ofSeconds(5))
              .start();
    } catch (RuntimeException e) {
      results.close();
      opened.close();
      closeQuietly(host);
      closeQuietly(loader);
      throw e;
    }
    CountDownLatch stopped = new CountDownLatch(1);
    AtomicBoolean closed = new AtomicBoolean();
    Runnable close =
        () -> {
          if (closed.compareAndSet(false, true)) {
            worker.close();
            results.close();
            opened.close();
            closeQuietly(host);
            closeQuietly(loader);
          }
        };
    // SIGTERM and Ctrl-C end the wait below: the worker says goodbye and the command exits 0, as
    // serve does. The hook closes it on any other way out.
    Runtime.getRuntime().addShutdownHook(new Thread(close, "toolhost-worker-shutdown"));
    Signals.onStop(stopped::countDown);
    spec.commandLine()
        .getOut()
        .printf(
            "Toolhost worker %s of group '%s' on %s hosting %d tools. Stop with Ctrl-C.%n",
            worker.workerId(), group, bus.shown(), registry.specs().size());
    spec.commandLine().getOut().flush();
    stopped.await();
    close.run();
    return CommandLine.ExitCode.OK;
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

  private static void closeQuietly(Host host) {
    if (host != null) {
      host.close();
    }
  }

  private static void closeQuietly(URLClassLoader loader) {
    if (loader != null) {
      try {
        loader.close();
      } catch (IOException e) {
        // Closing only releases the jar files; nothing is left to do about it.
      }
    }
  }
}
