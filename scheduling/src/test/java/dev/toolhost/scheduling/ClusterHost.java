package dev.toolhost.scheduling;

import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CountDownLatch;

/**
 * A host in a process of its own, for the test that kills one: a scheduler on the PostgreSQL store
 * whose runs print {@code START name} and then hang, until the process is killed.
 *
 * <p>Arguments: the JDBC URL, the user, the host name, the heartbeat in milliseconds, the threads.
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
    CountDownLatch never = new CountDownLatch(1);
    scheduler.start(
        (task, due, deadline) -> {
          System.out.println("START " + task.name());
          System.out.flush();
          never.await();
          return new TaskScheduler.Outcome(true, "unreachable");
        });
    System.out.println("READY");
    System.out.flush();
    never.await();
  }
}
