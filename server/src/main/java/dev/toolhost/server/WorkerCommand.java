package dev.toolhost.server;

import dev.toolhost.bus.InMemoryResultStore;
import dev.toolhost.bus.MessageBus;
import dev.toolhost.bus.RedisResultStore;
import dev.toolhost.bus.ResultStore;
import dev.toolhost.bus.ToolWorker;
import dev.toolhost.core.MethodTools;
import dev.toolhost.core.ToolDispatcher;
import dev.toolhost.core.ToolGuides;
import dev.toolhost.core.ToolRegistry;
import java.net.URI;
import java.time.Duration;
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
 * the classpath. Finished results are remembered in-process, or in Redis with {@code
 * --results-redis URI} so that the whole group shares them.
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

  @Option(
      names = "--tools",
      paramLabel = "CLASS",
      description = "A class whose @Tool methods to host as well; may be repeated.")
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
    for (String name : toolClasses) {
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
    MessageBus opened = bus.open();
    ResultStore results;
    try {
      results =
          resultsRedis
              .<ResultStore>map(RedisResultStore::connect)
              .orElseGet(InMemoryResultStore::new);
    } catch (RuntimeException e) {
      opened.close();
      throw e;
    }
    ToolWorker worker;
    try {
      worker =
          new ToolWorker(
                  opened,
                  group,
                  registry,
                  ToolDispatcher.create(),
                  results,
                  concurrency,
                  Duration.ofSeconds(5))
              .start();
    } catch (RuntimeException e) {
      results.close();
      opened.close();
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
}
