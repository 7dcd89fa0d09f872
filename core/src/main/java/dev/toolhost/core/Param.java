package dev.toolhost.core;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * Describes a parameter of a {@link Tool} method, or a component of a record used as one, for the
 * model.
 *
 * <p>A parameter is required unless its type is {@link java.util.Optional} or it says {@code
 * required = false}; an absent optional parameter arrives as {@code Optional.empty()} or {@code
 * null}.
 */
@Documented
@Retention(RetentionPolicy.RUNTIME)
@Target({ElementType.PARAMETER, ElementType.FIELD, ElementType.RECORD_COMPONENT})
public @interface Param {

  /** What the parameter means, for the model. */
  String description() default "";

  /** The parameter's name in the arguments object; the Java name when empty. */
  String name() default "";

  /** Whether the arguments must hold this parameter. */
  boolean required() default true;
}
