package dev.toolhost.longterm;

import java.nio.file.Path;
import org.junit.jupiter.api.io.TempDir;

class LuceneMemoryStoreTest extends MemoryStoreContract {

  @TempDir Path directory;

  @Override
  MemoryStore open() {
    return LuceneMemoryStore.open(directory.resolve("index"));
  }

  @Override
  void wipe() {
    // Each test has a directory of its own.
  }
}
