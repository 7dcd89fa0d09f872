package dev.toolhost.bus;

import dev.toolhost.core.spi.HostExtension;
import dev.toolhost.testing.HostExtensionContract;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;

/**
 * The tool services extension keeps the host extension contract over an in-memory bus the host is
 * given: it registers the configured remote tool, and nothing without a section.
 */
class ToolServicesExtensionContractTest extends HostExtensionContract<ToolServicesConfig> {

  private InMemoryBus bus;

  @BeforeEach
  void openTheBus() {
    bus = new InMemoryBus();
  }

  @AfterEach
  void closeTheBus() {
    bus.close();
  }

  @Override
  protected HostExtension<ToolServicesConfig> extension() {
    return new ToolServicesExtension();
  }

  @Override
  protected Map<Class<?>, Object> services() {
    return Map.of(MessageBus.class, bus);
  }

  @Override
  protected Optional<String> validSection() {
    return Optional.of(
        """
        services:
          custom-rag:
            topic: custom-rag-request
            config-params: [{name: collection, required: true}]
        tools:
          query-customers:
            type: tool-service
            description: Query the customer knowledge base
            service: custom-rag
            collection: customers
            arguments: [{name: question, type: string, description: The question to ask}]
        """);
  }

  @Override
  protected Optional<Misspelling> misspelling() {
    return Optional.of(
        new Misspelling(
            """
            services:
              custom-rag:
                topic: custom-rag-request
            tols:
              query-customers:
                type: tool-service
            """,
            4,
            1,
            "tols"));
  }

  @Override
  protected Set<String> configuredTools() {
    return Set.of("query-customers");
  }
}
