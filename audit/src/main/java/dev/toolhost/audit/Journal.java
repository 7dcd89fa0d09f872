package dev.toolhost.audit;

import java.io.IOException;
import java.util.List;

/**
 * A journal is where audit entries are kept: appended to in batches by one writer, read by queries
 * from any thread. Its key is the HMAC key the entries' argument digests are made with, the same
 * for every host that shares the journal.
 */
sealed interface Journal extends AutoCloseable permits FileJournal, PostgresJournal {

  /** The key of the journal's argument digests. */
  byte[] key();

  /** Appends the entries, in order, and makes them durable as the store does. */
  void append(List<AuditEntry> entries) throws IOException;

  /** The latest entries the query picks, oldest first. */
  List<AuditEntry> query(AuditQuery query) throws IOException;

  @Override
  void close() throws IOException;
}
