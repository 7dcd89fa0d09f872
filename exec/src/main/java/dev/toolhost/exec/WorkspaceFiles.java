package dev.toolhost.exec;

import dev.toolhost.core.ErrorCode;
import dev.toolhost.core.ToolException;
import dev.toolhost.core.ToolResult;
import java.io.BufferedInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.channels.Channels;
import java.nio.channels.SeekableByteChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.BasicFileAttributes;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import tools.jackson.databind.json.JsonMapper;
import tools.jackson.databind.node.ArrayNode;
import tools.jackson.databind.node.ObjectNode;

/**
 * Workspace files are the file tool's operations (read, write, append, list), done in Java beneath
 * a descriptor of the session's workspace (or of a configured writable path) that {@link Beneath}
 * walks one name at a time, never following a link: a process of the same session that swaps a
 * directory of the path for a link while an operation runs makes it fail, never reach outside. A
 * file with other hard links is refused, and only regular files are read or written (a FIFO or a
 * device would block or never end). Directories a write needs are made inside the sandbox, as the
 * sandbox user; files the host makes are given to that user by descriptor.
 */
final class WorkspaceFiles {

  /** Lines a read returns when the call names no limit. */
  static final int DEFAULT_LINES = 2000;

  /** Bytes a read returns at most. */
  static final int MAX_READ_BYTES = 256 * 1024;

  /** Entries a listing shows at most. */
  static final int MAX_ENTRIES = 500;

  /** Bytes a read scans at most to find its first line. */
  private static final long MAX_SCAN_BYTES = 256L << 20;

  private final Workspaces workspaces;
  private final Sandbox sandbox;
  private final long maxFileBytes;

  WorkspaceFiles(Workspaces workspaces, Sandbox sandbox, long maxFileBytes) {
    this.workspaces = workspaces;
    this.sandbox = sandbox;
    this.maxFileBytes = maxFileBytes;
  }

  ToolResult read(Path workspace, String named, int offset, int limit) throws IOException {
    Workspaces.Location location = workspaces.locate(workspace, named);
    String name =
        location
            .name()
            .orElseThrow(
                () ->
                    ToolException.invalidArguments(
                        "'"
                            + named
                            + "' is a directory (use operation list); only regular files are"
                            + " read."));
    List<String> lines = new ArrayList<>();
    int bytes = 0;
    long scanned = 0;
    int lineNumber = 0;
    boolean more = false;
    boolean cut = false;
    BasicFileAttributes attributes;
    try (Beneath parent = open(location, named)) {
      attributes = attributes(parent, name, named);
      if (!attributes.isRegularFile()) {
        throw ToolException.invalidArguments(
            "'"
                + named
                + "' is "
                + (attributes.isDirectory()
                    ? "a directory (use operation list)"
                    : "not a regular file")
                + "; only regular files are read.");
      }
      // By path, so not race-free; the open below is. The sandbox cannot link a file it does not
      // own or cannot write (fs.protected_hardlinks), so this is defence in depth.
      Workspaces.requireSingleLink(location.path(), named);
      try (InputStream in =
          new BufferedInputStream(
              Channels.newInputStream(parent.channel(name, Set.of(StandardOpenOption.READ), named)),
              1 << 16)) {
        ByteArrayOutputStream line = new ByteArrayOutputStream();
        int b;
        boolean eof = false;
        while (!eof) {
          b = in.read();
          scanned++;
          if (b < 0) {
            eof = true;
            if (line.size() == 0) {
              break;
            }
          } else if (b != '\n') {
            if (lineNumber + 1 >= offset && line.size() < MAX_READ_BYTES) {
              line.write(b);
            }
            if (scanned > MAX_SCAN_BYTES && lineNumber + 1 < offset) {
              throw ToolException.invalidArguments(
                  "The file '"
                      + named
                      + "' has fewer than "
                      + offset
                      + " lines in its first 256 MiB.");
            }
            continue;
          }
          lineNumber++;
          if (lineNumber >= offset) {
            if (lines.isEmpty() && line.size() >= MAX_READ_BYTES) {
              // One line longer than a whole read: its start, said to be cut.
              byte[] start = line.toByteArray();
              lines.add(
                  OutputBuffer.decode(start, 0, OutputBuffer.boundaryBefore(start, start.length))
                      + " [line cut at 256 KiB]");
              more = !eof;
              break;
            }
            if (lines.size() >= limit || bytes + line.size() > MAX_READ_BYTES) {
              more = true;
              cut = bytes + line.size() > MAX_READ_BYTES;
              break;
            }
            String text = OutputBuffer.decode(line.toByteArray(), 0, line.size());
            lines.add(text);
            bytes += line.size() + 1;
          }
          line.reset();
        }
      }
    }
    if (lines.isEmpty() && offset > 1 && !more) {
      throw ToolException.invalidArguments(
          "The file '"
              + named
              + "' has "
              + lineNumber
              + " lines; offset "
              + offset
              + " is past its end.");
    }
    int last = offset + lines.size() - 1;
    StringBuilder text = new StringBuilder(String.join("\n", lines));
    if (more) {
      text.append("\n[")
          .append(cut ? "read cut at 256 KiB" : "more lines follow")
          .append(": lines ")
          .append(offset)
          .append('-')
          .append(last)
          .append(" shown; continue with offset ")
          .append(last + 1)
          .append(']');
    }
    ObjectNode structured = JsonMapper.shared().createObjectNode();
    structured.put("path", relative(workspace, location.path()));
    structured.put("offset", offset);
    structured.put("lines", lines.size());
    structured.put("size", attributes.size());
    structured.put("more", more);
    if (more) {
      structured.put("next_offset", last + 1);
    }
    return ToolResult.success(text.toString(), structured);
  }

