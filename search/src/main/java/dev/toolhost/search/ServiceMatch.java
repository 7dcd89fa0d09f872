package dev.toolhost.search;

import java.util.List;

/**
 * A service match is one result of a service search: the service, how well it matched, and the
 * capabilities most relevant to the query.
 *
 * @param service the service that matched
 * @param score its BM25 score
 * @param relevance its score over the best score of the search, rounded to two decimals (1.0 for
 *     the best)
 * @param topCapabilities up to three of its capabilities: those matching the query first, best
 *     first, then the others in the service's own order
 */
public record ServiceMatch(
    KnownService service,
    double score,
    double relevance,
    List<KnownService.Capability> topCapabilities) {

  public ServiceMatch {
    topCapabilities = List.copyOf(topCapabilities);
  }
}
