package dev.serval.api.http;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * Marks a JAX-RS resource class whose every method needs the management token ({@link ApiToken}). The token is
 * checked after routing, on the resource that matched, so every spelling of a path that reaches the resource
 * ({@code //api}, {@code /%61pi}, {@code /v2/../api}, ...) is covered by what it reaches rather than how it is written.
 */
@Documented
@Retention(RetentionPolicy.RUNTIME)
@Target(ElementType.TYPE)
public @interface ManagementApi {
}