  ToolResult write(Path workspace, String named, String content, boolean append)
      throws IOException {
    byte[] bytes = content.getBytes(StandardCharsets.UTF_8);
    if (bytes.length > maxFileBytes) {
      throw ToolException.invalidArguments(
          "The content is " + bytes.length + " bytes; the most a file may hold is " + maxFileBytes);
    }
    Workspaces.Location location = workspaces.locate(workspace, named);
    String name =
        location
            .name()
            .orElseThrow(
                () -> ToolException.invalidArguments("'" + named + "' is a directory; refused."));
    long size;
    try (Beneath parent = openMaking(location, named)) {
      boolean existed;
      long oldSize = 0;
      try {
        BasicFileAttributes attributes = parent.attributes(name);
        if (attributes.isSymbolicLink()) {
          throw ToolException.invalidArguments(
              "'" + named + "' is a symbolic link; the file tool does not follow links.");
        }
        if (!attributes.isRegularFile()) {
          throw ToolException.invalidArguments(
              "'" + named + "' exists and is not a regular file; refused.");
        }
        Workspaces.requireSingleLink(location.path(), named);
        if (append && attributes.size() + bytes.length > maxFileBytes) {
          throw ToolException.invalidArguments(
              "Appending would make '" + named + "' larger than " + maxFileBytes + " bytes.");
        }
        existed = true;
        oldSize = attributes.size();
      } catch (NoSuchFileException e) {
        existed = false;
      }
      workspaces.requireRoom(location, bytes.length);
      if (existed && append) {
        size = appendTo(parent, name, bytes, oldSize, named);
      } else if (existed) {
        size = replace(parent, name, bytes, named);
      } else {
        size = create(parent, name, bytes, named);
      }
    }
    String shown = relative(workspace, location.path());
    ObjectNode structured = JsonMapper.shared().createObjectNode();
    structured.put("path", shown);
    structured.put("bytes_written", bytes.length);
    structured.put("size", size);
    return ToolResult.success(
        (append ? "Appended " : "Wrote ")
            + bytes.length
            + " bytes to "
            + shown
            + " (now "
            + size
            + " bytes).",
        structured);
  }

