package dev.toolhost.scheduling;

import java.time.Duration;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;

/**
 * A host in a process of its own, for the tests that kill or stall one: a scheduler on the
 * PostgreSQL store whose runs print {@code START name} and then hang. In mode {@code hang} every
 * run hangs until the process is killed; in mode {@code stall-first} the first run of each task
 * hangs until it is interrupted (then prints {@code STOPPED name}), and later runs print {@code RAN
 * name} and succeed.
 *
 * <p>Arguments: the JDBC URL, the user, the host name, the heartbeat in milliseconds, the threads,
 * the mode.
 */
public final class ClusterHost {

  private ClusterHost() {}

  public static void main(String[] args) throws Exception {
    ScheduleStore store = ScheduleStore.jdbc(args[0], Optional.of(args[1]), Optional.empty());
    TaskScheduler scheduler =
        TaskScheduler.builder(store)
            .hostName(args[2])
            .pollInterval(Duration.ofMillis(100))
            .heartbeat(Duration.ofMillis(Long.parseLong(args[3])), 4)
            .threads(Integer.parseInt(args[4]))
            .build();
    boolean stallFirst = args[5].equals("stall-first");
    Set<String> stalled = ConcurrentHashMap.newKeySet();
    CountDownLatch never = new CountDownLatch(1);
    scheduler.start(
        (task, due, deadline) -> {
          if (stallFirst && !stalled.add(task.name())) {
            say("RAN " + task.name());
            return new TaskScheduler.Outcome(true, "ran on " + args[2]);
          }
          say("START " + task.name());
          try {
            never.await();
          } catch (InterruptedException e) {
            say("STOPPED " + task.name());
            throw e;
          }
          return new TaskScheduler.Outcome(true, "unreachable");
        });
    say("READY");
    never.await();
  }

  private static synchronized void say(String line) {
    System.out.println(line);
    System.out.flush();
  }
}
