package dev.toolhost.exec;

import dev.toolhost.core.ErrorCode;
import dev.toolhost.core.ToolException;
import dev.toolhost.core.ToolResult;
import java.io.BufferedInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.channels.Channels;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.OpenOption;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import tools.jackson.databind.json.JsonMapper;
import tools.jackson.databind.node.ArrayNode;
import tools.jackson.databind.node.ObjectNode;

/**
 * Workspace files are the file tool's operations (read, write, append, list), done in Java on paths
 * {@link Workspaces} has checked, never following a link: every open is {@code NOFOLLOW_LINKS}, a
 * file with other hard links is refused, and only regular files are read or written (a FIFO or a
 * device would block or never end).
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
  private final long maxFileBytes;

  WorkspaceFiles(Workspaces workspaces, long maxFileBytes) {
    this.workspaces = workspaces;
    this.maxFileBytes = maxFileBytes;
  }

  ToolResult read(Path workspace, String named, int offset, int limit) throws IOException {
    Path path = workspaces.file(workspace, named);
    BasicFileAttributes attributes = attributes(path, named);
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
    Workspaces.requireSingleLink(path, named);
    List<String> lines = new ArrayList<>();
    int bytes = 0;
    long scanned = 0;
    int lineNumber = 0;
    boolean more = false;
    boolean cut = false;
    try (InputStream in =
        new BufferedInputStream(
            Channels.newInputStream(
                FileChannel.open(path, StandardOpenOption.READ, LinkOption.NOFOLLOW_LINKS)),
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
    structured.put("path", workspace.relativize(path).toString());
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
    Path path = workspaces.file(workspace, named);
    if (Files.exists(path, LinkOption.NOFOLLOW_LINKS)) {
      BasicFileAttributes attributes = attributes(path, named);
      if (!attributes.isRegularFile()) {
        throw ToolException.invalidArguments(
            "'" + named + "' exists and is not a regular file; refused.");
      }
      Workspaces.requireSingleLink(path, named);
      if (append && attributes.size() + bytes.length > maxFileBytes) {
        throw ToolException.invalidArguments(
            "Appending would make '" + named + "' larger than " + maxFileBytes + " bytes.");
      }
    }
    makeParents(workspace, path.getParent());
    Set<OpenOption> options =
        Set.of(
            StandardOpenOption.WRITE,
            StandardOpenOption.CREATE,
            append ? StandardOpenOption.APPEND : StandardOpenOption.TRUNCATE_EXISTING,
            LinkOption.NOFOLLOW_LINKS);
    boolean existed = Files.exists(path, LinkOption.NOFOLLOW_LINKS);
    try (FileChannel channel = FileChannel.open(path, options);
        OutputStream out = Channels.newOutputStream(channel)) {
      out.write(bytes);
    }
    if (!existed) {
      workspaces.own(path);
    }
    ObjectNode structured = JsonMapper.shared().createObjectNode();
    structured.put("path", relative(workspace, path));
    structured.put("bytes_written", bytes.length);
    structured.put("size", Files.size(path));
    return ToolResult.success(
        (append ? "Appended " : "Wrote ")
            + bytes.length
            + " bytes to "
            + relative(workspace, path)
            + " (now "
            + Files.size(path)
            + " bytes).",
        structured);
  }

  ToolResult list(Path workspace, String named) throws IOException {
    Path path = workspaces.file(workspace, named);
    BasicFileAttributes attributes = attributes(path, named);
    if (!attributes.isDirectory()) {
      throw ToolException.invalidArguments(
          "'" + named + "' is not a directory; use operation read for a file.");
    }
    List<Path> entries = new ArrayList<>();
    int total = 0;
    try (DirectoryStream<Path> stream = Files.newDirectoryStream(path)) {
      for (Path entry : stream) {
        total++;
        if (entries.size() < MAX_ENTRIES) {
          entries.add(entry);
        }
      }
    }
    entries.sort(null);
    ArrayNode listed = JsonMapper.shared().createArrayNode();
    StringBuilder text = new StringBuilder();
    for (Path entry : entries) {
      BasicFileAttributes each =
          Files.readAttributes(entry, BasicFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
      String type =
          each.isSymbolicLink()
              ? "link"
              : each.isDirectory() ? "directory" : each.isRegularFile() ? "file" : "other";
      String name = entry.getFileName().toString();
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
    if (total > entries.size()) {
      text.append("[")
          .append(total - entries.size())
          .append(" more entries left out; at most ")
          .append(MAX_ENTRIES)
          .append(" are listed]\n");
    }
    if (total == 0) {
      text.append("(empty directory)\n");
    }
    ObjectNode structured = JsonMapper.shared().createObjectNode();
    structured.put("path", relative(workspace, path));
    structured.set("entries", listed);
    structured.put("total", total);
    structured.put("left_out", total - entries.size());
    return ToolResult.success(text.toString().stripTrailing(), structured);
  }

  private void makeParents(Path workspace, Path directory) throws IOException {
    if (directory == null || Files.isDirectory(directory, LinkOption.NOFOLLOW_LINKS)) {
      return;
    }
    if (Files.exists(directory, LinkOption.NOFOLLOW_LINKS)) {
      throw ToolException.invalidArguments(
          "'" + relative(workspace, directory) + "' exists and is not a directory.");
    }
    makeParents(workspace, directory.getParent());
    Files.createDirectory(directory);
    workspaces.own(directory);
  }

  private static BasicFileAttributes attributes(Path path, String named) throws IOException {
    try {
      BasicFileAttributes attributes =
          Files.readAttributes(path, BasicFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
      if (attributes.isSymbolicLink()) {
        throw ToolException.invalidArguments(
            "'" + named + "' is a symbolic link; the file tool does not follow links.");
      }
      return attributes;
    } catch (java.nio.file.NoSuchFileException e) {
      throw new ToolException(ErrorCode.INVALID_ARGUMENTS, "'" + named + "' does not exist.");
    }
  }

  private static String relative(Path workspace, Path path) {
    return path.startsWith(workspace) ? workspace.relativize(path).toString() : path.toString();
  }
}