  ToolResult list(Path workspace, String named) throws IOException {
    Workspaces.Location location = workspaces.locate(workspace, named);
    ArrayNode listed = JsonMapper.shared().createArrayNode();
    StringBuilder text = new StringBuilder();
    int total;
    int shown = 0;
    try (Beneath parent = open(location, named);
        Beneath directory = directory(parent, location, named)) {
      Beneath.Listing listing = directory.names(MAX_ENTRIES);
      total = listing.total();
      List<String> names = new ArrayList<>(listing.names());
      names.sort(null);
      for (String name : names) {
        BasicFileAttributes each;
        try {
          each = directory.attributes(name);
        } catch (NoSuchFileException e) {
          continue; // removed since the listing was read
        }
        shown++;
        String type =
            each.isSymbolicLink()
                ? "link"
                : each.isDirectory() ? "directory" : each.isRegularFile() ? "file" : "other";
        ObjectNode item = listed.addObject().put("name", name).put("type", type);
        text.append(name);
        switch (type) {
          case "directory" -> text.append('/');
          case "file" -> {
            item.put("size", each.size());
            text.append("  ").append(each.size()).append(" bytes");
          }
          case "link" -> text.append("  (symbolic link, not followed)");
          default -> text.append("  (not a regular file)");
        }
        text.append('\n');
      }
    }
    int leftOut = Math.max(0, total - shown);
    if (total > MAX_ENTRIES) {
      text.append("[")
          .append(total - MAX_ENTRIES)
          .append(" more entries left out; at most ")
          .append(MAX_ENTRIES)
          .append(" are listed]\n");
    }
    if (total == 0) {
      text.append("(empty directory)\n");
    }
    ObjectNode structured = JsonMapper.shared().createObjectNode();
    structured.put("path", relative(workspace, location.path()));
    structured.set("entries", listed);
    structured.put("total", total);
    structured.put("left_out", leftOut);
    return ToolResult.success(text.toString().stripTrailing(), structured);
  }

  /** The directory the location names: its parent's child, or the base itself. */
  private static Beneath directory(Beneath parent, Workspaces.Location location, String named)
      throws IOException {
    if (location.name().isEmpty()) {
      return Beneath.open(location.base(), location.directories(), named);
    }
    String name = location.name().get();
    BasicFileAttributes attributes = attributes(parent, name, named);
    if (!attributes.isDirectory()) {
      throw ToolException.invalidArguments(
          "'" + named + "' is not a directory; use operation read for a file.");
    }
    return parent.descend(name, named);
  }

  /** The directory holding the location's file (the base itself for the base). */
  private static Beneath open(Workspaces.Location location, String named) throws IOException {
    try {
      return Beneath.open(location.base(), location.directories(), named);
    } catch (NoSuchFileException e) {
      throw ToolException.invalidArguments("'" + named + "' does not exist.");
    }
  }

  /**
   * The directory holding the location's file, made when missing. The directories are made by
   * {@code mkdir -p} inside the sandbox, as the sandbox user and within its view of the file
   * system, so a race there reaches nothing the sandbox could not already write; the walk after it
   * refuses any link the race left on the way.
   */
  private Beneath openMaking(Workspaces.Location location, String named) throws IOException {
    try {
      return Beneath.open(location.base(), location.directories(), named);
    } catch (NoSuchFileException e) {
      Path missing = location.path().getParent();
      if (sandbox.contained()) {
        Execution made;
        try {
          made =
              sandbox.run(
                  Sandbox.Request.of(
                      List.of("mkdir", "-p", "--", missing.toString()),
                      location.workspace(),
                      Duration.ofSeconds(30)));
        } catch (InterruptedException interrupted) {
          Thread.currentThread().interrupt();
          throw new java.io.InterruptedIOException("interrupted while making directories");
        }
        if (made.exitCode() != 0) {
          throw ToolException.invalidArguments(
              "The directories of '"
                  + named
                  + "' cannot be made: "
                  + made.stderr().strip().replace("mkdir: ", ""));
        }
      } else {
        // Uncontained, nothing is contained: the plain way.
        Files.createDirectories(missing);
      }
      return Beneath.open(location.base(), location.directories(), named);
    }
  }

