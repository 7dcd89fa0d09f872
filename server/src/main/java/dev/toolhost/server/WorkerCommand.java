package dev.toolhost.server;

import dev.toolhost.bus.InMemoryResultStore;
import dev.toolhost.bus.MessageBus;
import dev.toolhost.bus.RedisResultStore;
import dev.toolhost.bus.ResultStore;
import dev.toolhost.bus.ToolWorker;
import dev.toolhost.core.ExecutableTool;
import dev.toolhost.core.MethodTools;
import dev.toolhost.core.ToolDispatcher;
import dev.toolhost.core.ToolGuides;
import dev.toolhost.core.ToolRegistry;
import java.net.URI;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * The worker command hosts tools for remote callers until stopped: it consumes the queue of its
 * group, announces its tools on the bus, and says goodbye on Ctrl-C or SIGTERM.
 *
 * <p>It hosts the built-in guide tools and the example tool family ({@link WorkerTools}) and, with
 * {@code --tools CLASS}, the {@code @Tool} methods of any class with a no-argument constructor on
 * the classpath. With {@code --tools NAME} (a name, not a class: {@code --tools exec}) it hosts the
 * {@code builtin:NAME} tools of the host its {@code --config} file describes, run through that
 * host's dispatch chain (its secret scanning included): {@code toolhost worker --group scripts
 * --config runner.yaml --tools exec} is a remote script runner, hosting the sandbox tools for hosts
 * that have no sandbox of their own. Finished results are remembered in-process, or in Redis with
 * {@code --results-redis URI} so that the whole group shares them.
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
      description = "The worker group; tools get source remote:NAME (default: ${DEFAULT-VALUE}).")
  private String group;

  @Mixin private ConfigOption config;

  @Option(
      names = "--tools",
      paramLabel = "CLASS|NAME",
      description = {
        "A class whose @Tool methods to host as well, or the name of a host extension of the",
        "--config file whose builtin:NAME tools to host (such as exec); may be repeated."
      })
  private java.util.List<String> toolClasses = new java.util.ArrayList<>();

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
    ToolRegistry registry = new ToolRegistry();
    registry.registerAll(new ToolGuides().tools());
    registry.registerAll(MethodTools.of(new WorkerTools(), "builtin:worker"));
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
      if (host != null) {
        host.close();
      }
      throw e;
    }
    for (String name : toolClasses) {
      if (!name.contains(".")) {
        continue;
      }
      Object target;
      try {
        target = Class.forName(name).getDeclaredConstructor().newInstance();
      } catch (ReflectiveOperationException | LinkageError e) {
        throw new CommandLine.ParameterException(
            spec.commandLine(), "--tools " + name + ": cannot make one (" + e + ")");
      }
      registry.registerAll(MethodTools.of(target, "builtin:" + target.getClass().getSimpleName()));
    }
    if (concurrency < 1) {
      throw new CommandLine.ParameterException(
          spec.commandLine(), "--concurrency must be 1 or more.");
    }
    MessageBus opened;
    try {
      opened = bus.open();
    } catch (RuntimeException e) {
      closeQuietly(host);
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
      throw e;
    }
    CountDownLatch stopped = new CountDownLatch(1);
    Runtime.getRuntime()
        .addShutdownHook(
            new Thread(
                () -> {
                  worker.close();
                  results.close();
                  opened.close();
                  closeQuietly(host);
                  stopped.countDown();
                },
                "toolhost-worker-shutdown"));
    spec.commandLine()
        .getOut()
        .printf(
            "Toolhost worker %s of group '%s' on %s hosting %d tools. Stop with Ctrl-C.%n",
            worker.workerId(), group, bus.shown(), registry.specs().size());
    spec.commandLine().getOut().flush();
    stopped.await();
    return CommandLine.ExitCode.OK;
  }

  private static void closeQuietly(Host host) {
    if (host != null) {
      host.close();
    }
  }
}
