package dev.toolhost.memory;

/**
 * A memory match is one result of a working memory search.
 *
 * @param entry the entry that matched
 * @param score its BM25 score
 * @param relevance its score over the best score of the search, rounded to two decimals
 */
public record MemoryMatch(MemoryEntry entry, double score, double relevance) {}
