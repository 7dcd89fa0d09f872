package dev.toolhost.longterm;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import tools.jackson.core.JacksonException;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;
import tools.jackson.databind.node.ObjectNode;

/**
 * The endpoint embedder asks an OpenAI-compatible {@code POST {base_url}/embeddings} for vectors:
 * {@code {"model", "input": [...], "dimensions"?}}, answered with {@code {"data": [{"index",
 * "embedding"}]}}.
 *
 * <p>The endpoint is the operator's, named in the config, so it is reached directly rather than
 * through the web extension's policy for model-chosen addresses. Any failure (refused connection,
 * an error status, an answer of the wrong shape or length) is an {@link EmbedderException}; the key
 * is never part of a message.
 */
public final class EndpointEmbedder implements Embedder {

  private static final JsonMapper JSON = JsonMapper.builder().build();

  private final URI embeddings;
  private final String model;
  private final int dimension;
  private final boolean sendDimensions;
  private final Optional<String> apiKey;
  private final Duration timeout;
  private final HttpClient http;

  /**
   * An embedder for the given endpoint.
   *
   * @param baseUrl the API's base URL, such as {@code https://api.openai.com/v1}
   * @param model the model to ask for
   * @param dimension the vectors' length
   * @param sendDimensions whether to ask for that length ({@code dimensions}), for models that can
   *     shorten their vectors
   * @param apiKey the bearer token, if the endpoint needs one
   * @param timeout how long one request may take
   */
  public EndpointEmbedder(
      URI baseUrl,
      String model,
      int dimension,
      boolean sendDimensions,
      Optional<String> apiKey,
      Duration timeout) {
    String base = Objects.requireNonNull(baseUrl, "baseUrl").toString();
    this.embeddings = URI.create(base.endsWith("/") ? base + "embeddings" : base + "/embeddings");
    this.model = Objects.requireNonNull(model, "model");
    this.dimension = dimension;
    this.sendDimensions = sendDimensions;
    this.apiKey = Objects.requireNonNull(apiKey, "apiKey");
    this.timeout = Objects.requireNonNull(timeout, "timeout");
    this.http = HttpClient.newBuilder().connectTimeout(timeout).build();
  }

  @Override
  public String model() {
    return model;
  }

  @Override
  public int dimension() {
    return dimension;
  }

  @Override
  public List<float[]> embed(List<String> texts) {
    ObjectNode body = JSON.createObjectNode().put("model", model);
    texts.forEach(body.putArray("input")::add);
    if (sendDimensions) {
      body.put("dimensions", dimension);
    }
    HttpRequest.Builder request =
        HttpRequest.newBuilder(embeddings)
            .timeout(timeout)
            .header("Content-Type", "application/json")
            .POST(HttpRequest.BodyPublishers.ofString(body.toString()));
    apiKey.ifPresent(key -> request.header("Authorization", "Bearer " + key));
    HttpResponse<String> response;
    try {
      response = http.send(request.build(), HttpResponse.BodyHandlers.ofString());
    } catch (IOException e) {
      throw new EmbedderException(embeddings + " did not answer: " + e.getMessage(), e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new EmbedderException("interrupted while asking " + embeddings, e);
    }
    if (response.statusCode() != 200) {
      throw new EmbedderException(embeddings + " answered HTTP " + response.statusCode());
    }
    try {
      JsonNode data = JSON.readTree(response.body()).path("data");
      float[][] vectors = new float[texts.size()][];
      for (int i = 0; i < data.size(); i++) {
        JsonNode item = data.get(i);
        int index = item.path("index").asInt(i);
        JsonNode embedding = item.path("embedding");
        if (index < 0 || index >= vectors.length || embedding.size() != dimension) {
          throw new EmbedderException(
              embeddings
                  + " answered a vector of "
                  + embedding.size()
                  + " numbers at index "
                  + index
                  + " (expected "
                  + dimension
                  + ")");
        }
        float[] vector = new float[dimension];
        for (int j = 0; j < dimension; j++) {
          vector[j] = (float) embedding.get(j).asDouble();
        }
        vectors[index] = vector;
      }
      List<float[]> all = new ArrayList<>();
      for (float[] vector : vectors) {
        if (vector == null) {
          throw new EmbedderException(embeddings + " answered fewer vectors than texts");
        }
        all.add(vector);
      }
      return all;
    } catch (JacksonException e) {
      throw new EmbedderException(embeddings + " answered something that is not JSON", e);
    }
  }

  @Override
  public void close() {
    http.close();
  }
}
