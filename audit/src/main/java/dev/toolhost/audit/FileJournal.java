package dev.toolhost.audit;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.OverlappingFileLockException;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.SecureRandom;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.time.format.DateTimeParseException;
import java.time.temporal.ChronoUnit;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.Deque;
import java.util.List;
import java.util.stream.Stream;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import tools.jackson.core.JacksonException;
import tools.jackson.databind.json.JsonMapper;

/**
 * A file journal keeps audit entries as JSON lines in a directory of one host: {@code audit.jsonl}
 * is written; past its size it is renamed {@code audit-TIME.jsonl} and a new one begun, and the
 * oldest rotated files past the number kept are deleted. The directory is the host's alone (a lock
 * file says so; a second host on it fails to start naming it), readable by its owner only, and
 * holds the digest key ({@code digest.key}).
 *
 * <p>Each batch is written and flushed to the operating system before the writer takes the next: a
 * host that dies loses no line already flushed; a machine that loses power may lose the last ones
 * the disk had not written (no {@code fsync} per batch, which would bound the host's calls per
 * second by the disk's).
 *
 * <p>Rotation is written by hand: the rule is two lines (size past the limit, keep the newest N),
 * and a logging framework's rolling appender would bring a logger's formatting and its own
 * configuration to what must be exactly one JSON object per line.
 */
final class FileJournal implements Journal {

  private static final Logger LOG = LoggerFactory.getLogger(FileJournal.class);
  private static final JsonMapper MAPPER = JsonMapper.shared();
  private static final String CURRENT = "audit.jsonl";
  private static final String ROTATED_PREFIX = "audit-";
  private static final DateTimeFormatter ROTATED_TIME =
      DateTimeFormatter.ofPattern("yyyyMMdd'T'HHmmssSSS'Z'").withZone(ZoneOffset.UTC);

  private final Path directory;
  private final long maxFileBytes;
  private final int keepFiles;
  private final FileChannel lockChannel;
  private final FileLock lock;
  private final byte[] key;
  private OutputStream out;
  private long size;
  private Instant lastRotated;

  private FileJournal(
      Path directory, long maxFileBytes, int keepFiles, FileChannel lockChannel, FileLock lock)
      throws IOException {
    this.directory = directory;
    this.maxFileBytes = maxFileBytes;
    this.keepFiles = keepFiles;
    this.lockChannel = lockChannel;
    this.lock = lock;
    this.key = key(directory.resolve("digest.key"));
    this.lastRotated = newestRotation(directory);
    open();
  }

  /**
   * Opens the journal in the directory, made if missing.
   *
   * @throws IOException when the directory cannot be made or written, or another host holds it
   */
  static FileJournal open(Path directory, long maxFileBytes, int keepFiles) throws IOException {
    Files.createDirectories(directory);
    if (!Files.isWritable(directory)) {
      throw new IOException("the audit journal's directory " + directory + " is not writable");
    }
    Files.setPosixFilePermissions(directory, PosixFilePermissions.fromString("rwx------"));
    FileChannel channel =
        FileChannel.open(
            directory.resolve("audit.lock"), StandardOpenOption.CREATE, StandardOpenOption.WRITE);
    FileLock lock;
    try {
      lock = channel.tryLock();
    } catch (OverlappingFileLockException e) {
      lock = null; // This process's other host holds it.
    } catch (IOException | RuntimeException e) {
      channel.close();
      throw e;
    }
    if (lock == null) {
      channel.close();
      throw new IOException(
          "another host writes the audit journal in "
              + directory
              + ": give each host its own audit.state_dir, or share a JDBC store");
    }
    try {
      return new FileJournal(directory, maxFileBytes, keepFiles, channel, lock);
    } catch (IOException | RuntimeException e) {
      lock.release();
      channel.close();
      throw e;
    }
  }

  private void open() throws IOException {
    Path current = directory.resolve(CURRENT);
    out =
        Files.newOutputStream(create(current), StandardOpenOption.APPEND, StandardOpenOption.WRITE);
    size = Files.size(current);
  }

