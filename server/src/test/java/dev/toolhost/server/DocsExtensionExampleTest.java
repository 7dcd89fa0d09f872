package dev.toolhost.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.toolhost.core.ToolCall;
import dev.toolhost.core.spi.ConfigException;
import dev.toolhost.core.spi.HostExtension;
import dev.toolhost.host.HostConfig;
import java.io.ByteArrayOutputStream;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import javax.tools.JavaCompiler;
import javax.tools.ToolProvider;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The extension example of docs/extensions.md, compiled as a reader would copy it and run in a real
 * host: its section is read, a typo in it is placed at its line and column, and its tool answers.
 */
class DocsExtensionExampleTest {

  private static final Path PAGE = Path.of("..", "docs", "extensions.md");
  private static final Pattern EXAMPLE =
      Pattern.compile("(?s)## The smallest real example.*?```java\n(.*?)```");

  @TempDir Path dir;

  private HostExtension<?> compiledExample() throws Exception {
    Matcher example = EXAMPLE.matcher(Files.readString(PAGE));
    assertThat(example.find()).as("the Java example of " + PAGE).isTrue();
    Path source = dir.resolve("src/dev/example/weather/WeatherExtension.java");
    Files.createDirectories(source.getParent());
    Files.writeString(source, example.group(1));
    Path classes = Files.createDirectories(dir.resolve("classes"));
    JavaCompiler javac = ToolProvider.getSystemJavaCompiler();
    ByteArrayOutputStream errors = new ByteArrayOutputStream();
    int status =
        javac.run(
            null,
            null,
            errors,
            "-classpath",
            System.getProperty("java.class.path"),
            "-d",
            classes.toString(),
            source.toString());
    assertThat(status).as(errors.toString(StandardCharsets.UTF_8)).isZero();
    URLClassLoader loader =
        new URLClassLoader(new URL[] {classes.toUri().toURL()}, getClass().getClassLoader());
    return (HostExtension<?>)
        loader
            .loadClass("dev.example.weather.WeatherExtension")
            .getDeclaredConstructor()
            .newInstance();
  }

  @Test
  void theDocumentedExtensionCompilesReadsItsSectionAndItsToolAnswers() throws Exception {
    HostExtension<?> weather = compiledExample();
    Path file = dir.resolve("toolhost.yaml");
    Files.writeString(file, "weather:\n  city: Paris\n");
    List<HostExtension<?>> extensions = List.of(weather);

    try (Host host =
        Host.builder(HostConfig.load(file, extensions))
            .environment(Map.of())
            .extensions(extensions)
            .build()) {
      assertThat(host.dispatcher().dispatch(host.toolSet("main"), ToolCall.of("weather_now", "{}")))
          .extracting(result -> result.text())
          .isEqualTo("Sunny in Paris");
    }
  }

  @Test
  void aTypoInTheDocumentedSectionIsPlacedAtItsLineAndColumn() throws Exception {
    HostExtension<?> weather = compiledExample();
    Path file = dir.resolve("toolhost.yaml");
    Files.writeString(file, "weather:\n  citty: Paris\n");

    assertThatThrownBy(() -> HostConfig.load(file, List.of(weather)))
        .isInstanceOf(ConfigException.class)
        .hasMessageStartingWith(file + " line 2, column 3: unknown key 'citty' under 'weather'");
  }
}
