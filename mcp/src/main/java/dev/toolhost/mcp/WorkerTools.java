package dev.toolhost.mcp;

import dev.toolhost.core.Param;
import dev.toolhost.core.Tool;
import java.net.InetAddress;
import java.net.UnknownHostException;

/**
 * Worker tools are the example tool family every {@code toolhost worker} hosts: enough to see a
 * remote call work end to end, and to tell workers apart.
 */
public final class WorkerTools {

  /** Echoes the text. */
  @Tool(
      description = "Echoes the text back.",
      readOnly = true,
      destructive = false,
      idempotent = true,
      openWorld = false,
      inline = true)
  public String echo(@Param(description = "The text to echo.") String text) {
    return text;
  }

  /** Adds two numbers. */
  @Tool(
      description = "Adds two numbers.",
      readOnly = true,
      destructive = false,
      idempotent = true,
      openWorld = false,
      inline = true)
  public double add(
      @Param(description = "The first number.") double a,
      @Param(description = "The second number.") double b) {
    return a + b;
  }

  /** Says which worker process answered. */
  @Tool(
      name = "worker_info",
      description = "Says which worker process answered: host name and process id.",
      readOnly = true,
      destructive = false,
      openWorld = false)
  public String workerInfo() {
    String host;
    try {
      host = InetAddress.getLocalHost().getHostName();
    } catch (UnknownHostException e) {
      host = "unknown";
    }
    return host + " pid " + ProcessHandle.current().pid();
  }
}
