package dev.toolhost.scheduling;

import dev.toolhost.core.ToolCall;
import dev.toolhost.core.ToolDispatcher;
import dev.toolhost.core.ToolProfiles;
import dev.toolhost.core.ToolRegistry;
import dev.toolhost.core.ToolResult;
import dev.toolhost.core.ToolSet;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.InstantSource;

/**
 * A host in a process of its own on the embedded store, for the test that kills it: the scheduling
 * tools over a started scheduler, behind a dispatcher. Each line on its input is a task name; it
 * calls {@code schedule_task} for it and answers {@code OK name} once the call returns, or {@code
 * ERROR} and the tool's text.
 *
 * <p>Arguments: the state directory.
 */
public final class EmbeddedHost {

  private EmbeddedHost() {}

  public static void main(String[] args) throws Exception {
    Path directory = Path.of(args[0]);
    ScheduleStore store = ScheduleStore.embedded(directory);
    TaskScheduler scheduler = TaskScheduler.builder(store).build();
    SchedulingConfig config =
        SchedulingConfig.builder(directory).agent("reporter").maxTasks(10_000).build();
    ToolRegistry registry = new ToolRegistry();
    registry.registerAll(new SchedulingTools(scheduler, config, InstantSource.system()).tools());
    ToolDispatcher dispatcher = ToolDispatcher.create();
    ToolSet tools = ToolSet.of(registry, ToolProfiles.MAIN);
    scheduler.start((task, due, deadline) -> new TaskScheduler.Outcome(true, "ran"));
    PrintStream out = new PrintStream(System.out, false, StandardCharsets.UTF_8);
    out.println("READY");
    out.flush();
    BufferedReader lines =
        new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
    String name;
    while ((name = lines.readLine()) != null) {
      ToolResult result =
          dispatcher.dispatch(
              tools,
              ToolCall.of(
                  SchedulingTools.SCHEDULE,
                  "{\"name\": \""
                      + name
                      + "\", \"cron\": \"0 9 * * *\", \"description\": \"Report at nine\"}"));
      out.println(result.isError() ? "ERROR " + result.text().replace('\n', ' ') : "OK " + name);
      out.flush();
    }
  }
}
