package dev.toolhost.core;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * Marks a public method as a tool; {@link MethodTools} turns it into an {@link ExecutableTool}.
 *
 * <p>The parameters schema is generated from the method's parameters (see {@link Param}). A
 * returned {@code String} is the content; a returned {@link ToolResult} is the result; {@code void}
 * is empty content; any other value is rendered as JSON. A parameter of type {@link ToolCall}
 * receives the call itself and is not part of the schema.
 */
@Documented
@Retention(RetentionPolicy.RUNTIME)
@Target(ElementType.METHOD)
public @interface Tool {

  /** What the tool does, for the model. */
  String description();

  /** The tool's name; the method's name when empty. */
  String name() default "";

  /** The tool does not change its environment. */
  boolean readOnly() default false;

  /** The tool may perform destructive updates. */
  boolean destructive() default true;

  /** Calling again with the same arguments has no further effect. */
  boolean idempotent() default false;

  /** The tool interacts with entities outside the host. */
  boolean openWorld() default true;

  /**
   * The tool never blocks and finishes in microseconds, so it runs on the caller's thread; see
   * {@link ExecutableTool}. Leave it off for anything that does I/O, sleeps or waits without
   * bounding the wait by the call's deadline.
   */
  boolean inline() default false;

  /**
   * How long a call may take, in seconds, when its caller names no deadline; {@code 0} for {@link
   * ToolCall#DEFAULT_TIMEOUT}. A deadline the caller names always wins.
   */
  long timeoutSeconds() default 0;
}