  private static BasicFileAttributes attributes(Beneath parent, String name, String named)
      throws IOException {
    try {
      BasicFileAttributes attributes = parent.attributes(name);
      if (attributes.isSymbolicLink()) {
        throw ToolException.invalidArguments(
            "'" + named + "' is a symbolic link; the file tool does not follow links.");
      }
      return attributes;
    } catch (NoSuchFileException e) {
      throw new ToolException(ErrorCode.INVALID_ARGUMENTS, "'" + named + "' does not exist.");
    }
  }

  /**
   * Makes {@code name} holding the bytes ({@code O_EXCL}: the file is this call's own, not one a
   * racing process slipped in), given to the sandbox user; removed again when the write fails, so a
   * full quota leaves nothing half-written.
   */
  private long create(Beneath parent, String name, byte[] bytes, String named) throws IOException {
    SeekableByteChannel made;
    try {
      made =
          parent.channel(
              name, Set.of(StandardOpenOption.WRITE, StandardOpenOption.CREATE_NEW), named);
    } catch (FileAlreadyExistsException e) {
      throw ToolException.invalidArguments(
          "'" + named + "' was made by another process meanwhile; try again.");
    }
    // Only a file this call made is removed when its write fails.
    try (SeekableByteChannel channel = made) {
      workspaces.own(parent, name);
      writeAll(channel, bytes);
      return channel.size();
    } catch (IOException e) {
      parent.delete(name);
      throw full(e, named);
    }
  }

  /**
   * Replaces {@code name} with a file holding the bytes: written under a name of its own, then
   * renamed over the old one in the same directory ({@code renameat}), so a failed write leaves the
   * old content whole.
   */
  private long replace(Beneath parent, String name, byte[] bytes, String named) throws IOException {
    String staged = ".toolhost-write-" + UUID.randomUUID();
    long size = create(parent, staged, bytes, named);
    try {
      parent.rename(staged, name);
    } catch (IOException e) {
      parent.delete(staged);
      throw e;
    }
    return size;
  }

  /** Appends the bytes; a failed append is cut back to the old size. */
  private long appendTo(Beneath parent, String name, byte[] bytes, long oldSize, String named)
      throws IOException {
    try (SeekableByteChannel channel =
        parent.channel(name, Set.of(StandardOpenOption.WRITE, StandardOpenOption.APPEND), named)) {
      try {
        writeAll(channel, bytes);
      } catch (IOException e) {
        channel.truncate(oldSize);
        throw full(e, named);
      }
      return channel.size();
    }
  }

  private static void writeAll(SeekableByteChannel channel, byte[] bytes) throws IOException {
    ByteBuffer buffer = ByteBuffer.wrap(bytes);
    while (buffer.hasRemaining()) {
      channel.write(buffer);
    }
  }

  /** A write the disk refused: past the workspace's quota, said so; anything else as it is. */
  private IOException full(IOException e, String named) {
    if (String.valueOf(e.getMessage()).contains("No space left")) {
      throw ToolException.invalidArguments(
          "The write to '"
              + named
              + "' does not fit in the workspace's quota ("
              + (workspaces.quotaBytes() >> 20)
              + " MiB); nothing was changed. Remove files first.");
    }
    return e;
  }

  private static String relative(Path workspace, Path path) {
    String relative =
        path.startsWith(workspace) ? workspace.relativize(path).toString() : path.toString();
    return relative.isEmpty() ? "." : relative;
  }
}