  // The file, made readable and writable by its owner only if it is new.
  private static Path create(Path file) throws IOException {
    try {
      Files.createFile(
          file, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")));
    } catch (FileAlreadyExistsException e) {
      // Appended to.
    }
    return file;
  }

  private static byte[] key(Path file) throws IOException {
    try {
      byte[] key = Files.readAllBytes(file);
      if (key.length >= 32) {
        return key;
      }
      throw new IOException(
          "the audit journal's digest key " + file + " is shorter than 32 bytes: remove it");
    } catch (NoSuchFileException e) {
      byte[] key = new byte[32];
      new SecureRandom().nextBytes(key);
      Files.write(create(file), key);
      return key;
    }
  }

  @Override
  public byte[] key() {
    return key.clone();
  }

  @Override
  public synchronized void append(List<AuditEntry> entries) throws IOException {
    StringBuilder lines = new StringBuilder(entries.size() * 320);
    for (AuditEntry entry : entries) {
      lines.append(entry.toJson()).append('\n');
    }
    byte[] bytes = lines.toString().getBytes(StandardCharsets.UTF_8);
    out.write(bytes);
    out.flush();
    size += bytes.length;
    if (size >= maxFileBytes) {
      rotate();
    }
  }

  // The rotated file's time is strictly after the last one's, so two rotations in one millisecond,
  // or a clock set back, still give names that are new and sort by age.
  private void rotate() throws IOException {
    out.close();
    Instant at = Instant.now().truncatedTo(ChronoUnit.MILLIS);
    if (!at.isAfter(lastRotated)) {
      at = lastRotated.plusMillis(1);
    }
    try {
      Files.move(
          directory.resolve(CURRENT),
          directory.resolve(ROTATED_PREFIX + ROTATED_TIME.format(at) + ".jsonl"));
      lastRotated = at;
    } finally {
      open(); // A failed rename leaves the current file to be appended to, not a closed stream.
    }
    List<Path> old = rotated(directory);
    for (int i = keepFiles; i < old.size(); i++) {
      Files.deleteIfExists(old.get(i));
    }
  }

  // The time in the newest rotated file's name, or the epoch when there is none.
  private static Instant newestRotation(Path directory) throws IOException {
    for (Path file : rotated(directory)) {
      String name = file.getFileName().toString();
      try {
        return ROTATED_TIME.parse(
            name.substring(ROTATED_PREFIX.length(), name.length() - ".jsonl".length()),
            Instant::from);
      } catch (DateTimeParseException e) {
        // Not a name this journal wrote; the next one may be.
      }
    }
    return Instant.EPOCH;
  }

  // The rotated files, newest first: their names sort by time.
  private static List<Path> rotated(Path directory) throws IOException {
    try (Stream<Path> files = Files.list(directory)) {
      return files
          .filter(
              file -> {
                String name = file.getFileName().toString();
                return name.startsWith(ROTATED_PREFIX) && name.endsWith(".jsonl");
              })
          .sorted(Comparator.comparing(Path::toString).reversed())
          .toList();
    }
  }

  /**
   * The latest entries the query picks, read newest file first until the limit is met. A line that
   * does not parse (a journal cut short by a full disk) is skipped and logged, never fatal.
   */
  @Override
  public List<AuditEntry> query(AuditQuery query) throws IOException {
    return read(directory, query);
  }

  /**
   * The latest entries the query picks from the journal in the directory, as {@link #query} reads
   * them, without its writer's lock: for a reader beside the host that writes it.
   */
  static List<AuditEntry> read(Path directory, AuditQuery query) throws IOException {
    List<Path> files = new ArrayList<>();
    files.add(directory.resolve(CURRENT));
    files.addAll(rotated(directory));
    Deque<AuditEntry> latest = new ArrayDeque<>();
    for (Path file : files) {
      Deque<AuditEntry> inFile = new ArrayDeque<>();
      try (BufferedReader reader = Files.newBufferedReader(file, StandardCharsets.UTF_8)) {
        String line;
        while ((line = reader.readLine()) != null) {
          if (line.isBlank()) {
            continue;
          }
          AuditEntry entry;
          try {
            entry = AuditEntry.fromJson(MAPPER.readTree(line));
          } catch (JacksonException | IllegalArgumentException e) {
            LOG.warn("Skipped a line of the audit journal {} that does not parse", file);
            continue;
          }
          if (query.matches(entry)) {
            inFile.addLast(entry);
            if (inFile.size() > query.limit() - latest.size()) {
              inFile.removeFirst();
            }
          }
        }
      } catch (NoSuchFileException e) {
        continue; // Rotated away while this query read.
      }
      while (!inFile.isEmpty()) {
        latest.addFirst(inFile.removeLast());
      }
      if (latest.size() >= query.limit()) {
        break;
      }
    }
    return List.copyOf(latest);
  }

  @Override
  public synchronized void close() throws IOException {
    try {
      out.close();
    } finally {
      lock.release();
      lockChannel.close();
    }
  }
}
